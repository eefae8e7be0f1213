//! The engine records a proof type's circuit (R1CS) in the background at its first job, then
//! synthesizes only witnesses: the proofs of both paths verify with filecoin-proofs, the status
//! reports the recording, and `"record_circuits": false` keeps every partition on the full path.

mod common;

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState};
use serde_json::Value;

fn circuits(engine: &Engine) -> Vec<Value> {
    let status: Value = serde_json::from_str(&engine.status_json()).unwrap();
    status["circuits"].as_array().cloned().unwrap_or_default()
}

fn prove(engine: &Engine, f: &common::Fixture) -> std::sync::Arc<cuzk::engine::JobResult> {
    let id = common::submit(engine, f);
    let snap = engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error.map(|e| e.to_string()));
    let r = snap.result.unwrap();
    assert!(r.verified);
    assert!(common::filecoin_verify(f, &r.proof), "filecoin-proofs rejects the proof");
    r
}

#[test]
fn recorded_circuit_proofs_verify() {
    let f = common::fixture();
    let engine = Engine::new(EngineConfig { params_dir: Some(f.params_dir.clone()), backend: "cpu".into(), ..Default::default() }).unwrap();
    engine.srs_load(common::PROOF, None).unwrap();
    assert!(circuits(&engine).is_empty(), "nothing is recorded before a job");
    let first = prove(&engine, &f);

    let t = Instant::now();
    let ready = loop {
        let c = circuits(&engine);
        assert_eq!(c.len(), 1, "one proof type, one circuit: {c:?}");
        match c[0]["state"].as_str() {
            Some("ready") => break c[0].clone(),
            Some("recording") if t.elapsed() < Duration::from_secs(300) => std::thread::sleep(Duration::from_millis(100)),
            _ => panic!("the circuit was not recorded: {c:?}"),
        }
    };
    assert_eq!(ready["registered_proof"], "StackedDrg2KiBV1_1");
    assert_eq!(ready["constraints"], 2_687_961);
    eprintln!("recorded: {ready}");

    let second = prove(&engine, &f);
    let phases = |r: &cuzk::engine::JobResult| r.timings.phases.0.iter().map(|(n, _)| *n).collect::<Vec<_>>();
    assert!(phases(&second).contains(&"synthesis_witness"), "the second job must use the recorded circuit: {:?}", phases(&second));
    assert!(phases(&second).contains(&"synthesis_abc"));
    eprintln!(
        "synthesis: first job {:?} (full unless the recording was already done), second {:?} (witness + a, b, c)",
        first.timings.synthesis, second.timings.synthesis
    );
}

#[test]
fn record_circuits_false_synthesizes_in_full() {
    let f = common::fixture();
    let engine = Engine::new(EngineConfig {
        params_dir: Some(f.params_dir.clone()),
        backend: "cpu".into(),
        record_circuits: false,
        ..Default::default()
    })
    .unwrap();
    engine.srs_load(common::PROOF, None).unwrap();
    let r = prove(&engine, &f);
    assert!(circuits(&engine).is_empty());
    assert!(!r.timings.phases.0.iter().any(|(n, _)| *n == "synthesis_witness"));
}
