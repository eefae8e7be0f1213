//! The params-shape table (`srs::shape`) against the circuits it describes: every kind's small
//! sizes recounted from upstream's blank circuits (the 32/64 GiB rows were counted the same way
//! by `cuzk-fixture --shape`, minutes each), and the 2 KiB fixture params of every kind have
//! exactly their row's section sizes.

mod common;

use cuzk::kinds::{CircuitId, RegisteredPoStProof, RegisteredUpdateProof};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::synth::shape::count_circuit;

fn sections(c: &cuzk::synth::shape::CircuitShape) -> [usize; 6] {
    [c.ic, c.h, c.l, c.a, c.b, c.b]
}

#[test]
fn the_table_is_what_the_circuits_count() {
    use RegisteredPoStProof::*;
    let circuits: Vec<CircuitId> = vec![
        RegisteredSealProof::StackedDrg2KiBV1_1.into(),
        StackedDrgWinning2KiBV1.into(),
        StackedDrgWinning8MiBV1.into(),
        StackedDrgWinning512MiBV1.into(),
        StackedDrgWinning32GiBV1.into(),
        StackedDrgWinning64GiBV1.into(),
        StackedDrgWindow2KiBV1.into(),
        StackedDrgWindow2KiBV1_2.into(),
        StackedDrgWindow8MiBV1_2.into(),
        StackedDrgWindow512MiBV1_2.into(),
        RegisteredUpdateProof::StackedDrg2KiBV1.into(),
        RegisteredUpdateProof::StackedDrg8MiBV1.into(),
    ];
    for c in circuits {
        let counted = sections(&count_circuit(c).unwrap());
        assert_eq!(cuzk::srs::expected_shape(c).unwrap(), counted, "{}", c.name());
    }
}

#[test]
fn every_kinds_fixture_params_have_their_rows_shape() {
    let kinds = common::kind_fixtures();
    let f = common::fixture();
    let mut circuits: Vec<CircuitId> = kinds.circuits().to_vec();
    circuits.push(common::PROOF.into());
    for c in circuits {
        let path = f.params_dir.join(c.params_file_name().unwrap());
        let srs = cuzk::srs::Srs::load(c, &path, cuzk::srs::Validation::None).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        let p = &srs.params;
        let got = [p.vk.ic.len(), p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()];
        assert_eq!(got, cuzk::srs::expected_shape(c).unwrap(), "{}", c.name());
    }
}

/// The production rows of SnapDeals and WindowPoSt (issue 38's 32 GiB shapes) recounted from
/// upstream's blank circuits: inputs (ic), aux (l), the domain (h) and the query sizes, with the
/// constraint count printed. Minutes on 2 cores (WindowPoSt 32 GiB: ~3 min): `make check-kind-shapes`.
#[test]
#[ignore = "minutes: make check-kind-shapes"]
fn the_production_rows_are_what_the_circuits_count() {
    let circuits: Vec<CircuitId> = vec![
        RegisteredUpdateProof::StackedDrg32GiBV1.into(),
        RegisteredUpdateProof::StackedDrg64GiBV1.into(),
        RegisteredPoStProof::StackedDrgWindow32GiBV1_2.into(),
    ];
    for c in circuits {
        let t = std::time::Instant::now();
        let counted = count_circuit(c).unwrap();
        eprintln!(
            "{}: {} constraints, {} inputs, {} aux, counted in {:.1} s",
            c.name(),
            counted.constraints,
            counted.ic,
            counted.l,
            t.elapsed().as_secs_f64()
        );
        assert_eq!(cuzk::srs::expected_shape(c).unwrap(), sections(&counted), "{}", c.name());
    }
}
