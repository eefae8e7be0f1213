//! Generated PoSt inputs (`cuzk::fixtures::cc_post`): filecoin-proofs' own vanilla checks
//! (`partition_vanilla_proofs`, as its `*_with_vanilla` calls run them) accept WinningPoSt and
//! full WindowPoSt partitions at every sector size, 32 and 64 GiB included; and generated 2 KiB
//! PoSts proved by the engine verify with filecoin-proofs' `verify_winning_post` /
//! `verify_window_post`.

mod common;

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState, Submission};
use cuzk::fixtures::{self, cc_post, verify_post};
use cuzk::kinds::{ProofRequest, RegisteredPoStProof};

#[test]
fn upstream_accepts_generated_posts_at_every_size() {
    use RegisteredPoStProof::*;
    let sizes = [
        (StackedDrgWinning2KiBV1, StackedDrgWindow2KiBV1_2),
        (StackedDrgWinning8MiBV1, StackedDrgWindow8MiBV1_2),
        (StackedDrgWinning512MiBV1, StackedDrgWindow512MiBV1_2),
        (StackedDrgWinning32GiBV1, StackedDrgWindow32GiBV1_2),
        (StackedDrgWinning64GiBV1, StackedDrgWindow64GiBV1_2),
    ];
    // The engine's own checks of PoSt inputs (decoding, shapes, every sector's vanilla proof)
    // run at submit, before it looks for the SRS: with none loaded, SRS_NOT_LOADED means they
    // all passed.
    let engine = Engine::new(EngineConfig { backend: "cpu".into(), ..Default::default() }).unwrap();
    for (winning, window) in sizes {
        // One WinningPoSt; a WindowPoSt of one full partition and one sector more (two partitions).
        let full = window.as_v1_config().sector_count;
        for (proof, sectors) in [(winning, 1), (window, full + 1)] {
            let t = Instant::now();
            let f = cc_post(proof, sectors, 9).unwrap();
            let made = t.elapsed().as_secs_f64();
            let t = Instant::now();
            assert!(verify_post(&f).unwrap(), "{proof:?}: filecoin-proofs rejects the generated vanilla proofs");
            let verified = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut request = f.request();
            request.vanilla_proofs.truncate(full);
            let request = match sectors {
                1 => ProofRequest::WinningPoSt(request),
                _ => ProofRequest::WindowPoSt { post: request, partition: Some(0) },
            };
            let e = engine.submit_proof(Submission { request, priority: None, request_id: None }).unwrap_err();
            assert_eq!(e.status, cuzk::error::Status::SrsNotLoaded, "{proof:?}: the engine refuses the generated inputs: {e}");
            let checked = t.elapsed().as_secs_f64();
            eprintln!(
                "{proof:?}: {sectors} sector(s) generated in {made:.2} s ({} KB of vanilla proofs), verified by filecoin-proofs in {verified:.2} s, accepted by the engine's checks (first partition) in {checked:.2} s",
                f.vanilla_proofs.iter().map(Vec::len).sum::<usize>() >> 10,
            );
        }
    }
}

#[test]
fn engine_proofs_of_generated_2kib_posts_verify() {
    let _ = common::kind_fixtures(); // the 2 KiB PoSt params, filecoin-proofs' parameter cache pointed at them
    let config = EngineConfig { backend: "cpu".into(), params_dir: Some(fixtures::params_dir(&fixtures::default_root())), load_srs_on_demand: true, ..Default::default() };
    let engine = Engine::new(config).unwrap();
    let prove = |request: ProofRequest<'_>| {
        let id = engine.submit_proof(Submission { request, priority: None, request_id: None }).expect("submit");
        let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
        assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
        snap.result.unwrap().proof.clone()
    };
    let winning = cc_post(RegisteredPoStProof::StackedDrgWinning2KiBV1, 1, 31).unwrap();
    let proof = prove(ProofRequest::WinningPoSt(winning.request()));
    let ok = filecoin_proofs_api::post::verify_winning_post(&winning.randomness, &proof, &common::replicas(&winning), winning.prover_id);
    assert!(ok.unwrap(), "filecoin-proofs rejects the engine's WinningPoSt of a generated sector");

    let window = cc_post(RegisteredPoStProof::StackedDrgWindow2KiBV1_2, 3, 32).unwrap();
    let proof = prove(ProofRequest::WindowPoSt { post: window.request(), partition: None });
    let ok = filecoin_proofs_api::post::verify_window_post(&window.randomness, &[(window.proof, &proof[..])], &common::replicas(&window), window.prover_id);
    assert!(ok.unwrap(), "filecoin-proofs rejects the engine's WindowPoSt of generated sectors");
}

/// The PoSt witness (tree R's Poseidon computed natively) equals upstream's synthesis value for
/// value where tree R has a sub-tree (32 GiB) and a top tree (64 GiB) — the 2 KiB kinds of
/// `tests/proof_kinds.rs` have base levels only: one generated WinningPoSt of each, its
/// witness evaluated through its recording.
#[test]
fn native_post_witness_equals_upstream_with_sub_and_top_trees() {
    use cuzk::synth::{synthesize_recorded, SizeHint};
    for proof in [RegisteredPoStProof::StackedDrgWinning32GiBV1, RegisteredPoStProof::StackedDrgWinning64GiBV1] {
        let f = cc_post(proof, 1, 17).unwrap();
        let inputs = ProofRequest::WinningPoSt(f.request()).parse().unwrap();
        let hint = SizeHint::default();
        let t = Instant::now();
        let seq = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().synthesize_sequential(0, hint).unwrap();
        let t_seq = t.elapsed();
        let r1cs = inputs.circuits.record(0, hint, &|| false).unwrap();
        let t = Instant::now();
        let ours = synthesize_recorded(&*inputs.circuits, 0, hint, &r1cs).unwrap();
        eprintln!("{proof:?}: {} constraints; upstream {t_seq:?}, the witness through the recording {:?}", seq.num_constraints(), t.elapsed());
        common::assert_same_assignment(&seq, &ours, &format!("{proof:?}"));
    }
}
