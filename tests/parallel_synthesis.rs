//! Synthesis with the challenges on all threads must equal upstream's sequential
//! `StackedCircuit` synthesis exactly: every A/B/C value, the witness, and the densities
//! (which decide the query points each MSM uses). A 2 KiB partition has 2 challenges; the
//! shaped C1 outputs (exact structure, random values) cover 8 MiB and 512 MiB with the size hint
//! the engine passes (the SRS's), so the forks' reserved capacity is exercised too. The recorded
//! path (the proof type's R1CS recorded once from its blank circuit, then per partition only the
//! witness, a, b, c as matrix products) must give the same assignment too, and recording the
//! circuit from a partition with its challenges on all threads (what the engine does) must give
//! the blank circuit's recording exactly: every row, every coefficient, every density.

mod common;

use common::{assert_same_assignment as assert_equal, densities};
use cuzk::fixtures;
use cuzk::kinds::porep::parse_c1;
use cuzk::synth::{synthesize_recorded, R1cs, SizeHint};


#[test]
fn parallel_challenges_equal_sequential_synthesis() {
    let root = fixtures::default_root();
    let sector = fixtures::ensure_sector(&root, cuzk::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1, fixtures::DEFAULT_SEED)
        .expect("sector fixture");
    let inputs = parse_c1(&sector.c1_json().unwrap(), &sector.prover_id, sector.sector_id).unwrap();

    let t = std::time::Instant::now();
    let seq = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().synthesize_sequential(0, SizeHint::default()).unwrap();
    let t_seq = t.elapsed();
    let t = std::time::Instant::now();
    let par = inputs.circuits.synthesize(0, SizeHint::default()).unwrap();
    let t_par = t.elapsed();
    eprintln!("2 KiB partition 0: sequential {t_seq:?}, challenges in parallel {t_par:?}");

    assert!(seq.num_constraints() > 1_000_000, "not a real 2 KiB partition: {}", seq.num_constraints());
    assert_equal(&seq, &par, "2 KiB");
    drop(par);

    let t = std::time::Instant::now();
    let r1cs = R1cs::record(cuzk::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1, SizeHint::default(), &|| false).unwrap();
    let t_rec = t.elapsed();
    let t = std::time::Instant::now();
    let rec = synthesize_recorded(inputs.circuits.as_ref(), 0, SizeHint::default(), &r1cs).unwrap();
    eprintln!("2 KiB: R1CS recorded in {t_rec:?} ({:?}); partition 0 through it in {:?}", r1cs.stats(), t.elapsed());
    assert_equal(&seq, &rec, "2 KiB, recorded R1CS");
    // What a copy by tiles of rows sizes its buffers by (the streamed GPU mode): the most terms of
    // any tile, counted tile by tile from the row ends; the first size asked is cached, others not.
    for tr in [1 << 18, 1024, 1 << 18, 3000] {
        let counted = (0..3)
            .flat_map(|q| {
                let end = r1cs.matrix(q).0;
                (0..end.len()).step_by(tr).map(move |r0| end[(r0 + tr).min(end.len()) - 1] - if r0 == 0 { 0 } else { end[r0 - 1] })
            })
            .max()
            .unwrap() as u64;
        assert_eq!(r1cs.most_terms_per_tile(tr), counted, "tiles of {tr} rows");
    }
    let t = std::time::Instant::now();
    let par = inputs.circuits.record(0, SizeHint::default(), &|| false).unwrap();
    eprintln!("2 KiB: R1CS recorded from partition 0 on all threads in {:?} (blank, one thread: {t_rec:?})", t.elapsed());
    assert_same_r1cs(&r1cs, &par, "2 KiB");
}

/// Two recordings of one circuit: the same rows (terms in order, by coefficient value — each
/// recording numbers its coefficient table in the order it met them), counts and densities.
fn assert_same_r1cs(a: &R1cs, b: &R1cs, what: &str) {
    assert_eq!((a.inputs, a.aux, a.constraints()), (b.inputs, b.aux, b.constraints()), "{what}: counts");
    for q in 0..3 {
        let ((ea, ta), (eb, tb)) = (a.matrix(q), b.matrix(q));
        assert!(ea == eb, "{what}: matrix {q} row ends differ");
        assert_eq!(ta.len(), tb.len(), "{what}: matrix {q} term count");
        let value = |r: &R1cs, t: u64| (r.coefficients()[(t >> 32) as usize], t as u32);
        if let Some(i) = ta.iter().zip(tb).position(|(&x, &y)| value(a, x) != value(b, y)) {
            panic!("{what}: matrix {q} term {i} differs");
        }
    }
    let (w_input, w_aux) = (vec![blstrs::Scalar::from(3u64); a.inputs], vec![blstrs::Scalar::from(5u64); a.aux]);
    let w = || cuzk::synth::Witness::of(w_input.clone(), w_aux.clone(), a.constraints());
    let (x, y) = (a.evaluate(w()).unwrap(), b.evaluate(w()).unwrap());
    assert!(densities(&x) == densities(&y), "{what}: densities differ");
}


#[test]
fn parallel_equals_sequential_at_8mib_and_512mib_shapes() {
    use cuzk::kinds::registry::RegisteredSealProof::*;
    for proof in [StackedDrg8MiBV1_1, StackedDrg512MiBV1_1] {
        let (prover, sector) = ([3u8; 32], 17);
        let c1 = fixtures::shaped_c1(proof, 5, prover, sector).unwrap();
        let inputs = parse_c1(&c1, &prover, sector).unwrap();
        let [ic, h, l, ..] = cuzk::srs::expected_sections(proof).unwrap();
        let hint = SizeHint { constraints: h + 1, inputs: ic, aux: l }; // what Srs::size_hint gives
        let seq = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().synthesize_sequential(0, hint).unwrap();
        let par = inputs.circuits.synthesize(0, hint).unwrap();
        assert_equal(&seq, &par, &format!("{proof:?}"));
        drop(par);
        let r1cs = R1cs::record(proof, hint, &|| false).unwrap();
        let rec = synthesize_recorded(inputs.circuits.as_ref(), 0, hint, &r1cs).unwrap();
        assert_equal(&seq, &rec, &format!("{proof:?}, recorded R1CS"));
        let par = inputs.circuits.record(0, hint, &|| false).unwrap();
        assert_same_r1cs(&r1cs, &par, &format!("{proof:?}"));
    }
}
