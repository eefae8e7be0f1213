//! Concurrency stress: 8 threads × 50 submits of two different sectors' C2, each cancelled at a
//! random moment (before synthesis, during it, waiting for the prover, while proving) except one
//! per thread that runs to the end. Every job must end, none may be lost or handed to another
//! request, every finished proof must verify for its own sector, and the memory budget must
//! return to zero once the deallocator is done.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use rand::{Rng, SeedableRng};

const THREADS: usize = 8;
const SUBMITS: usize = 50;

#[test]
fn eight_threads_fifty_submits_random_cancels() {
    let f = common::fixture();
    let (other, other_c1) = common::other_sector();
    let sectors = Arc::new([(f.sector.clone(), f.c1.clone()), (other, other_c1)]);
    let engine = Arc::new(
        Engine::new(EngineConfig { params_dir: Some(f.params_dir.clone()), synthesis_workers: 2, ..Default::default() }).unwrap(),
    );
    engine.srs_load(common::PROOF, None).unwrap();

    let t0 = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (engine, sectors) = (engine.clone(), sectors.clone());
            std::thread::spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(t as u64);
                let mut mine = Vec::new();
                for i in 0..SUBMITS {
                    let which = (t + i) % 2;
                    let (sector, c1) = &sectors[which];
                    let rid = format!("t{t}-s{i}");
                    let req = || SubmitRequest {
                        c1_json: c1,
                        sector_id: sector.sector_id,
                        prover_id: sector.prover_id,
                        priority: rng_priority(t, i),
                        request_id: Some(rid.clone()),
                    };
                    let id = engine.submit(req()).expect("submit");
                    assert_eq!(engine.submit(req()).expect("resubmit"), id, "{rid}: same request, other job");
                    let keep = i == SUBMITS / 2;
                    if !keep {
                        let pause = match rng.gen_range(0..4) {
                            0 => 0,
                            1 => rng.gen_range(0..50),
                            _ => rng.gen_range(100..1500),
                        };
                        std::thread::sleep(Duration::from_millis(pause));
                        engine.cancel(id).expect("cancel");
                    }
                    mine.push((id, which, keep, rid));
                }
                mine
            })
        })
        .collect();
    let jobs: Vec<(u64, usize, bool, String)> = workers.into_iter().flat_map(|w| w.join().expect("worker thread")).collect();

    assert_eq!(jobs.len(), THREADS * SUBMITS);
    let ids: HashSet<u64> = jobs.iter().map(|j| j.0).collect();
    assert_eq!(ids.len(), jobs.len(), "two requests were given the same job");
    let (mut done, mut cancelled) = (0, 0);
    for (id, which, keep, rid) in &jobs {
        let snap = engine.wait(*id, Some(Duration::from_secs(900))).expect("every job ends");
        match snap.state {
            JobState::Done => {
                done += 1;
                let proof = &snap.result.expect("result").proof;
                assert!(common::filecoin_verify_sector(&sectors[*which].0, proof), "{rid}: proof does not verify for its own sector");
                assert!(!common::filecoin_verify_sector(&sectors[1 - which].0, proof), "{rid}: proof verifies for the other sector");
            }
            JobState::Cancelled => {
                assert!(!keep, "{rid} was never cancelled");
                cancelled += 1;
            }
            other => panic!("{rid}: job {id} ended {other:?}: {:?}", snap.error),
        }
    }
    assert!(done >= THREADS, "only {done} jobs finished");
    eprintln!("stress: {done} done, {cancelled} cancelled in {:?}", t0.elapsed());

    let memory = || -> serde_json::Value { serde_json::from_str::<serde_json::Value>(&engine.status_json()).unwrap()["memory"].clone() };
    let t = Instant::now();
    while memory()["reserved_bytes"].as_u64() != Some(0) || memory()["partitions_holding"].as_u64() != Some(0) {
        assert!(t.elapsed() < Duration::from_secs(60), "memory never given back: {}", memory());
        std::thread::sleep(Duration::from_millis(50));
    }
    let status: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap();
    assert_eq!(status["totals"]["submitted"].as_u64(), Some((THREADS * SUBMITS) as u64), "{status}");
    assert_eq!(status["totals"]["done"].as_u64(), Some(done as u64), "{status}");
    assert_eq!(status["totals"]["cancelled"].as_u64(), Some(cancelled as u64), "{status}");
}

/// Mixed priorities, so the queue reorders.
fn rng_priority(t: usize, i: usize) -> i32 {
    ((t * 31 + i * 7) % 3) as i32
}
