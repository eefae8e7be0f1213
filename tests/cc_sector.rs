//! Generated committed-capacity sectors (`cuzk::fixtures::cc_sector_c1`, `cuzk-fixture
//! cc-sector`): filecoin-proofs' vanilla verifier accepts them at 2 KiB, 8 MiB and 512 MiB, as
//! `seal_commit_phase1` checks its own output; and a generated 2 KiB sector's C2 through the
//! engine verifies with filecoin-proofs' `verify_seal`, its proof for fixed r, s byte-identical to
//! bellperson's. (32 and 64 GiB: `make check-cc-sectors`.)

mod common;

use std::time::{Duration, Instant};

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use cuzk::fixtures::{cc_sector_c1, verify_c1};
use cuzk::prover::{Backend, CpuBackend};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::srs::{Srs, Validation};

#[test]
fn upstream_accepts_generated_sectors_2kib_8mib_512mib() {
    for proof in [RegisteredSealProof::StackedDrg2KiBV1_1, RegisteredSealProof::StackedDrg8MiBV1_1, RegisteredSealProof::StackedDrg512MiBV1_1] {
        let t = Instant::now();
        let (c1, sector) = cc_sector_c1(proof, 21).unwrap();
        let made = t.elapsed().as_secs_f64();
        assert!(verify_c1(&c1, &sector).unwrap(), "{proof:?}: filecoin-proofs rejects the generated vanilla proofs");
        // The engine's own C1 checks accept it for the sector it describes.
        let inputs = cuzk::kinds::porep::parse_c1(&c1, &sector.prover_id, sector.sector_id).unwrap();
        assert_eq!(inputs.comm_r, sector.comm_r);
        eprintln!("{proof:?}: generated in {made:.2} s ({} MB), vanilla proofs verified", c1.len() >> 20);
    }
}

#[test]
fn engine_proof_of_a_generated_2kib_sector_verifies() {
    let f = common::fixture(); // the 2 KiB params, and filecoin-proofs' parameter cache pointed at them
    let (c1, sector) = cc_sector_c1(common::PROOF, 22).unwrap();

    // Fixed r, s: the CPU backend's proof equals bellperson's and verifies.
    let srs = Srs::load(common::PROOF, &f.params, Validation::None).unwrap();
    let inputs = cuzk::kinds::porep::parse_c1(&c1, &sector.prover_id, sector.sector_id).unwrap();
    let (r, s) = (Scalar::from(3u64), Scalar::from(5u64));
    let reference = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().bellperson_reference(0, &srs.params, r, s).unwrap();
    let ours = CpuBackend::default().prove(&srs, inputs.circuits.synthesize(0, srs.size_hint()).unwrap(), r, s).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    reference.write(&mut a).unwrap();
    ours.proof.write(&mut b).unwrap();
    assert_eq!(a, b, "cuzk's proof of the generated sector differs from bellperson's for fixed r, s");
    assert!(common::filecoin_verify_sector(&sector, &b), "filecoin-proofs rejects the fixed-r,s proof of the generated sector");

    // Through the engine.
    let engine = Engine::new(EngineConfig { params_dir: Some(f.params_dir.clone()), ..Default::default() }).unwrap();
    engine.srs_load(common::PROOF, None).unwrap();
    let id = engine.submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None }).unwrap();
    let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    let res = snap.result.unwrap();
    assert!(res.verified);
    assert!(common::filecoin_verify_sector(&sector, &res.proof), "filecoin-proofs rejects the engine's proof of the generated sector");
}
