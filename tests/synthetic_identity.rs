//! The CPU backend against bellperson's `create_proof_batch` on small synthetic circuits, with
//! fixed r, s: proofs must be byte-identical. Covers non-power-of-two sizes, all-zero and
//! all-one witness regions, a single constraint, and several public inputs.

use bellperson::groth16::{create_proof_batch, generate_random_parameters, prepare_verifying_key, verify_proof};
use blstrs::{Bls12, Scalar};
use cuzk::prover::{Backend, CpuBackend};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::srs::Srs;
use cuzk::synth::{Assignment, SizeHint, Toy};
use ff::{Field, PrimeField};
use rand::SeedableRng;

fn check(c: Toy, seed: u64) {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters::<Bls12, _, _>(c.clone(), &mut rng).unwrap();
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let reference = create_proof_batch(vec![c.clone()], &params, vec![r], vec![s]).unwrap().pop().unwrap();

    let srs = Srs::from_parameters(RegisteredSealProof::StackedDrg2KiBV1_1, params);
    let asg = Assignment::synthesize(c.clone(), SizeHint::default()).unwrap();
    let public: Vec<Scalar> = asg.input[1..].to_vec();
    let ours = CpuBackend::default().prove(&srs, asg, r, s).unwrap().proof;

    let (mut a, mut b) = (Vec::new(), Vec::new());
    reference.write(&mut a).unwrap();
    ours.write(&mut b).unwrap();
    assert_eq!(a, b, "proof differs from bellperson for {} constraints, {} inputs, mode {}", c.constraints, c.inputs, c.mode);
    let pvk = prepare_verifying_key(&srs.params.vk);
    assert!(verify_proof(&pvk, &ours, &public).unwrap());
    let _ = Scalar::from_u128(0);
}

#[test]
fn byte_identical_to_bellperson_mixed_witness() {
    check(Toy { constraints: 1000, inputs: 3, mode: 2 }, 1); // non-power-of-two
    check(Toy { constraints: 1 << 10, inputs: 1, mode: 2 }, 2);
}

#[test]
fn byte_identical_all_zero_and_all_one_witness() {
    check(Toy { constraints: 300, inputs: 0, mode: 0 }, 3);
    check(Toy { constraints: 300, inputs: 2, mode: 1 }, 4);
}

#[test]
fn byte_identical_single_constraint() {
    check(Toy { constraints: 1, inputs: 0, mode: 2 }, 5);
}

#[test]
fn mismatched_srs_is_an_error_not_a_panic() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
    let small = Toy { constraints: 10, inputs: 0, mode: 2 };
    let params = generate_random_parameters::<Bls12, _, _>(small, &mut rng).unwrap();
    let srs = Srs::from_parameters(RegisteredSealProof::StackedDrg2KiBV1_1, params);
    let big = Assignment::synthesize(Toy { constraints: 100, inputs: 0, mode: 2 }, SizeHint::default()).unwrap();
    let e = CpuBackend::default().prove(&srs, big, Scalar::ONE, Scalar::ONE).err().expect("must fail");
    assert!(e.message.contains("does not match the SRS"), "{}", e.message);
}
