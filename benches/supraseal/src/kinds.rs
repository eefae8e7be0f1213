//! `supraseal-c2-bench kinds <kinds.json> <runs>`: WinningPoSt, WindowPoSt and SnapDeals through
//! filecoin-proofs' `*_with_vanilla` built with supraseal-c2, on the vanilla proofs `cuzk-fixture
//! --kinds` wrote (the inputs `cuzk-bench kinds` proves). One warm-up call per kind (its params
//! read, CUDA start-up), then `runs` timed calls; one JSON line per kind with the median.

use std::time::Instant;

use filecoin_proofs_api::{post, update, PartitionProofBytes, RegisteredPoStProof, RegisteredUpdateProof};

#[derive(serde::Deserialize)]
struct PoSt {
    proof: RegisteredPoStProof,
    randomness: [u8; 32],
    prover_id: [u8; 32],
    vanilla_proofs: Vec<Vec<u8>>,
}

#[derive(serde::Deserialize)]
struct Update {
    proof: RegisteredUpdateProof,
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
    vanilla_proofs: Vec<Vec<u8>>,
}

#[derive(serde::Deserialize)]
struct Kinds {
    winning: PoSt,
    window: PoSt,
    update: Update,
}

pub fn main(args: &[String]) {
    let k: Kinds = serde_json::from_slice(&std::fs::read(&args[2]).expect("kinds.json")).expect("kinds json");
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let prove = |name: &str| -> usize {
        let r = match name {
            "winning_post" => post::generate_winning_post_with_vanilla(k.winning.proof, &k.winning.randomness, k.winning.prover_id, &k.winning.vanilla_proofs)
                .map(|v| v[0].1.len()),
            "window_post" => post::generate_window_post_with_vanilla(k.window.proof, &k.window.randomness, k.window.prover_id, &k.window.vanilla_proofs)
                .map(|v| v[0].1.len()),
            _ => {
                let u = &k.update;
                let parts = u.vanilla_proofs.iter().cloned().map(PartitionProofBytes).collect();
                update::generate_empty_sector_update_proof_with_vanilla(u.proof, parts, u.comm_r_old, u.comm_r_new, u.comm_d_new).map(|p| p.0.len())
            }
        };
        r.expect(name)
    };
    for name in ["winning_post", "window_post", "snap_deals"] {
        let t = Instant::now();
        let bytes = prove(name);
        let warm_up = t.elapsed().as_secs_f64();
        let mut walls: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                prove(name);
                t.elapsed().as_secs_f64()
            })
            .collect();
        walls.sort_by(f64::total_cmp);
        println!(
            "{}",
            serde_json::json!({"peer": "supraseal-c2", "mode": "kinds", "kind": name, "warm_up_s": warm_up, "median_s": walls[walls.len() / 2], "runs_s": walls, "proof_bytes": bytes})
        );
    }
}
