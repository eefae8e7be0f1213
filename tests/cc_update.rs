//! Generated SnapDeals inputs (`cuzk::fixtures::cc_update`): filecoin-proofs' own vanilla check
//! (`verify_partition_proofs`) and the engine's submit checks accept every partition at every
//! sector size, 32 and 64 GiB included; and a generated 2 KiB update proved by the engine
//! verifies with filecoin-proofs' `verify_empty_sector_update_proof`; at 32 and 64 GiB the
//! engine's witness equals upstream's value for value.

mod common;

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState, Submission};
use cuzk::fixtures::{self, cc_update, verify_update};
use cuzk::kinds::{ProofRequest, RegisteredUpdateProof};

#[test]
fn upstream_accepts_generated_updates_at_every_size() {
    use RegisteredUpdateProof::*;
    // The engine checks an update's inputs (decoding, shapes, every partition's vanilla proof
    // by upstream's verifier) at submit, before it looks for the SRS: with none loaded,
    // SRS_NOT_LOADED means they all passed.
    let engine = Engine::new(EngineConfig { backend: "cpu".into(), ..Default::default() }).unwrap();
    for proof in [StackedDrg2KiBV1, StackedDrg8MiBV1, StackedDrg512MiBV1, StackedDrg32GiBV1, StackedDrg64GiBV1] {
        let t = Instant::now();
        let f = cc_update(proof, 9).unwrap();
        let made = t.elapsed().as_secs_f64();
        let t = Instant::now();
        assert!(verify_update(&f).unwrap(), "{proof:?}: filecoin-proofs rejects the generated partition proofs");
        let verified = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let e = engine.submit_proof(Submission { request: ProofRequest::SnapDeals(f.request()), priority: None, request_id: None }).unwrap_err();
        assert_eq!(e.status, cuzk::error::Status::SrsNotLoaded, "{proof:?}: the engine refuses the generated inputs: {e}");
        let checked = t.elapsed().as_secs_f64();
        let mut other = f.clone();
        other.comm_d_new = cc_update(proof, 10).unwrap().comm_d_new;
        assert!(!verify_update(&other).unwrap(), "{proof:?}: accepted under another comm_d_new");
        eprintln!(
            "{proof:?}: {} partition(s) generated in {made:.2} s ({} KB of vanilla proofs), verified by filecoin-proofs in {verified:.2} s, accepted by the engine's checks in {checked:.2} s",
            f.vanilla_proofs.len(),
            f.vanilla_proofs.iter().map(Vec::len).sum::<usize>() >> 10,
        );
    }
}

#[test]
fn engine_proofs_of_generated_2kib_updates_verify() {
    let _ = common::kind_fixtures(); // the 2 KiB update params, filecoin-proofs' parameter cache pointed at them
    let config = EngineConfig { backend: "cpu".into(), params_dir: Some(fixtures::params_dir(&fixtures::default_root())), load_srs_on_demand: true, ..Default::default() };
    let engine = Engine::new(config).unwrap();
    let u = cc_update(RegisteredUpdateProof::StackedDrg2KiBV1, 33).unwrap();
    let id = engine.submit_proof(Submission { request: ProofRequest::SnapDeals(u.request()), priority: None, request_id: None }).expect("submit");
    let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    let proof = snap.result.unwrap().proof.clone();
    let ok = filecoin_proofs_api::update::verify_empty_sector_update_proof(u.proof, &proof, u.comm_r_old, u.comm_r_new, u.comm_d_new);
    assert!(ok.unwrap(), "filecoin-proofs rejects the engine's SnapDeals proof of a generated update");
}

/// SnapDeals' witness (tree D's SHA-256 and tree R's Poseidon computed natively) equals
/// upstream's witness-only synthesis value for value where tree R has a sub-tree (32 GiB) and a
/// top tree (64 GiB) — the 2 KiB update of `tests/proof_kinds.rs` has base levels only: partition
/// 0 of one generated update of each (~30 s upstream each on 2 cores, ~5 GB).
#[test]
fn native_update_witness_equals_upstream_with_sub_and_top_trees() {
    use cuzk::synth::SizeHint;
    for proof in [RegisteredUpdateProof::StackedDrg32GiBV1, RegisteredUpdateProof::StackedDrg64GiBV1] {
        let f = cc_update(proof, 21).unwrap();
        let inputs = ProofRequest::SnapDeals(f.request()).parse().unwrap();
        let t = Instant::now();
        let native = inputs.circuits.witness(0, SizeHint::default()).unwrap();
        let t_native = t.elapsed();
        let t = Instant::now();
        let (input, aux) = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().witness_sequential(0).unwrap();
        eprintln!("{proof:?} partition 0: {} constraints; native witness {t_native:?}, upstream's witness-only {:?}", native.constraints, t.elapsed());
        assert!(native.input == input, "{proof:?}: public inputs differ");
        assert_eq!(native.aux.len(), aux.len(), "{proof:?}: aux count");
        if let Some(i) = native.aux.iter().zip(&aux).position(|(a, b)| a != b) {
            panic!("{proof:?}: aux {i} of {} differs", aux.len());
        }
    }
}
