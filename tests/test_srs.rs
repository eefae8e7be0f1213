//! A generated test SRS (`cuzk::fixtures::test_srs`, `cuzk-fixture srs`) is a genuine Groth16
//! SRS for the recorded circuit: at 2 KiB its sections have the real params' sizes; a generated
//! sector's proof under it verifies against its verifying key with bellperson's verifier, and a
//! witness with one value changed gives a proof that does not; written in bellperson's params
//! format under filecoin-proofs' file names, the engine loads it (params and .vk, checked as any),
//! proves the sector and verifies the proof.

use std::time::{Duration, Instant};

use bellperson::groth16::{prepare_verifying_key, verify_proof};
use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use cuzk::fixtures::{cc_sector_c1, test_srs};
use cuzk::prover::{Backend, CpuBackend};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::srs::Srs;
use cuzk::kinds::porep::parse_c1;
use cuzk::synth::{R1cs, SizeHint};
use ff::Field;

const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

#[test]
fn generated_srs_proves_and_verifies_at_2kib() {
    let sections = cuzk::srs::expected_sections(PROOF).unwrap();
    let [ic, h, l, ..] = sections;
    let hint = SizeHint { constraints: h + 1, inputs: ic, aux: l };
    let t = Instant::now();
    let r1cs = R1cs::record(PROOF, hint, &|| false).unwrap();
    let recorded = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let params = test_srs(&r1cs, 99).unwrap();
    eprintln!("2 KiB: circuit recorded in {recorded:.1} s, test SRS generated in {:.1} s", t.elapsed().as_secs_f64());
    let p = &params;
    assert_eq!([p.vk.ic.len(), p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()], sections, "sections differ from the real params'");

    // Written as filecoin-proofs' params and vk files, for the engine below.
    let dir = std::env::temp_dir().join(format!("cuzk-test-srs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(cuzk::kinds::CircuitId::Seal(PROOF).params_file_name().unwrap())).unwrap());
    params.write(&mut f).unwrap();
    drop(f);
    let mut f = std::fs::File::create(dir.join(cuzk::kinds::CircuitId::Seal(PROOF).vk_file_name().unwrap())).unwrap();
    params.vk.write(&mut f).unwrap();
    drop(f);

    let (c1, sector) = cc_sector_c1(PROOF, 5).unwrap();
    let inputs = parse_c1(&c1, &sector.prover_id, sector.sector_id).unwrap();
    let srs = Srs::from_parameters(PROOF, params);
    let pvk = prepare_verifying_key(&srs.params.vk);
    let (r, s) = (Scalar::from(12u64), Scalar::from(34u64));
    let prove = |w: cuzk::synth::Witness| {
        let asg = r1cs.evaluate(w).unwrap();
        let public: Vec<Scalar> = asg.input[1..].to_vec();
        let proof = CpuBackend::default().prove(&srs, asg, r, s).unwrap().proof;
        verify_proof(&pvk, &proof, &public).unwrap()
    };
    assert!(prove(inputs.circuits.witness(0, hint).unwrap()), "a proof under the generated SRS does not verify against its vk");
    let mut w = inputs.circuits.witness(0, hint).unwrap();
    let k = w.aux.len() / 3;
    w.aux[k] += Scalar::ONE;
    assert!(!prove(w), "a proof of a changed witness verifies under the generated SRS");

    // Through the engine, loaded from the files like any params.
    let engine = Engine::new(EngineConfig { params_dir: Some(dir.clone()), backend: "cpu".into(), ..Default::default() }).unwrap();
    engine.srs_load(PROOF, None).unwrap();
    let id = engine.submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None }).unwrap();
    let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    assert!(snap.result.unwrap().verified, "the engine's own verification (the generated .vk) failed");
    drop(engine);
    std::fs::remove_dir_all(&dir).unwrap();

    // Handed to an engine in memory (no files), as the GPU benchmark does at 32 GiB.
    let engine = Engine::new(EngineConfig { backend: "cpu".into(), ..Default::default() }).unwrap();
    engine.adopt_srs(std::sync::Arc::new(srs)).unwrap();
    let id = engine.submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None }).unwrap();
    let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    let res = snap.result.unwrap();
    assert!(res.verified, "the engine's verification against the adopted SRS's vk failed");
    assert!(verify_proof(&pvk, &bellperson::groth16::Proof::read(&res.proof[..]).unwrap(), &inputs_public(&c1, &sector)).unwrap());
}

/// The public inputs of partition 0 of a generated sector (for bellperson's verifier).
fn inputs_public(c1: &[u8], sector: &cuzk::fixtures::SectorFixture) -> Vec<Scalar> {
    let inputs = parse_c1(c1, &sector.prover_id, sector.sector_id).unwrap();
    let asg = inputs.circuits.synthesize(0, SizeHint::default()).unwrap();
    asg.input[1..].to_vec()
}
