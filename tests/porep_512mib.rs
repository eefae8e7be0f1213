//! A real 512 MiB PoRep C2: a sector sealed with filecoin-proofs (PC1, PC2, C1) and seeded params,
//! proved through the engine (recorded circuit, witness-only synthesis on the second job) and
//! accepted by filecoin-proofs' `verify_seal`; with fixed r, s the CPU backend's proof equals
//! bellperson's `create_proof_batch` byte for byte. The one size above 8 MiB proven for real.
//!
//! Ignored by default: the fixture (params of 4.4 M constraints, a 512 MiB sector sealed) takes
//! ~30 min on 2 cores the first time; it is cached in the fixture root afterwards. Run it with
//! `make test-512mib` (or `cargo test --release --test porep_512mib -- --ignored`).

mod common;

use std::time::{Duration, Instant};

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use cuzk::fixtures::{self, SectorFixture};
use cuzk::prover::{Backend, CpuBackend};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::srs::{Srs, Validation};
use ff::Field;
use rand::SeedableRng;

const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg512MiBV1_1;

fn fixture() -> (std::path::PathBuf, std::path::PathBuf, SectorFixture) {
    let root = fixtures::default_root();
    let params_dir = fixtures::params_dir(&root);
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir); // before filecoin-proofs reads its settings
    let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED).expect("512 MiB params");
    let sector = fixtures::ensure_sector(&root, PROOF, fixtures::DEFAULT_SEED).expect("512 MiB sector");
    (params_dir, params, sector)
}

#[test]
#[ignore = "needs the 512 MiB fixture (~30 min on 2 cores the first time): make test-512mib"]
fn real_512mib_c2_verifies_with_filecoin_proofs() {
    let (params_dir, params, sector) = fixture();
    let c1 = sector.c1_json().expect("c1");

    // Fixed r, s: the CPU backend equals bellperson, and that proof verifies.
    let srs = Srs::load(PROOF, &params, Validation::None).unwrap();
    let inputs = cuzk::kinds::porep::parse_c1(&c1, &sector.prover_id, sector.sector_id).unwrap();
    assert_eq!(inputs.circuits.partitions(), 1);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(512);
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let t = Instant::now();
    let reference = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().bellperson_reference(0, &srs.params, r, s).unwrap();
    let bellperson_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let asg = inputs.circuits.synthesize(0, srs.size_hint()).unwrap();
    let ours = CpuBackend::default().prove(&srs, asg, r, s).unwrap();
    let cuzk_s = t.elapsed().as_secs_f64();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    reference.write(&mut a).unwrap();
    ours.proof.write(&mut b).unwrap();
    assert_eq!(a, b, "512 MiB: cuzk's proof differs from bellperson's create_proof_batch for fixed r, s");
    assert!(common::filecoin_verify_sector(&sector, &b), "filecoin-proofs rejects the fixed-r,s proof");
    eprintln!("512 MiB partition: bellperson {bellperson_s:.1} s, cuzk synthesis + CPU prove {cuzk_s:.1} s, byte-identical");
    drop((srs, inputs));

    // Through the engine, twice: the first job records the circuit, the second synthesizes only
    // its witness. Both verify.
    let engine = Engine::new(EngineConfig { params_dir: Some(params_dir), ..Default::default() }).unwrap();
    engine.srs_load(PROOF, None).unwrap();
    let mut proofs = Vec::new();
    for i in 0..2 {
        let t = Instant::now();
        let id = engine
            .submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None })
            .unwrap();
        let snap = engine.wait(id, Some(Duration::from_secs(3600))).unwrap();
        assert_eq!(snap.state, JobState::Done, "job {i}: {:?}", snap.error);
        let res = snap.result.unwrap();
        assert!(res.verified);
        assert!(common::filecoin_verify_sector(&sector, &res.proof), "job {i}: filecoin-proofs rejects the engine's proof");
        eprintln!("512 MiB C2 job {i} ({}): {:.1} s {}", engine.backend_name(), t.elapsed().as_secs_f64(), cuzk::engine::result_json(&res));
        proofs.push(res.proof.clone());
    }
    assert_ne!(proofs[0], proofs[1], "fresh r, s per proof");
}
