//! cuzk-daemon driven by a Go gRPC client written the way Curio's is (tests/client/, generated
//! from proto/ by scripts/gen-go-proto.sh): every method, PoRep C2 in Curio's envelope and bare,
//! WindowPoSt partitions, WinningPoSt, SnapDeals with raw and CID commitments, Submit/Await/
//! Cancel, deadlines, 64 concurrent Prove calls, bad requests, limits, SIGTERM drain. Every
//! proof the client got is then checked here by filecoin-proofs' own verifiers.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use serde_json::json;

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The miner whose ID address's payload is `prover_id` (an unsigned LEB128 varint, zero-padded).
fn miner_id(prover_id: &[u8; 32]) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    for &b in prover_id.iter() {
        v |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    assert_eq!(&cuzk::fixtures::prover_id_from_actor(v), prover_id, "the fixture's prover id is no ID address payload");
    v
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the daemon crate sits in the repository").to_owned()
}

#[test]
fn curio_client_drives_every_method() {
    let f = common::fixture();
    let k = common::kind_fixtures();
    let work = std::env::temp_dir().join(format!("cuzk-daemon-test-{}", std::process::id()));
    let out = work.join("out");
    std::fs::create_dir_all(&out).unwrap();

    let number = |c: cuzk::kinds::CircuitId| -> u64 {
        match c {
            cuzk::kinds::CircuitId::PoSt(p) => cuzk::kinds::registry::post_to_number(p) as u64,
            cuzk::kinds::CircuitId::Update(p) => cuzk::kinds::registry::update_to_number(p) as u64,
            cuzk::kinds::CircuitId::Seal(_) => common::PROOF_NUMBER as u64,
        }
    };
    let per_partition = k.window.proof.sector_count();
    let cases = json!({
        "params_dir": f.params_dir,
        "porep": {
            "c1": b64(&f.c1), "sector_number": f.sector.sector_id, "miner_id": miner_id(&f.sector.prover_id),
            "registered_proof": common::PROOF_NUMBER, "sector_size": 2048,
        },
        "winning": {
            "registered_proof": number(k.winning.proof.into()), "sector_size": 2048, "miner_id": miner_id(&k.winning.prover_id),
            "randomness": b64(&k.winning.randomness), "partitions": [k.winning.vanilla_proofs.iter().map(|v| b64(v)).collect::<Vec<_>>()],
        },
        "window": {
            "registered_proof": number(k.window.proof.into()), "sector_size": 2048, "miner_id": miner_id(&k.window.prover_id),
            "randomness": b64(&k.window.randomness),
            "partitions": k.window.vanilla_proofs.chunks(per_partition).map(|c| c.iter().map(|v| b64(v)).collect::<Vec<_>>()).collect::<Vec<_>>(),
        },
        "snap": {
            "registered_proof": number(k.update.proof.into()), "sector_size": 2048,
            "vanilla_proofs": k.update.vanilla_proofs.iter().map(|v| b64(v)).collect::<Vec<_>>(),
            "comm_r_old": b64(&k.update.comm_r_old), "comm_r_new": b64(&k.update.comm_r_new), "comm_d_new": b64(&k.update.comm_d_new),
        },
    });
    let cases_path = work.join("cases.json");
    std::fs::write(&cases_path, serde_json::to_vec(&cases).unwrap()).unwrap();

    let gen = Command::new(repo().join("scripts/gen-go-proto.sh")).status().expect("scripts/gen-go-proto.sh");
    assert!(gen.success(), "generating the Go client from the .proto failed");
    let go = std::env::var("GO").unwrap_or_else(|_| "go".into());
    let status = Command::new(go)
        .args(["test", "-count=1", "-v", "-timeout", "20m", "./..."])
        .current_dir(repo().join("daemon/tests/client"))
        .env("CUZK_DAEMON_BIN", env!("CARGO_BIN_EXE_cuzk-daemon"))
        .env("CUZK_DAEMON_CASES", &cases_path)
        .env("CUZK_DAEMON_OUT", &out)
        .status()
        .expect("running go test");
    if !status.success() {
        for e in std::fs::read_dir(&out).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "log") {
                eprintln!("==== {}\n{}", e.path().display(), std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        panic!("the Go client's test failed (daemon logs above)");
    }

    let proof = |name: &str| std::fs::read(out.join(format!("{name}.proof"))).unwrap_or_else(|e| panic!("the client wrote no {name}.proof: {e}"));
    for name in ["porep-envelope", "porep-bare", "porep-submit", "porep-drain"] {
        assert!(common::filecoin_verify(&f, &proof(name)), "{name}: filecoin-proofs' verify_seal rejects the daemon's proof");
    }
    assert!(common::filecoin_verify_kind(&k, "winning_post", &proof("winning")), "winning: rejected by filecoin-proofs");
    for i in 0..16 {
        assert!(common::filecoin_verify_kind(&k, "winning_post", &proof(&format!("concurrent-{i}"))), "concurrent-{i}: rejected");
    }
    let partitions = k.window.vanilla_proofs.len().div_ceil(per_partition);
    let window: Vec<u8> = (0..partitions).flat_map(|p| proof(&format!("window-{p}"))).collect();
    assert!(common::filecoin_verify_kind(&k, "window_post", &window), "the WindowPoSt partitions' proofs, merged: rejected");
    for name in ["snap", "snap-cid"] {
        assert!(common::filecoin_verify_kind(&k, "snap_deals", &proof(name)), "{name}: rejected by filecoin-proofs");
    }
    let _ = std::fs::remove_dir_all(&work);
}
