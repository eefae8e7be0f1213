//! Synthesis with the challenges on all threads must equal upstream's sequential
//! `StackedCircuit` synthesis exactly: every A/B/C value, the witness, and the densities
//! (which decide the query points each MSM uses). A 2 KiB partition has 2 challenges.

use cuzk::fixtures;
use cuzk::synth::{parse_c1, Assignment, SizeHint};

fn densities(a: &Assignment) -> [(Vec<bool>, usize); 3] {
    [&a.a_aux_density, &a.b_aux_density, &a.b_input_density].map(|d| (d.bv.iter().by_vals().collect(), d.total_density))
}

#[test]
fn parallel_challenges_equal_sequential_synthesis() {
    let root = fixtures::default_root();
    let sector = fixtures::ensure_sector(&root, cuzk::registry::RegisteredSealProof::StackedDrg2KiBV1_1, fixtures::DEFAULT_SEED)
        .expect("sector fixture");
    let inputs = parse_c1(&sector.c1_json().unwrap(), &sector.prover_id, sector.sector_id).unwrap();

    let t = std::time::Instant::now();
    let seq = inputs.circuits.synthesize_sequential(0, SizeHint::default()).unwrap();
    let t_seq = t.elapsed();
    let t = std::time::Instant::now();
    let par = inputs.circuits.synthesize(0, SizeHint::default()).unwrap();
    let t_par = t.elapsed();
    eprintln!("2 KiB partition 0: sequential {t_seq:?}, challenges in parallel {t_par:?}");

    assert_eq!(seq.num_constraints(), par.num_constraints());
    assert!(seq.num_constraints() > 1_000_000, "not a real 2 KiB partition: {}", seq.num_constraints());
    assert!(seq.input == par.input, "public inputs differ");
    assert!(seq.aux == par.aux, "witness differs");
    assert!(seq.a == par.a, "A evaluations differ");
    assert!(seq.b == par.b, "B evaluations differ");
    assert!(seq.c == par.c, "C evaluations differ");
    assert!(densities(&seq) == densities(&par), "densities differ");
}
