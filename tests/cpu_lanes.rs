//! The prover-lane mechanism without a GPU: a CPU backend with two lanes proves two real 2 KiB
//! C2 jobs at the same time (both lanes proving at one moment, each one partition), every proof
//! verifies with filecoin-proofs, and status and metrics report each lane.

mod common;

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState};

fn status(engine: &Engine) -> serde_json::Value {
    serde_json::from_str(&engine.status_json()).unwrap()
}

#[test]
fn two_cpu_lanes_prove_two_jobs_at_once() {
    let f = common::fixture();
    let one = Engine::new(EngineConfig { backend: "cpu".into(), ..Default::default() }).unwrap();
    assert_eq!(status(&one)["prover_lanes"].as_array().map(Vec::len), Some(1), "default: one CPU lane");
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
        overlapped = lanes.as_array().unwrap().iter().all(|l| l["proving"] == true);
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
    for l in s["prover_lanes"].as_array().unwrap() {
        assert_eq!((l["partitions"].as_u64(), l["failures"].as_u64(), &l["proving"]), (Some(1), Some(0), &false.into()), "{l}");
        assert!(l["busy_s"].as_f64().unwrap() > 0.0 && l["busy_fraction"].as_f64().unwrap() > 0.0, "{l}");
    }
    assert!(s["memory"]["budget_source"].is_string(), "{}", s["memory"]);
    let m = engine.metrics_text();
    for line in ["cuzk_prover_lane_partitions_total{lane=\"1\",outcome=\"ok\"} 1", "cuzk_prover_lane_proving{lane=\"0\"} 0"] {
        assert!(m.contains(line), "metrics lack {line:?}:\n{m}");
    }
    assert!(m.contains("# TYPE cuzk_prover_lane_busy_seconds_total counter"), "{m}");
}
