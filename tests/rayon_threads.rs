//! `RAYON_NUM_THREADS` (which storage providers set to share a host between proving processes,
//! as filecoin-ffi's rayon pools honour it) sizes the engine: its automatic synthesis workers are
//! half of it, and its bulk pool has a thread per core plus the lanes' and the finisher's. (Its
//! own test binary: the variable must be set before rayon's pool starts.)

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig};

/// (name, nice value) of each of this process's threads whose name starts with `prefix`.
fn threads(prefix: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let (Ok(comm), Ok(stat)) = (std::fs::read_to_string(t.path().join("comm")), std::fs::read_to_string(t.path().join("stat"))) else { continue };
        // Field 19 of stat is the nice value; the fields after the parenthesized name count from 3.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let nice: i64 = after.split(' ').nth(16).unwrap().parse().unwrap();
        if comm.trim().starts_with(prefix) {
            out.push((comm.trim().to_owned(), nice));
        }
    }
    out
}

#[test]
fn rayon_num_threads_sizes_the_engine_and_its_bulk_threads_run_below_the_urgent_ones() {
    std::env::set_var("RAYON_NUM_THREADS", "6");
    let e = Engine::new(EngineConfig { backend: "cpu".into(), bulk_nice: 7, ..Default::default() }).unwrap();
    assert_eq!(rayon::current_num_threads(), 6);
    let status: serde_json::Value = serde_json::from_str(&e.status_json()).unwrap();
    assert_eq!(status["synthesis_workers"], 3, "{status}");
    assert_eq!(status["bulk_nice"], 7, "{status}");
    let lanes = status["prover_lanes"].as_array().unwrap().len() - 1; // less the urgent prover's
    // The pool's threads lower themselves as they start: give them a moment.
    let t = Instant::now();
    let (bulk, urgent) = loop {
        let (bulk, urgent) = (threads("cuzk-bulk-"), threads("cuzk-urgent-"));
        if bulk.len() == 6 + lanes + 1 && bulk.iter().all(|b| b.1 == 7) || t.elapsed() > Duration::from_secs(5) {
            break (bulk, urgent);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(bulk.len(), 6 + lanes + 1, "a bulk thread per core, per lane and the finisher's: {bulk:?}");
    assert!(bulk.iter().all(|b| b.1 == 7), "bulk threads at nice 7: {bulk:?}");
    assert_eq!(urgent.len(), 6, "{urgent:?}");
    assert!(urgent.iter().all(|u| u.1 == 0), "the urgent pool at the process's priority: {urgent:?}");
}
