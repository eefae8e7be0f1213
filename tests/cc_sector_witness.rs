//! At 32 GiB and 64 GiB, on the CPU: a generated committed-capacity sector's partition 0 native
//! witness satisfies every constraint of the recorded circuit (A·w × B·w = C·w row by row, never
//! materializing a, b, c, so it fits 24 GiB), a witness with one value changed does not, and at
//! 32 GiB the engine's synthesis equals upstream's value for value: the witness, a, b, c (the
//! recorded circuit times the native witness, row by row) and the three densities against
//! upstream's circuit synthesized on one thread. a, b, c and the witness are compared by
//! SHA-256 digests of chunks of 2^16 values (upstream's ~17 GB assignment and the recorded
//! circuit do not fit 24 GiB together); a differing chunk names its rows. Minutes and up to
//! ~18 GB per size: ignored by `make test`, run by `make check-cc-witness`.

use std::time::Instant;

use blstrs::Scalar;
use cuzk::fixtures::cc_sector_c1;
use cuzk::kinds::registry::RegisteredSealProof::{self, *};
use cuzk::kinds::porep::parse_c1;
use cuzk::synth::SizeHint;
use ff::{Field, PrimeField};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

const CHUNK: usize = 1 << 16;

/// SHA-256 of each chunk of `CHUNK` values of a vector of `n` given by `value`, on all threads.
fn digests(n: usize, value: impl Fn(usize) -> Scalar + Sync) -> Vec<[u8; 32]> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|k| {
            let mut h = Sha256::new();
            for i in k * CHUNK..((k + 1) * CHUNK).min(n) {
                h.update(value(i).to_repr());
            }
            h.finalize().into()
        })
        .collect()
}

/// Fails naming the first chunk where two digest lists differ.
fn assert_same(ours: &[[u8; 32]], upstream: &[[u8; 32]], what: &str) {
    assert_eq!(ours.len(), upstream.len(), "{what}: lengths differ");
    if let Some(k) = ours.iter().zip(upstream).position(|(a, b)| a != b) {
        panic!("{what} differs from upstream's in values {}..{}", k * CHUNK, (k + 1) * CHUNK);
    }
}

/// Upstream's synthesis of a partition, kept as digests: a, b, c and aux, the inputs and densities.
struct Upstream {
    abc: [Vec<[u8; 32]>; 3],
    aux: Vec<[u8; 32]>,
    input: Vec<Scalar>,
    densities: [bitvec::vec::BitVec; 3],
}

fn check(proof: RegisteredSealProof) {
    let t = Instant::now();
    let (c1, sector) = cc_sector_c1(proof, 31).unwrap();
    let inputs = parse_c1(&c1, &sector.prover_id, sector.sector_id).unwrap();
    drop(c1);
    let [ic, h, l, ..] = cuzk::srs::expected_sections(proof).unwrap();
    let hint = SizeHint { constraints: h + 1, inputs: ic, aux: l };
    eprintln!("{proof:?}: generated and parsed in {:.1} s", t.elapsed().as_secs_f64());
    let upstream = (proof == StackedDrg32GiBV1_1).then(|| {
        let t = Instant::now();
        let u = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().synthesize_sequential(0, hint).unwrap();
        eprintln!("{proof:?}: upstream's synthesis (one thread) in {:.1} s", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let abc = [&u.a, &u.b, &u.c].map(|v| digests(v.len(), |i| v[i]));
        let aux = digests(u.aux.len(), |i| u.aux[i]);
        eprintln!("{proof:?}: upstream's a, b, c and witness digested in {:.1} s", t.elapsed().as_secs_f64());
        let densities = [&u.a_aux_density, &u.b_input_density, &u.b_aux_density].map(|d| d.bv.clone());
        Upstream { abc, aux, input: u.input.clone(), densities }
    });
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
    w.aux[k] += Scalar::ONE;
    assert!(!r1cs.unsatisfied_rows(&w.input, &w.aux, 1).is_empty(), "{proof:?}: a changed witness still satisfies the circuit");
    w.aux[k] -= Scalar::ONE;
    if let Some(u) = upstream {
        let t = Instant::now();
        assert!(u.input == w.input, "{proof:?}: public inputs differ from upstream's");
        assert_same(&digests(w.aux.len(), |i| w.aux[i]), &u.aux, &format!("{proof:?}: the native witness"));
        for (q, name) in ["a", "b", "c"].into_iter().enumerate() {
            let ours = digests(r1cs.constraints(), |r| r1cs.row_value(q, r, &w.input, &w.aux));
            assert_same(&ours, &u.abc[q], &format!("{proof:?}: {name} (the recorded circuit times the native witness)"));
        }
        let [a, bi, ba] = r1cs.densities();
        for (ours, theirs, name) in [(&a.bv, &u.densities[0], "A's aux"), (&bi.bv, &u.densities[1], "B's input"), (&ba.bv, &u.densities[2], "B's aux")] {
            assert!(ours == theirs, "{proof:?}: {name} density differs from upstream's");
        }
        eprintln!("{proof:?}: witness, a, b, c and densities equal upstream's ({:.1} s)", t.elapsed().as_secs_f64());
    }
}

#[test]
#[ignore = "minutes and up to ~18 GB: make check-cc-witness"]
fn generated_32gib_witness_satisfies_the_recorded_circuit_and_equals_upstream() {
    check(StackedDrg32GiBV1_1);
}

#[test]
#[ignore = "minutes and ~13 GB: make check-cc-witness"]
fn generated_64gib_witness_satisfies_the_recorded_circuit() {
    check(StackedDrg64GiBV1_1);
}
