//! The prover-lane mechanism without a GPU: a CPU backend with two lanes proves two real 2 KiB
//! C2 jobs at the same time (both lanes proving at one moment, each one partition), every proof
//! verifies with filecoin-proofs, and status and metrics report each lane; and a WinningPoSt
//! submitted while the only lane proves a C2 partition is proved at once by the urgent prover.

mod common;

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState, Submission};
use cuzk::kinds::{ProofRequest, RegisteredPoStProof};

fn status(engine: &Engine) -> serde_json::Value {
    serde_json::from_str(&engine.status_json()).unwrap()
}

/// The backend's lanes (not the urgent prover's).
fn bulk(lanes: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    lanes.as_array().unwrap().iter().filter(|l| l["urgent"] == false)
}

#[test]
fn two_cpu_lanes_prove_two_jobs_at_once() {
    let f = common::fixture();
    let one = Engine::new(EngineConfig { backend: "cpu".into(), ..Default::default() }).unwrap();
    let lanes = status(&one)["prover_lanes"].clone();
    assert_eq!(lanes.as_array().map(Vec::len), Some(2), "default: one CPU lane, and the urgent prover's: {lanes}");
    assert_eq!((&lanes[0]["urgent"], &lanes[1]["urgent"]), (&false.into(), &true.into()), "{lanes}");
    drop(one);

    let engine = Engine::new(EngineConfig {
        backend: "cpu".into(),
        cpu_lanes: 2,
        synthesis_workers: 2,
        params_dir: Some(f.params_dir.clone()),
        ..Default::default()
    })
    .unwrap();
    engine.srs_load(common::PROOF, None).unwrap();
    let ids = [common::submit(&engine, &f), common::submit(&engine, &f)];

    // Both lanes proving at one moment (a 2 KiB CPU proof takes seconds; polled every 20 ms).
    let t = Instant::now();
    let mut overlapped = false;
    while !overlapped && ids.iter().any(|&id| !engine.poll(id).unwrap().state.is_final()) {
        let lanes = status(&engine)["prover_lanes"].clone();
        overlapped = bulk(&lanes).all(|l| l["proving"] == true);
        assert!(t.elapsed() < Duration::from_secs(900), "jobs did not finish: {lanes}");
        std::thread::sleep(Duration::from_millis(20));
    }
    for id in ids {
        let snap = engine.wait(id, None).unwrap();
        assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
        assert!(common::filecoin_verify(&f, &snap.result.unwrap().proof), "job {id:?}'s proof does not verify");
    }
    let s = status(&engine);
    assert!(overlapped, "the two lanes never proved at the same time: {}", s["prover_lanes"]);
    for l in bulk(&s["prover_lanes"]) {
        assert_eq!((l["partitions"].as_u64(), l["failures"].as_u64(), &l["proving"]), (Some(1), Some(0), &false.into()), "{l}");
        assert!(l["busy_s"].as_f64().unwrap() > 0.0 && l["busy_fraction"].as_f64().unwrap() > 0.0, "{l}");
    }
    let urgent = &s["prover_lanes"][2];
    assert_eq!((&urgent["urgent"], urgent["partitions"].as_u64()), (&true.into(), Some(0)), "C2 is no urgent work: {urgent}");
    assert!(s["memory"]["budget_source"].is_string(), "{}", s["memory"]);
    let m = engine.metrics_text();
    for line in ["cuzk_prover_lane_partitions_total{lane=\"1\",outcome=\"ok\"} 1", "cuzk_prover_lane_proving{lane=\"0\"} 0"] {
        assert!(m.contains(line), "metrics lack {line:?}:\n{m}");
    }
    assert!(m.contains("# TYPE cuzk_prover_lane_busy_seconds_total counter"), "{m}");
}

#[test]
fn a_winning_post_is_proved_beside_a_busy_lane() {
    let f = common::fixture();
    let _ = common::kind_fixtures(); // the 2 KiB PoSt params beside the C2 ones
    let engine = Engine::new(EngineConfig { backend: "cpu".into(), params_dir: Some(f.params_dir.clone()), ..Default::default() }).unwrap();
    engine.srs_load(common::PROOF, None).unwrap();
    engine.srs_load(RegisteredPoStProof::StackedDrgWinning2KiBV1, None).unwrap();
    let winning = cuzk::fixtures::cc_post(RegisteredPoStProof::StackedDrgWinning2KiBV1, 1, 33).unwrap();

    let c2 = common::submit(&engine, &f);
    let t = Instant::now();
    while status(&engine)["prover_lanes"][0]["proving"] != true {
        assert!(!engine.poll(c2).unwrap().state.is_final() && t.elapsed() < Duration::from_secs(600), "the C2 partition never reached the lane");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The only lane proves the C2 partition (seconds on the CPU); the WinningPoSt, at its kind's
    // default priority, does not wait for it.
    let id = engine.submit_proof(Submission { request: ProofRequest::WinningPoSt(winning.request()), priority: None, request_id: None }).unwrap();
    let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    let c2_state = engine.poll(c2).unwrap().state;
    let proof = &snap.result.unwrap().proof;
    let ok = filecoin_proofs_api::post::verify_winning_post(&winning.randomness, proof, &common::replicas(&winning), winning.prover_id);
    assert!(ok.unwrap(), "filecoin-proofs rejects the WinningPoSt");
    assert!(!c2_state.is_final(), "the C2 job ended before the WinningPoSt: nothing was shown");
    // Lane 1 is the urgent prover's, which takes only priority work: it proved the WinningPoSt.
    // (Lane 0's count is not checked: it may finish the C2 partition any moment now.)
    let lanes = status(&engine)["prover_lanes"].clone();
    assert_eq!((&lanes[1]["urgent"], lanes[1]["partitions"].as_u64()), (&true.into(), Some(1)), "the urgent prover proved it: {lanes}");
    let snap = engine.wait(c2, None).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    assert!(common::filecoin_verify(&f, &snap.result.unwrap().proof), "the C2 proof does not verify");
}
