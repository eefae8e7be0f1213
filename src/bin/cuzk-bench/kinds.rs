//! `cuzk-bench kinds [--runs N] [--c2-jobs M] [--no-upstream] [--vram-budget-mib B]`: each proof
//! kind at 2 KiB through the cuzk engine (backend auto: CUDA where built with it and a device is
//! usable; B MiB of device memory if given, so every kind's SRS shares a small card's budget) vs
//! filecoin-proofs' `*_with_vanilla` on the same inputs, interleaved; then WinningPoSt latency
//! alone and while M C2 jobs (submitted first) keep the engine busy. The supraseal-c2 peer of the
//! GPU machine is `supraseal-c2-bench kinds` on the same fixtures (benches/supraseal).

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobResult, JobState, SubmitRequest, Submission};
use cuzk::fixtures::{self, KindFixtures};
use cuzk::kinds::ProofRequest;

/// filecoin-proofs' own prover on the same inputs.
fn upstream(name: &str, k: &KindFixtures) -> Vec<u8> {
    use filecoin_proofs_api::{post, update, PartitionProofBytes};
    let r = match name {
        "winning_post" => post::generate_winning_post_with_vanilla(k.winning.proof, &k.winning.randomness, k.winning.prover_id, &k.winning.vanilla_proofs)
            .map(|mut v| v.remove(0).1),
        "window_post" => post::generate_window_post_with_vanilla(k.window.proof, &k.window.randomness, k.window.prover_id, &k.window.vanilla_proofs)
            .map(|mut v| v.remove(0).1),
        _ => {
            let u = &k.update;
            let parts = u.vanilla_proofs.iter().cloned().map(PartitionProofBytes).collect();
            update::generate_empty_sector_update_proof_with_vanilla(u.proof, parts, u.comm_r_old, u.comm_r_new, u.comm_d_new).map(|p| p.0)
        }
    };
    r.expect("filecoin-proofs prover")
}

fn prove(engine: &Engine, request: ProofRequest<'_>) -> (Duration, std::sync::Arc<JobResult>) {
    let t = Instant::now();
    let id = engine.submit_proof(Submission { request, priority: None, request_id: None }).expect("submit");
    let snap = engine.wait(id, None).expect("wait");
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    (t.elapsed(), snap.result.expect("result"))
}

/// Until no circuit is being recorded (at most 300 s); prints each circuit's state.
fn wait_recordings(engine: &Engine) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(300) {
        let st: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap_or_default();
        let circuits: Vec<(String, String)> = st["circuits"]
            .as_array()
            .map(|c| c.iter().map(|x| (x["registered_proof"].as_str().unwrap_or("").to_owned(), x["state"].as_str().unwrap_or("").to_owned())).collect())
            .unwrap_or_default();
        if !circuits.iter().any(|(_, state)| state == "recording") {
            println!("circuits {circuits:?} after {:.1} s", t.elapsed().as_secs_f64());
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(runs: usize, c2_jobs: usize, with_upstream: bool, vram_budget_mib: u64) {
    let root = fixtures::default_root();
    let params_dir = fixtures::params_dir(&root);
    // filecoin-proofs reads its params from here (set before its first use).
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
    let k = fixtures::ensure_kind_fixtures_and_params(&root, fixtures::DEFAULT_SEED).expect("kind fixtures");
    let config = EngineConfig { params_dir: Some(params_dir.clone()), vram_budget_mib, ..Default::default() };
    let engine = Engine::new(config).expect("engine");
    for c in k.circuits() {
        engine.srs_load(c, None).expect("srs");
    }
    let mut summary = serde_json::Map::new();
    summary.insert("backend".into(), engine.backend_name().into());
    println!("backend: {}", engine.backend_name());
    for (i, (name, _)) in k.requests().into_iter().enumerate() {
        let _ = prove(&engine, k.requests().into_iter().nth(i).unwrap().1); // warm: the first use of this SRS on the device
        // A running node has every kind's circuit recorded: wait for this one's recording (begun
        // by the warm-up job), or the first timed runs are full synthesis beside it.
        wait_recordings(&engine);
        if with_upstream {
            let _ = upstream(name, &k); // warm filecoin-proofs' params cache: its first call reads the file
        }
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            ours.push(prove(&engine, k.requests().into_iter().nth(i).unwrap().1).0.as_secs_f64());
            if with_upstream {
                let t = Instant::now();
                let _ = upstream(name, &k);
                theirs.push(t.elapsed().as_secs_f64());
            }
        }
        let o = median(&mut ours);
        if with_upstream {
            let t = median(&mut theirs);
            println!("{name}: cuzk {o:.3} s (proved + verified), filecoin-proofs {t:.3} s (proved), ratio {:.2}x", t / o);
            summary.insert(name.into(), serde_json::json!({"cuzk_s": o, "filecoin_proofs_s": t, "speedup": t / o, "runs": runs}));
        } else {
            println!("{name}: cuzk {o:.3} s (proved + verified, median of {runs})");
            summary.insert(name.into(), serde_json::json!({"cuzk_s": o, "runs": runs}));
        }
    }

    // WinningPoSt alone, then while C2 jobs (submitted first, at their default priority) fill
    // the engine: `runs` WinningPoSts one after another, each submitted with C2 work queued.
    let f = (fixtures::ensure_params(&root, RegisteredProof, fixtures::DEFAULT_SEED), fixtures::ensure_sector(&root, RegisteredProof, fixtures::DEFAULT_SEED));
    let sector = f.1.expect("sector");
    engine.srs_load(RegisteredProof, Some(&f.0.expect("params"))).expect("c2 srs");
    let c1 = sector.c1_json().expect("c1");
    let winning = || k.requests().into_iter().next().unwrap().1;
    let c2 = || {
        engine
            .submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None })
            .expect("c2 submit")
    };
    let _ = engine.wait(c2(), None); // warm the C2 path: it starts recording the circuit
    // A running node has the circuit recorded: wait for it, or the C2 load is full synthesis.
    wait_recordings(&engine);
    let mut alone: Vec<f64> = (0..runs).map(|_| prove(&engine, winning()).0.as_secs_f64()).collect();
    let alone = median(&mut alone);
    let unfinished = |ids: &[u64]| ids.iter().filter(|id| !engine.poll(**id).map(|s| s.state.is_final()).unwrap_or(true)).count();
    let t0 = Instant::now();
    let ids: Vec<u64> = (0..c2_jobs).map(|_| c2()).collect();
    let mut behind = Vec::new();
    for _ in 0..runs {
        std::thread::sleep(Duration::from_millis(300)); // C2 partitions in synthesis and queued for the prover
        let queued = unfinished(&ids);
        let (latency, r) = prove(&engine, winning());
        let t = &r.timings;
        println!(
            "winning_post behind {queued} unfinished C2 jobs: {:.3} s (queue {:.3}, synthesis {:.3}, prove queue {:.3}, prove {:.3}, verify {:.3}); {} C2 still unfinished",
            latency.as_secs_f64(),
            t.queue.as_secs_f64(),
            t.synthesis.as_secs_f64(),
            t.prove_queue.as_secs_f64(),
            t.prove.as_secs_f64(),
            t.verify.as_secs_f64(),
            unfinished(&ids)
        );
        behind.push(serde_json::json!({"c2_unfinished_at_submit": queued, "latency_s": latency.as_secs_f64(), "c2_unfinished_at_done": unfinished(&ids),
            "queue_s": t.queue.as_secs_f64(), "prove_queue_s": t.prove_queue.as_secs_f64(), "prove_s": t.prove.as_secs_f64()}));
    }
    for id in &ids {
        let _ = engine.wait(*id, None);
    }
    let c2_wall = t0.elapsed().as_secs_f64();
    let mut lat: Vec<f64> = behind.iter().map(|b| b["latency_s"].as_f64().unwrap()).collect();
    let lat = median(&mut lat);
    println!("winning_post latency: alone {alone:.3} s, behind {c2_jobs} C2 jobs median {lat:.3} s; the C2 jobs took {c2_wall:.2} s ({:.3} s per proof with the WinningPoSts among them)", c2_wall / c2_jobs.max(1) as f64);
    summary.insert(
        "winning_behind_c2".into(),
        serde_json::json!({"alone_s": alone, "behind_median_s": lat, "c2_jobs": c2_jobs, "c2_wall_s": c2_wall, "samples": behind}),
    );
    // The devices as the engine reports them: budget, page-locked host memory, PCIe bytes.
    let st: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap_or_default();
    summary.insert("vram_budget_mib".into(), vram_budget_mib.into());
    summary.insert("devices".into(), st["devices"].clone());
    println!("{}", serde_json::Value::Object(summary));
}

#[allow(non_upper_case_globals)]
const RegisteredProof: cuzk::kinds::registry::RegisteredSealProof = cuzk::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1;
