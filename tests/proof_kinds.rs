//! WinningPoSt, WindowPoSt (all partitions and one by index) and SnapDeals through the engine:
//! real 2 KiB sectors sealed and updated with filecoin-proofs, vanilla proofs made by it, seeded
//! params; every proof checked by filecoin-proofs' own verifiers, byte identity with bellperson
//! for fixed r, s, and bad input refused at submit.

mod common;

use std::sync::Arc;
use std::time::Duration;

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState, Submission};
use cuzk::error::Status;
use cuzk::fixtures::{self, KindFixtures, PoStFixture};
use cuzk::kinds::post::{window_statement, winning_statement, PublicReplica};
use cuzk::kinds::update::{update_statement, UpdateCommitments};
use cuzk::kinds::{ProofKind, ProofRequest};
use cuzk::prover::{Backend, CpuBackend};
use ff::Field;

struct Setup {
    kinds: KindFixtures,
    engine: Engine,
}

fn setup() -> Setup {
    let kinds = common::kind_fixtures(); // also points filecoin-proofs' parameter cache at the fixtures
    let config = EngineConfig { backend: "cpu".into(), params_dir: Some(fixtures::params_dir(&fixtures::default_root())), ..Default::default() };
    let engine = Engine::new(config).expect("engine");
    for c in kinds.circuits() {
        engine.srs_load(c, None).expect("srs load");
    }
    Setup { kinds, engine }
}

fn prove(engine: &Engine, request: ProofRequest<'_>) -> Vec<u8> {
    let kind = request.kind();
    let id = engine.submit_proof(Submission { request, priority: None, request_id: None }).expect("submit");
    let snap = engine.wait(id, Some(Duration::from_secs(600))).expect("wait");
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    let r = snap.result.unwrap();
    assert!(r.verified, "the engine verifies every proof");
    assert_eq!(r.kind, kind);
    r.proof.clone()
}

fn public(p: &PoStFixture) -> Vec<PublicReplica> {
    p.sectors.iter().map(|(id, comm_r)| PublicReplica { sector_id: *id, comm_r: *comm_r }).collect()
}

fn flipped(p: &[u8]) -> Vec<u8> {
    let mut bad = p.to_vec();
    bad[p.len() - 1] ^= 1;
    bad
}

#[test]
fn every_kind_proves_and_filecoin_proofs_verifies() {
    let s = setup();
    let k = &s.kinds;

    // WinningPoSt.
    let w = &k.winning;
    let proof = prove(&s.engine, ProofRequest::WinningPoSt(w.request()));
    assert_eq!(proof.len(), 192);
    assert!(filecoin_proofs_api::post::verify_winning_post(&w.randomness, &proof, &common::replicas(w), w.prover_id).unwrap());
    let st = winning_statement(w.proof, &w.randomness, &w.prover_id, &public(w)).unwrap();
    assert!(s.engine.verify(w.proof, &*st, &proof).unwrap());
    assert!(!s.engine.verify(w.proof, &*st, &flipped(&proof)).unwrap_or(false));

    // WindowPoSt, every partition: three sectors, two per partition.
    let d = &k.window;
    let proof = prove(&s.engine, ProofRequest::WindowPoSt { post: d.request(), partition: None });
    assert_eq!(proof.len(), 2 * 192);
    assert!(filecoin_proofs_api::post::verify_window_post(&d.randomness, &[(d.proof, &proof[..])], &common::replicas(d), d.prover_id).unwrap());
    let st = window_statement(d.proof, &d.randomness, &d.prover_id, &public(d)).unwrap();
    assert!(s.engine.verify(d.proof, &*st, &proof).unwrap());

    // WindowPoSt one partition at a time, merged the way upstream merges them.
    let mut merged = Vec::new();
    for (k_index, range) in [(0usize, 0..2usize), (1, 2..3)] {
        let mut r = d.request();
        r.vanilla_proofs = r.vanilla_proofs[range].to_vec();
        merged.extend(prove(&s.engine, ProofRequest::WindowPoSt { post: r, partition: Some(k_index) }));
    }
    assert!(filecoin_proofs_api::post::verify_window_post(&d.randomness, &[(d.proof, &merged[..])], &common::replicas(d), d.prover_id).unwrap());

    // SnapDeals.
    let u = &k.update;
    let proof = prove(&s.engine, ProofRequest::SnapDeals(k.update.request()));
    assert!(filecoin_proofs_api::update::verify_empty_sector_update_proof(u.proof, &proof, u.comm_r_old, u.comm_r_new, u.comm_d_new).unwrap());
    let c = UpdateCommitments { comm_r_old: u.comm_r_old, comm_r_new: u.comm_r_new, comm_d_new: u.comm_d_new };
    let st = update_statement(u.proof, &c).unwrap();
    assert!(s.engine.verify(u.proof, &*st, &proof).unwrap());
    assert!(!s.engine.verify(u.proof, &*st, &flipped(&proof)).unwrap_or(false));

    let status: serde_json::Value = serde_json::from_str(&s.engine.status_json()).unwrap();
    let kinds: Vec<&str> = status["srs"].as_array().unwrap().iter().map(|x| x["kind"].as_str().unwrap()).collect();
    for want in ["winning_post", "window_post", "snap_deals"] {
        assert!(kinds.contains(&want), "status lists every resident SRS by kind: {kinds:?}");
    }
}

/// Our synthesis (PoSt: sectors or challenges on all threads) equals upstream's sequential
/// synthesis of its circuit, value for value, for every partition of every kind (WinningPoSt's
/// one sector takes the challenge forks, WindowPoSt's partitions of two sectors the sector forks).
#[test]
fn synthesis_equals_upstream_value_for_value() {
    let s = setup();
    for (name, req) in s.kinds.requests() {
        let inputs = req.parse().expect("parse");
        let hint = s.engine.srs_get(inputs.circuit).unwrap().unwrap().size_hint();
        for part in 0..inputs.circuits.partitions() {
            let t = std::time::Instant::now();
            let seq = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().synthesize_sequential(part, hint).unwrap();
            let t_seq = t.elapsed();
            let t = std::time::Instant::now();
            let ours = inputs.circuits.synthesize(part, hint).unwrap();
            eprintln!("{name} partition {part}: {} constraints, upstream {t_seq:?}, ours {:?}", seq.num_constraints(), t.elapsed());
            common::assert_same_assignment(&seq, &ours, &format!("{name} partition {part}"));
        }
    }
}

/// The recorded path equals upstream's synthesis for every partition of every kind: each kind's
/// circuit recorded from a job's partition on all threads (and, as a check of that recording,
/// from its blank circuit on one thread), then every partition synthesized as a witness alone
/// and evaluated through the recording, value for value against upstream's sequential synthesis.
#[test]
fn recorded_path_equals_upstream_value_for_value() {
    use cuzk::synth::{synthesize_recorded, R1cs};
    let s = setup();
    for (name, req) in s.kinds.requests() {
        let inputs = req.parse().expect("parse");
        assert!(inputs.circuits.recordable(), "{name} offers the recorded path");
        let hint = s.engine.srs_get(inputs.circuit).unwrap().unwrap().size_hint();
        let t = std::time::Instant::now();
        let recorded = inputs.circuits.record(0, hint, &|| false).expect("record from a partition");
        let t_parallel = t.elapsed();
        let t = std::time::Instant::now();
        let blank = R1cs::record(inputs.circuit, hint, &|| false).expect("record the blank circuit");
        eprintln!("{name}: recorded from partition 0 in {t_parallel:?}, from the blank circuit in {:?}: {:?}", t.elapsed(), recorded.stats());
        assert_eq!(recorded.circuit, inputs.circuit);
        // The kind's terms per constraint fit what its recording reserves (a quarter of slack,
        // no reallocation of a 32 GiB circuit's term vectors) and are not far below it.
        let per = inputs.circuit.terms_per_constraint();
        for (q, &terms) in recorded.stats().terms.iter().enumerate() {
            let measured = terms as f64 / recorded.stats().constraints as f64;
            assert!(measured <= per[q] * 1.25 && measured >= per[q] * 0.6, "{name}: {measured:.2} terms per constraint in matrix {q}, {} reserved", per[q]);
        }
        let (a, b) = (recorded.stats(), blank.stats());
        assert_eq!((a.constraints, a.inputs, a.aux, a.terms), (b.constraints, b.inputs, b.aux, b.terms), "{name}: both recordings count alike");
        for part in 0..inputs.circuits.partitions() {
            let seq = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().synthesize_sequential(part, hint).unwrap();
            for (how, r1cs) in [("recorded", &recorded), ("blank", &blank)] {
                let t = std::time::Instant::now();
                let ours = synthesize_recorded(&*inputs.circuits, part, hint, r1cs).unwrap();
                eprintln!("{name} partition {part}, {how} circuit: witness and a, b, c in {:?}", t.elapsed());
                common::assert_same_assignment(&seq, &ours, &format!("{name} partition {part} through the {how} circuit"));
            }
        }
    }
}

/// The engine records each kind's circuit at its first job and proves the next jobs of that
/// kind through the witness alone; those proofs verify with filecoin-proofs.
#[test]
fn every_kind_takes_the_recorded_path() {
    let s = setup();
    let k = &s.kinds;
    for (_, req) in k.requests() {
        prove(&s.engine, req);
    }
    let t = std::time::Instant::now();
    loop {
        let status: serde_json::Value = serde_json::from_str(&s.engine.status_json()).unwrap();
        let circuits = status["circuits"].as_array().cloned().unwrap_or_default();
        let ready: Vec<&str> = circuits.iter().filter(|c| c["state"] == "ready").filter_map(|c| c["kind"].as_str()).collect();
        if ready.len() == 3 {
            for want in ["winning_post", "window_post", "snap_deals"] {
                assert!(ready.contains(&want), "{want} recorded: {circuits:?}");
            }
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(600) && !circuits.iter().any(|c| c["state"] == "failed"),
            "every kind's circuit is recorded: {circuits:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let through_witness = |request: ProofRequest<'_>| -> Vec<u8> {
        let kind = request.kind();
        let id = s.engine.submit_proof(Submission { request, priority: None, request_id: None }).expect("submit");
        let snap = s.engine.wait(id, Some(Duration::from_secs(600))).expect("wait");
        assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
        let r = snap.result.unwrap();
        let phases: Vec<&str> = r.timings.phases.0.iter().map(|(n, _)| *n).collect();
        assert!(phases.contains(&"synthesis_witness"), "{kind:?} through its recorded circuit: {phases:?}");
        assert!(r.verified);
        r.proof.clone()
    };
    let w = &k.winning;
    let proof = through_witness(ProofRequest::WinningPoSt(w.request()));
    assert!(filecoin_proofs_api::post::verify_winning_post(&w.randomness, &proof, &common::replicas(w), w.prover_id).unwrap());
    let d = &k.window;
    let proof = through_witness(ProofRequest::WindowPoSt { post: d.request(), partition: None });
    assert!(filecoin_proofs_api::post::verify_window_post(&d.randomness, &[(d.proof, &proof[..])], &common::replicas(d), d.prover_id).unwrap());
    let u = &k.update;
    let proof = through_witness(ProofRequest::SnapDeals(u.request()));
    assert!(filecoin_proofs_api::update::verify_empty_sector_update_proof(u.proof, &proof, u.comm_r_old, u.comm_r_new, u.comm_d_new).unwrap());
}

/// For fixed r, s our proofs equal bellperson's `create_proof_batch` byte for byte, through full
/// synthesis and through the recorded circuit.
#[test]
fn byte_identical_to_bellperson() {
    let s = setup();
    let k = &s.kinds;
    let requests = k.requests().map(|(_, r)| r);
    let (r, t) = (Scalar::from(7u64), Scalar::from(11u64));
    for req in requests {
        let inputs = req.parse().expect("parse");
        let srs = s.engine.srs_get(inputs.circuit).unwrap().unwrap();
        let recorded = inputs.circuits.record(0, srs.size_hint(), &|| false).unwrap();
        for part in 0..inputs.circuits.partitions() {
            let theirs = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().bellperson_reference(part, &srs.params, r, t).unwrap();
            let asg = inputs.circuits.synthesize(part, srs.size_hint()).unwrap();
            let ours = CpuBackend::default().prove(&srs, asg, r, t).unwrap().proof;
            assert!(ours == theirs, "{:?} partition {part}", req.kind());
            let asg = cuzk::synth::synthesize_recorded(&*inputs.circuits, part, srs.size_hint(), &recorded).unwrap();
            let ours = CpuBackend::default().prove(&srs, asg, r, t).unwrap().proof;
            assert!(ours == theirs, "{:?} partition {part} through the recorded circuit", req.kind());
        }
    }
    let _ = Scalar::ONE;
}

#[test]
fn bad_input_is_refused_at_submit() {
    let s = setup();
    let k = &s.kinds;
    let submit = |request| s.engine.submit_proof(Submission { request, priority: None, request_id: None }).map(|_| ()).unwrap_err();

    // Malformed vanilla bytes.
    let mut r = k.winning.request();
    let junk = [7u8; 40];
    r.vanilla_proofs = vec![&junk];
    assert_eq!(submit(ProofRequest::WinningPoSt(r)).status, Status::InvalidInput);
    let mut r = k.window.request();
    let truncated = &k.window.vanilla_proofs[0][..100];
    r.vanilla_proofs[0] = truncated;
    assert_eq!(submit(ProofRequest::WindowPoSt { post: r, partition: None }).status, Status::InvalidInput);
    let mut u = k.update.request();
    u.vanilla_proofs[0] = &junk;
    assert_eq!(submit(ProofRequest::SnapDeals(u)).status, Status::InvalidInput);

    // Wrong registered proof: a WindowPoSt proof type for WinningPoSt, and the other way round.
    let mut r = k.winning.request();
    r.proof = k.window.proof;
    assert_eq!(submit(ProofRequest::WinningPoSt(r)).status, Status::InvalidArgument);
    let mut r = k.window.request();
    r.proof = k.winning.proof;
    assert_eq!(submit(ProofRequest::WindowPoSt { post: r, partition: None }).status, Status::InvalidArgument);
    // V1 vanilla proofs are not V1_2's: the challenges differ, so every sector is faulty.
    let mut r = k.window.request();
    r.proof = cuzk::kinds::RegisteredPoStProof::StackedDrgWindow2KiBV1;
    let e = submit(ProofRequest::WindowPoSt { post: r, partition: None });
    assert!(matches!(e.status, Status::FaultySectors | Status::SrsNotLoaded), "{e}");

    // Other randomness: every sector's vanilla proof fails, and the error names them.
    let mut r = k.window.request();
    r.randomness[0] ^= 1;
    let e = submit(ProofRequest::WindowPoSt { post: r, partition: None });
    assert_eq!(e.status, Status::FaultySectors, "{e}");
    assert_eq!(e.sectors, k.window.sectors.iter().map(|s| s.0).collect::<Vec<_>>());
    let mut r = k.winning.request();
    r.randomness[0] ^= 1;
    assert_eq!(submit(ProofRequest::WinningPoSt(r)).status, Status::FaultySectors);

    // One partition given more sectors than a partition holds; sectors out of order.
    let mut r = k.window.request();
    let e = submit(ProofRequest::WindowPoSt { post: k.window.request(), partition: Some(0) });
    assert_eq!(e.status, Status::InvalidInput, "{e}");
    r.vanilla_proofs.reverse();
    assert_eq!(submit(ProofRequest::WindowPoSt { post: r, partition: None }).status, Status::InvalidInput);

    // Update vanilla proofs against other commitments.
    let mut u = k.update.request();
    u.comm_r_new = k.update.comm_r_old;
    assert_eq!(submit(ProofRequest::SnapDeals(u)).status, Status::InvalidInput);

    // No SRS loaded.
    s.engine.srs_evict(k.update.proof).unwrap();
    assert_eq!(submit(ProofRequest::SnapDeals(k.update.request())).status, Status::SrsNotLoaded);
}

/// WinningPoSt outranks PoRep by default.
#[test]
fn default_priorities() {
    assert!(ProofKind::WinningPoSt.default_priority() > ProofKind::WindowPoSt.default_priority());
    assert!(ProofKind::WindowPoSt.default_priority() > ProofKind::PoRep.default_priority());
    assert_eq!(ProofKind::PoRep.default_priority(), ProofKind::SnapDeals.default_priority());
    let _ = Arc::new(());
}

/// The C ABI: every kind submitted, waited for and verified through the exported functions;
/// faulty sectors listed on the error.
#[test]
fn through_the_c_abi() {
    use cuzk::ffi::*;
    let kinds = common::kind_fixtures();
    let params_dir = fixtures::params_dir(&fixtures::default_root());
    let cfg = std::ffi::CString::new(format!(r#"{{"backend":"cpu","params_dir":{:?}}}"#, params_dir.display().to_string())).unwrap();
    let mut engine = std::ptr::null_mut();
    let (st, m) = common::call(|err| unsafe { cuzk_engine_new(cfg.as_ptr(), &mut engine, err) });
    assert_eq!(st, Status::Ok, "{m}");
    let e = engine as *const cuzk_engine;
    use cuzk::kinds::registry::{post_to_number, update_to_number};
    let (w, d, u) = (&kinds.winning, &kinds.window, &kinds.update);
    for (kind, n) in [(CUZK_KIND_WINNING_POST, post_to_number(w.proof)), (CUZK_KIND_WINDOW_POST, post_to_number(d.proof)), (CUZK_KIND_SNAP_DEALS, update_to_number(u.proof))] {
        let (st, m) = common::call(|err| unsafe { cuzk_srs_load_kind(e, kind, n, std::ptr::null(), std::ptr::null_mut(), err) });
        assert_eq!(st, Status::Ok, "{m}");
    }
    // A Window number given as a Winning proof is refused.
    let (st, _) = common::call(|err| unsafe { cuzk_srs_load_kind(e, CUZK_KIND_WINNING_POST, post_to_number(d.proof), std::ptr::null(), std::ptr::null_mut(), err) });
    assert_eq!(st, Status::InvalidArgument);

    let list = |v: &[Vec<u8>]| v.iter().map(|b| cuzk_bytes { ptr: b.as_ptr(), len: b.len() }).collect::<Vec<_>>();
    let wait = |id: u64| -> Vec<u8> {
        let mut proof = std::ptr::null_mut();
        let mut state = -1;
        let (st, m) = common::call(|err| unsafe { cuzk_job_wait(e, id, 600_000, &mut state, &mut proof, err) });
        assert_eq!(st, Status::Ok, "{m}");
        let (mut p, mut n) = (std::ptr::null(), 0usize);
        let (st, _) = common::call(|err| unsafe { cuzk_proof_bytes(proof, &mut p, &mut n, err) });
        assert_eq!(st, Status::Ok);
        let bytes = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
        unsafe { cuzk_proof_free(proof) };
        bytes
    };
    let sectors = |p: &PoStFixture| p.sectors.iter().map(|(id, comm_r)| cuzk_sector { sector_id: *id, comm_r: *comm_r }).collect::<Vec<_>>();

    // WinningPoSt.
    let v = list(&w.vanilla_proofs);
    let mut id = 0;
    let (st, m) = common::call(|err| unsafe {
        cuzk_submit_winning_post(e, post_to_number(w.proof), w.randomness.as_ptr(), w.prover_id.as_ptr(), v.as_ptr(), v.len(), CUZK_PRIORITY_DEFAULT, std::ptr::null(), &mut id, err)
    });
    assert_eq!(st, Status::Ok, "{m}");
    let proof = wait(id);
    assert!(filecoin_proofs_api::post::verify_winning_post(&w.randomness, &proof, &common::replicas(w), w.prover_id).unwrap());
    let s = sectors(w);
    let mut valid = false;
    let (st, m) = common::call(|err| unsafe {
        cuzk_verify_winning_post(e, post_to_number(w.proof), w.randomness.as_ptr(), w.prover_id.as_ptr(), s.as_ptr(), s.len(), proof.as_ptr(), proof.len(), &mut valid, err)
    });
    assert!(st == Status::Ok && valid, "{m}");

    // WindowPoSt, all partitions; then a faulty submission names every sector.
    let v = list(&d.vanilla_proofs);
    let (st, m) = common::call(|err| unsafe {
        cuzk_submit_window_post(e, post_to_number(d.proof), d.randomness.as_ptr(), d.prover_id.as_ptr(), v.as_ptr(), v.len(), -1, CUZK_PRIORITY_DEFAULT, std::ptr::null(), &mut id, err)
    });
    assert_eq!(st, Status::Ok, "{m}");
    let proof = wait(id);
    assert!(filecoin_proofs_api::post::verify_window_post(&d.randomness, &[(d.proof, &proof[..])], &common::replicas(d), d.prover_id).unwrap());
    let s = sectors(d);
    let (st, m) = common::call(|err| unsafe {
        cuzk_verify_window_post(e, post_to_number(d.proof), d.randomness.as_ptr(), d.prover_id.as_ptr(), s.as_ptr(), s.len(), proof.as_ptr(), proof.len(), &mut valid, err)
    });
    assert!(st == Status::Ok && valid, "{m}");
    let mut other = d.randomness;
    other[0] ^= 1;
    let mut err = std::ptr::null_mut();
    let st = unsafe {
        cuzk_submit_window_post(e, post_to_number(d.proof), other.as_ptr(), d.prover_id.as_ptr(), v.as_ptr(), v.len(), -1, CUZK_PRIORITY_DEFAULT, std::ptr::null(), &mut id, &mut err)
    };
    assert_eq!(st, Status::FaultySectors);
    let (mut p, mut n) = (std::ptr::null(), 0usize);
    assert_eq!(unsafe { cuzk_error_sectors(err, &mut p, &mut n) }, Status::Ok);
    let listed = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
    unsafe { cuzk_error_free(err) };
    assert_eq!(listed, d.sectors.iter().map(|s| s.0).collect::<Vec<_>>());

    // SnapDeals.
    let v = list(&u.vanilla_proofs);
    let (st, m) = common::call(|err| unsafe {
        cuzk_submit_snap_deals(e, update_to_number(u.proof), v.as_ptr(), v.len(), u.comm_r_old.as_ptr(), u.comm_r_new.as_ptr(), u.comm_d_new.as_ptr(), CUZK_PRIORITY_DEFAULT, std::ptr::null(), &mut id, err)
    });
    assert_eq!(st, Status::Ok, "{m}");
    let proof = wait(id);
    assert!(filecoin_proofs_api::update::verify_empty_sector_update_proof(u.proof, &proof, u.comm_r_old, u.comm_r_new, u.comm_d_new).unwrap());
    let (st, m) = common::call(|err| unsafe {
        cuzk_verify_snap_deals(e, update_to_number(u.proof), u.comm_r_old.as_ptr(), u.comm_r_new.as_ptr(), u.comm_d_new.as_ptr(), proof.as_ptr(), proof.len(), &mut valid, err)
    });
    assert!(st == Status::Ok && valid, "{m}");
    // NULL list.
    let (st, _) = common::call(|err| unsafe {
        cuzk_submit_snap_deals(e, update_to_number(u.proof), std::ptr::null(), 0, u.comm_r_old.as_ptr(), u.comm_r_new.as_ptr(), u.comm_d_new.as_ptr(), 0, std::ptr::null(), &mut id, err)
    });
    assert_eq!(st, Status::InvalidArgument);
    unsafe { cuzk_engine_free(engine) };
}
