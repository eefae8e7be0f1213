//! `cuzk-bench cpu-post`: one PoSt partition proved on the CPU — the proof the urgent prover makes
//! while the GPU is busy — by cuzk's CPU backend (the recorded circuit's witness and a, b, c,
//! then `CpuBackend::prove`, by phase) against bellperson's `create_proof_batch` (full synthesis
//! and proof, as filecoin-proofs proves on the CPU), interleaved, with the same r, s: the two
//! proofs must be byte-identical. Generated inputs (fixtures::cc_post) under a generated test
//! SRS of the recorded circuit (fixtures::test_srs: seeded toxic waste, a test SRS).

use std::time::Instant;

use blstrs::Scalar;
use cuzk::kinds::{CircuitId, RegisteredPoStProof};
use cuzk::prover::{Backend, CpuBackend};
use cuzk::srs::Srs;
use ff::Field;
use group::prime::PrimeCurveAffine;

pub fn run(proof: RegisteredPoStProof, runs: usize) {
    let circuit = CircuitId::from(proof);
    let f = cuzk::fixtures::cc_post(proof, 1, 21).expect("generated PoSt");
    let inputs = f.proof_request(None).parse().expect("inputs");
    let hint = cuzk::srs::expected_size_hint(circuit).expect("shape");
    let t = Instant::now();
    let r1cs = inputs.circuits.record(0, hint, &|| false).expect("recording");
    println!("{}: recorded in {:.1}s, {:?}", circuit.name(), t.elapsed().as_secs_f64(), r1cs.stats());
    let t = Instant::now();
    let params = cuzk::fixtures::test_srs(&r1cs, 21).expect("test SRS");
    let srs = Srs::from_parameters(circuit, params.clone());
    println!("TEST SRS in {:.1}s", t.elapsed().as_secs_f64());
    let upstream = cuzk::synth::upstream::of(inputs.circuits.as_ref()).expect("upstream paths");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut rng = rand::rngs::OsRng;
    for run in 0..runs {
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let t = Instant::now();
        let witness = inputs.circuits.witness(0, srs.size_hint()).expect("witness");
        let asg = r1cs.evaluate(witness).expect("a, b, c");
        let synth = t.elapsed().as_secs_f64();
        let p = CpuBackend::default().prove(&srs, asg, r, s).expect("cuzk proof");
        let took = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let reference = upstream.bellperson_reference(0, &params, r, s).expect("bellperson proof");
        let peer = t.elapsed().as_secs_f64();
        let same = p.proof == reference && !bool::from(p.proof.a.is_identity());
        assert!(same, "run {run}: cuzk's proof differs from bellperson's for the same r, s");
        let phases: Vec<String> = p.phases.0.iter().map(|(n, d)| format!("{n} {:.3}", d.as_secs_f64())).collect();
        println!("run {run}: cuzk {took:.3}s (witness and a, b, c {synth:.3}; {}), bellperson {peer:.3}s, byte-identical", phases.join(", "));
        ours.push(took);
        theirs.push(peer);
    }
    let (o, t) = (crate::median(&ours), crate::median(&theirs));
    println!("{}: cuzk CPU {o:.3}s, bellperson create_proof_batch {t:.3}s (medians of {runs}), ratio {:.2}x", circuit.name(), t / o);
    println!("{}", serde_json::json!({"bench": "cpu-post", "proof": circuit.name(), "cuzk_s": o, "bellperson_s": t, "speedup": t / o, "runs": runs}));
}
