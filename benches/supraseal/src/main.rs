//! `supraseal-c2-bench <sector.json> <runs>`: proves the fixture's C1 with filecoin-proofs'
//! `seal_commit_phase2` built with supraseal-c2, `runs` times, and prints one JSON line per
//! run (wall seconds; the first run includes the SRS read and CUDA start-up). The parameter
//! cache is FIL_PROOFS_PARAMETER_CACHE, as for any filecoin-proofs user. With
//! RUST_LOG=bellperson=info, bellperson's own synthesis / GPU prover timers go to stderr.
//! `supraseal-c2-bench raw …` times supraseal-c2's prover alone on a synthetic workload (raw.rs).

use std::time::Instant;

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
    let sector: Sector = serde_json::from_slice(&std::fs::read(&args[1]).expect("sector.json")).expect("sector json");
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output =
        serde_json::from_slice(&std::fs::read(&sector.c1_path).expect("c1")).expect("c1 json");
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
