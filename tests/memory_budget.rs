//! The memory budget with real 2 KiB jobs: with room for less than one partition, two jobs
//! still both prove and verify, but one after the other — never two partitions holding memory
//! at once — and the room is given back once the deallocator has freed the buffers.

mod common;

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState};

fn memory(engine: &Engine) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap();
    v["memory"].clone()
}

#[test]
fn partitions_wait_for_room_and_give_it_back() {
    let f = common::fixture();
    let auto = Engine::new(EngineConfig::default()).unwrap();
    assert!(memory(&auto)["budget_bytes"].as_u64().unwrap() > 0, "automatic budget is zero");
    drop(auto);

    let engine = Engine::new(EngineConfig {
        params_dir: Some(f.params_dir.clone()),
        memory_budget_mib: 1,
        synthesis_workers: 2,
        ..Default::default()
    })
    .unwrap();
    let srs = engine.srs_load(common::PROOF, None).unwrap();
    let one = engine.partition_reservation(&srs, false);
    assert!(one > 1 << 20, "a 2 KiB partition estimated at {one} bytes");
    assert_eq!(memory(&engine)["budget_bytes"].as_u64(), Some(1 << 20));

    let ids = [common::submit(&engine, &f), common::submit(&engine, &f)];
    let mut waited = Duration::ZERO;
    for id in ids {
        let snap = engine.wait(id, None).unwrap();
        assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
        let r = snap.result.unwrap();
        assert!(common::filecoin_verify(&f, &r.proof));
        waited += r.timings.phases.0.iter().filter(|(n, _)| *n == "memory_wait").map(|(_, d)| *d).sum::<Duration>();
    }
    let m = memory(&engine);
    assert_eq!(m["peak_reserved_bytes"].as_u64(), Some(one), "two partitions held memory at once: {m}");
    assert!(waited > Duration::from_secs(1), "the second job did not wait for room ({waited:?})");

    // Given back once the deallocator has freed the buffers.
    let t = Instant::now();
    while memory(&engine)["reserved_bytes"].as_u64() != Some(0) {
        assert!(t.elapsed() < Duration::from_secs(30), "reservation never released: {}", memory(&engine));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(memory(&engine)["partitions_holding"].as_u64(), Some(0));
}
