//! `supraseal-c2-bench <sector.json> <runs>`: proves the fixture's C1 with filecoin-proofs'
//! `seal_commit_phase2` built with supraseal-c2, `runs` times, and prints one JSON line per
//! run (wall seconds; the first run includes the SRS read and CUDA start-up). The parameter
//! cache is FIL_PROOFS_PARAMETER_CACHE, as for any filecoin-proofs user. With
//! RUST_LOG=bellperson=info, bellperson's own synthesis / GPU prover timers go to stderr.
//! `supraseal-c2-bench raw …` times supraseal-c2's prover alone on a synthetic workload (raw.rs).
//! `supraseal-c2-bench stream <sector.json> <jobs> <threads,…>`: after one warm-up call, `jobs`
//! `seal_commit_phase2` calls shared by T threads of this process, for each T listed — the
//! peer's throughput at its best thread count.
//! `supraseal-c2-bench kinds <kinds.json> <runs>`: WinningPoSt, WindowPoSt, SnapDeals (kinds.rs).

use std::time::Instant;

mod kinds;
mod raw;

#[derive(serde::Deserialize)]
struct Sector {
    sector_id: u64,
    prover_id: [u8; 32],
    c1_path: std::path::PathBuf,
}

fn main() {
    // bellperson logs its own "synthesis time" and "prover time" (RUST_LOG=bellperson=info).
    env_logger::init();
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("raw") {
        return raw::main(&args);
    }
    if args.get(1).map(String::as_str) == Some("kinds") {
        return kinds::main(&args);
    }
    if args.get(1).map(String::as_str) == Some("stream") {
        return stream(&args[2..]);
    }
    let (sector, c1) = load(&args[1]);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    for i in 0..runs {
        let t = Instant::now();
        let out = filecoin_proofs_api::seal::seal_commit_phase2(c1.clone(), sector.prover_id, sector.sector_id.into())
            .expect("seal_commit_phase2");
        println!(
            "{}",
            serde_json::json!({"peer": "supraseal-c2", "run": i, "wall_s": t.elapsed().as_secs_f64(), "proof_bytes": out.proof.len()})
        );
    }
}

fn load(path: &str) -> (Sector, filecoin_proofs_api::seal::SealCommitPhase1Output) {
    let sector: Sector = serde_json::from_slice(&std::fs::read(path).expect("sector.json")).expect("sector json");
    let c1 = serde_json::from_slice(&std::fs::read(&sector.c1_path).expect("c1")).expect("c1 json");
    (sector, c1)
}

fn stream(args: &[String]) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (sector, c1) = load(&args[0]);
    let jobs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(32);
    let threads: Vec<usize> = args.get(2).map_or("16", String::as_str).split(',').filter_map(|t| t.parse().ok()).collect();
    let prove = || {
        filecoin_proofs_api::seal::seal_commit_phase2(c1.clone(), sector.prover_id, sector.sector_id.into()).expect("seal_commit_phase2")
    };
    let t = Instant::now();
    prove(); // SRS read, CUDA start-up
    println!("{}", serde_json::json!({"peer": "supraseal-c2", "warm_up_s": t.elapsed().as_secs_f64()}));
    for n in threads {
        let next = AtomicUsize::new(0);
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..n {
                s.spawn(|| {
                    while next.fetch_add(1, Ordering::Relaxed) < jobs {
                        prove();
                    }
                });
            }
        });
        let wall = t.elapsed().as_secs_f64();
        println!(
            "{}",
            serde_json::json!({"peer": "supraseal-c2", "mode": "stream", "jobs": jobs, "threads": n, "wall_s": wall, "per_proof_s": wall / jobs as f64})
        );
    }
}
