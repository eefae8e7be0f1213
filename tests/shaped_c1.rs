//! The shaped C1 generator (fixtures::shaped_c1) against the real thing: at 2 KiB its JSON has
//! exactly the structure of a sealed sector's C1 (same keys, same array lengths everywhere, same
//! variant tags); at 2 KiB, 8 MiB and 512 MiB it passes the submit-time validation and its
//! partition circuit has exactly the constraint / input / aux counts of the real circuit (the
//! counts the params sections are checked against). 32 GiB is timed by `cuzk-bench synth-shaped`.

mod common;

use cuzk::kinds::registry::RegisteredSealProof;
use serde_json::Value;

/// The structure of a JSON value: objects by key, arrays by length (32-number arrays are field
/// elements), scalars by type.
fn skeleton(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), skeleton(x))).collect()),
        Value::Array(a) if a.len() == 32 && a.iter().all(Value::is_u64) => Value::String("element".into()),
        Value::Array(a) => Value::Array(vec![Value::from(a.len()), a.first().map(skeleton).unwrap_or(Value::Null)]),
        Value::Number(_) => Value::String("number".into()),
        other => other.clone(),
    }
}

#[test]
fn shaped_2kib_c1_has_the_structure_of_a_real_one() {
    let real = cuzk::fixtures::ensure_sector(&cuzk::fixtures::default_root(), common::PROOF, cuzk::fixtures::DEFAULT_SEED).unwrap();
    let real_json: Value = serde_json::from_slice(&real.c1_json().unwrap()).unwrap();
    let shaped = cuzk::fixtures::shaped_c1(common::PROOF, 1, real.prover_id, real.sector_id).unwrap();
    let shaped_json: Value = serde_json::from_slice(&shaped).unwrap();
    assert_eq!(skeleton(&shaped_json), skeleton(&real_json));
    assert_eq!(shaped_json["registered_proof"], real_json["registered_proof"]);
    // Deterministic by seed.
    assert_eq!(shaped, cuzk::fixtures::shaped_c1(common::PROOF, 1, real.prover_id, real.sector_id).unwrap());
}

#[test]
fn shaped_c1_synthesizes_to_the_real_circuit_shape() {
    use RegisteredSealProof::*;
    for proof in [StackedDrg2KiBV1_1, StackedDrg8MiBV1_1, StackedDrg512MiBV1_1] {
        let (prover, sector) = ([7u8; 32], 42);
        let c1 = cuzk::fixtures::shaped_c1(proof, 3, prover, sector).unwrap();
        let inputs = cuzk::kinds::porep::parse_c1(&c1, &prover, sector).unwrap_or_else(|e| panic!("{proof:?}: {}", e.message));
        let want = cuzk::synth::shape::count(proof).unwrap();
        let hint = cuzk::synth::SizeHint { constraints: want.constraints, inputs: want.ic, aux: want.l };
        let asg = inputs.circuits.synthesize(0, hint).unwrap();
        assert_eq!(asg.num_constraints(), want.constraints, "{proof:?} constraints");
        assert_eq!(asg.input.len(), want.ic, "{proof:?} inputs");
        assert_eq!(asg.aux.len(), want.l, "{proof:?} aux");
        assert_eq!(inputs.circuits.partitions(), cuzk::kinds::porep::validate::Shape::of(proof).unwrap().partitions);
    }
}
