//! `RAYON_NUM_THREADS` (which storage providers set to share a host between proving processes,
//! as filecoin-ffi's rayon pools honour it) sizes the engine: its automatic synthesis workers are
//! half of it, and its bulk pool has a thread per core. The bulk threads (that pool, the synthesis
//! workers) run `bulk_nice` below the others (the urgent worker's, the prover lanes, the finisher). (Its own test
//! binary: the variable must be set before rayon's pool starts.)

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
        // The urgent worker's threads (cuzk-synth-urgent, cuzk-prove-urgent, cuzk-urgent-N; names
        // cut at 15 bytes) only under an urgent prefix.
        let name = comm.trim();
        if name.starts_with(prefix) && (prefix.contains("urg") || !name.contains("-urg")) {
            out.push((name.to_owned(), nice));
        }
    }
    out
}

#[test]
fn rayon_num_threads_sizes_the_engine_and_its_bulk_threads_run_below_the_rest() {
    std::env::set_var("RAYON_NUM_THREADS", "6");
    let e = Engine::new(EngineConfig { backend: "cpu".into(), bulk_nice: 7, ..Default::default() }).unwrap();
    assert_eq!(rayon::current_num_threads(), 6);
    let status: serde_json::Value = serde_json::from_str(&e.status_json()).unwrap();
    assert_eq!(status["synthesis_workers"], 3, "{status}");
    assert_eq!(status["bulk_nice"], 7, "{status}");
    // The threads start, and lower themselves, on their own time: give them a moment.
    let lowered = |prefix: &str, n: usize| {
        let v = threads(prefix);
        (v.len() == n && v.iter().all(|b| b.1 == 7), v)
    };
    // Not lowered: the urgent worker's pool and threads, the prover lane's and the finisher's
    // (they drive devices).
    let others = || [threads("cuzk-urgent-"), threads("cuzk-synth-urg"), threads("cuzk-prove-"), threads("cuzk-prove-urg"), threads("cuzk-finish")].concat();
    let bulk_threads = [("cuzk-bulk-", 6), ("cuzk-synth-", 3)];
    let t = Instant::now();
    while !(bulk_threads.iter().all(|&(p, n)| lowered(p, n).0) && others().len() == 6 + 1 + 2 + 1) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for (prefix, n) in bulk_threads {
        let (ok, v) = lowered(prefix, n);
        assert!(ok, "{n} {prefix}* threads at nice 7: {v:?}");
    }
    let others = others();
    assert_eq!(others.len(), 6 + 1 + 2 + 1, "{others:?} of {:?}", threads("cuzk"));
    assert!(others.iter().all(|u| u.1 == 0), "at the process's priority: {others:?}");
}
