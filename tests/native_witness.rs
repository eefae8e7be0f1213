//! cuzk's partition witness — SHA-256 (labels, comm_d paths) computed natively, the rest through
//! upstream's gadgets — must equal bellperson's witness-only synthesis of upstream's
//! `StackedCircuit` value for value: every public input, every aux variable, and the constraint
//! count. The real 2 KiB C1 and shaped C1 outputs (exact structure, random values, two seeds) at
//! 8 MiB and 512 MiB (2 layers) and 32 GiB (11 layers: the expander parents of every layer above
//! the first and the 11-row column hash; ~4 GB per witness).

use cuzk::fixtures;
use cuzk::kinds::registry::RegisteredSealProof::{self, *};
use cuzk::kinds::porep::parse_c1;
use cuzk::synth::SizeHint;

/// The real partition's constraint count (counting a 32 GiB blank circuit takes a minute; its
/// count, 130,278,869, is the published one for the 32 GiB PoRep circuit).
fn constraints(proof: RegisteredSealProof) -> usize {
    match proof {
        StackedDrg32GiBV1_1 => 130_278_869,
        p => cuzk::synth::shape::count(p).unwrap().constraints,
    }
}

/// `hint` decides how forks store their values: the SRS's exact sizes (the engine's case) let
/// each challenge write straight into its slot; the default makes each collect its own.
fn assert_native_equals_upstream(
    what: &str,
    inputs: &cuzk::kinds::porep::SealJobInputs,
    proof: RegisteredSealProof,
    hint: SizeHint,
) {
    let constraints = constraints(proof);
    // Two partitions (other challenges, other parents); one at 32 GiB (~2 min upstream there).
    let partitions = if proof == StackedDrg32GiBV1_1 { 1 } else { 2 };
    for k in 0..inputs.circuits.partitions().min(partitions) {
        let t = std::time::Instant::now();
        let native = inputs.circuits.witness(k, hint).unwrap();
        let t_native = t.elapsed();
        let t = std::time::Instant::now();
        let (input, aux) = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().witness_sequential(k).unwrap();
        eprintln!(
            "{what} partition {k}: native {t_native:?}, bellperson witness-only {:?}",
            t.elapsed()
        );
        assert_eq!(
            native.constraints, constraints,
            "{what} partition {k}: constraint count"
        );
        assert_eq!(
            native.input.len(),
            input.len(),
            "{what} partition {k}: input count"
        );
        assert!(
            native.input == input,
            "{what} partition {k}: public inputs differ"
        );
        assert_eq!(
            native.aux.len(),
            aux.len(),
            "{what} partition {k}: aux count"
        );
        if let Some(i) = native.aux.iter().zip(&aux).position(|(a, b)| a != b) {
            panic!("{what} partition {k}: aux {i} of {} differs", aux.len());
        }
    }
}

#[test]
fn native_witness_equals_upstream_2kib() {
    let root = fixtures::default_root();
    let sector = fixtures::ensure_sector(&root, StackedDrg2KiBV1_1, fixtures::DEFAULT_SEED)
        .expect("sector fixture");
    let inputs = parse_c1(
        &sector.c1_json().unwrap(),
        &sector.prover_id,
        sector.sector_id,
    )
    .unwrap();
    assert_native_equals_upstream("2 KiB", &inputs, StackedDrg2KiBV1_1, SizeHint::default());
}

#[test]
fn native_witness_equals_upstream_at_real_shapes() {
    for proof in [
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
    ] {
        for seed in [5, 23] {
            let (prover, sector) = ([seed as u8; 32], seed);
            let c1 = fixtures::shaped_c1(proof, seed, prover, sector).unwrap();
            let inputs = parse_c1(&c1, &prover, sector).unwrap();
            drop(c1);
            let [ic, h, l, ..] = cuzk::srs::expected_sections(proof).unwrap();
            let hint = SizeHint {
                constraints: h + 1,
                inputs: ic,
                aux: l,
            }; // what Srs::size_hint gives
            assert_native_equals_upstream(&format!("{proof:?} seed {seed}"), &inputs, proof, hint);
            if proof == StackedDrg32GiBV1_1 {
                break; // one seed: a 32 GiB pair of witnesses is ~8.4 GB and ~1 min upstream
            }
        }
    }
}
