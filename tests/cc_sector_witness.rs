//! At 32 GiB and 64 GiB, on the CPU: a generated committed-capacity sector's partition 0 native
//! witness satisfies every constraint of the recorded circuit (A·w × B·w = C·w row by row, never
//! materializing a, b, c, so it fits 24 GiB), a witness with one value changed does not, and at
//! 32 GiB the native witness equals upstream's witness-only synthesis value for value. Minutes
//! and ~13 GB per size: ignored by `make test`, run by `make check-cc-witness`.

use std::time::Instant;

use cuzk::fixtures::cc_sector_c1;
use cuzk::registry::RegisteredSealProof::{self, *};
use cuzk::synth::{parse_c1, SizeHint};
use ff::Field;

fn check(proof: RegisteredSealProof) {
    let t = Instant::now();
    let (c1, sector) = cc_sector_c1(proof, 31).unwrap();
    let inputs = parse_c1(&c1, &sector.prover_id, sector.sector_id).unwrap();
    drop(c1);
    let [ic, h, l, ..] = cuzk::srs::expected_sections(proof).unwrap();
    let hint = SizeHint { constraints: h + 1, inputs: ic, aux: l };
    eprintln!("{proof:?}: generated and parsed in {:.1} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let r1cs = inputs.circuits.record(0, hint, &|| false).unwrap();
    eprintln!("{proof:?}: recorded in {:.1} s: {:?}", t.elapsed().as_secs_f64(), r1cs.stats());
    let t = Instant::now();
    let mut w = inputs.circuits.witness(0, hint).unwrap();
    eprintln!("{proof:?}: native witness in {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(w.constraints, r1cs.constraints(), "{proof:?}: constraint count");
    let t = Instant::now();
    let bad = r1cs.unsatisfied_rows(&w.input, &w.aux, 10);
    assert!(bad.is_empty(), "{proof:?}: the generated sector's witness breaks constraints {bad:?}");
    eprintln!("{proof:?}: all {} constraints satisfied ({:.1} s)", r1cs.constraints(), t.elapsed().as_secs_f64());
    // The check can fail: one aux value changed breaks a constraint.
    let k = w.aux.len() / 2;
    w.aux[k] += blstrs::Scalar::ONE;
    assert!(!r1cs.unsatisfied_rows(&w.input, &w.aux, 1).is_empty(), "{proof:?}: a changed witness still satisfies the circuit");
    w.aux[k] -= blstrs::Scalar::ONE;
    drop(r1cs);
    if proof == StackedDrg32GiBV1_1 {
        let t = Instant::now();
        let (input, aux) = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().witness_sequential(0).unwrap();
        eprintln!("{proof:?}: upstream witness-only synthesis in {:.1} s", t.elapsed().as_secs_f64());
        assert!(input == w.input, "{proof:?}: public inputs differ from upstream's");
        assert_eq!(aux.len(), w.aux.len(), "{proof:?}: aux count");
        if let Some(i) = aux.iter().zip(&w.aux).position(|(a, b)| a != b) {
            panic!("{proof:?}: aux {i} differs from upstream's");
        }
    }
}

#[test]
#[ignore = "minutes and ~13 GB: make check-cc-witness"]
fn generated_32gib_witness_satisfies_the_recorded_circuit() {
    check(StackedDrg32GiBV1_1);
}

#[test]
#[ignore = "minutes and ~13 GB: make check-cc-witness"]
fn generated_64gib_witness_satisfies_the_recorded_circuit() {
    check(StackedDrg64GiBV1_1);
}
