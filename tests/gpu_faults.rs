//! GPU faults (feature `cuda-fault-injection`, run on the GPU machine by
//! `scripts/gpu-run.sh faults`; skips without a CUDA device). Real CUDA errors are injected into
//! the 2 KiB C2's GPU stages through the engine with `"backend": "cuda"`:
//! - with two lanes, out of device memory in stage H: the proof is retried with one workspace
//!   and succeeds, and the device reports one lane from then on;
//! - with one lane, out of device memory (a failed allocation) in stage H, then inside an MSM:
//!   the partition is proved on the CPU instead and the job succeeds (a failed WindowPoSt costs
//!   its sectors' power; a slower proof does not), the device stays usable with the failure
//!   counted, and the next job proves on the GPU;
//! - a sticky error (an out-of-bounds kernel write, the device's context lost) inside an MSM,
//!   where sppark's own destructor would throw and terminate the process: the job fails, the
//!   status marks the device unusable with the reason, and the next job is proved on the CPU.
//! Every proof that is returned is checked with filecoin-proofs' verifier.
#![cfg(feature = "cuda-fault-injection")]

mod common;

use std::time::Duration;

use cuzk::engine::{Engine, EngineConfig, JobState};
use cuzk::error::Status;
use cuzk::prover::{CudaBackend, FaultKind, FaultSite};
use serde_json::Value;

fn device0(engine: &Engine) -> Value {
    let status: Value = serde_json::from_str(&engine.status_json()).unwrap();
    status["devices"][0].clone()
}

/// Submit the fixture's C2 and wait for its end.
fn prove(engine: &Engine, f: &common::Fixture) -> cuzk::engine::JobSnapshot {
    let id = common::submit(engine, f);
    let snap = engine.wait(id, Some(Duration::from_secs(600))).expect("wait");
    assert!(snap.state.is_final(), "job {id} did not end");
    snap
}

fn expect_proved(engine: &Engine, f: &common::Fixture, on_cpu: bool, what: &str) {
    let snap = prove(engine, f);
    assert_eq!(snap.state, JobState::Done, "{what}: {:?}", snap.error.map(|e| e.to_string()));
    let r = snap.result.unwrap();
    assert!(r.verified, "{what}: not self-verified");
    assert!(common::filecoin_verify(f, &r.proof), "{what}: filecoin-proofs rejects the proof");
    let fallback = if on_cpu { r.partitions } else { 0 };
    assert_eq!(r.cpu_fallback_partitions, fallback, "{what}: partitions proved on the CPU");
    println!("PASS {what}: proved ({} partition(s), {} on the CPU), verified", r.partitions, r.cpu_fallback_partitions);
}

fn expect_failed(engine: &Engine, f: &common::Fixture, kind: FaultKind, site: FaultSite, needle: &str) -> String {
    CudaBackend::inject_fault(kind, site).expect("arm the fault");
    let snap = prove(engine, f);
    assert_eq!(snap.state, JobState::Failed, "{kind:?} at {site:?}: the job must fail");
    let e = snap.error.expect("a failed job carries its error");
    assert_eq!(e.status, Status::Prover, "{kind:?} at {site:?}: {e}");
    assert!(e.message.contains("CUDA device 0"), "{kind:?} at {site:?}: message names no device: {e}");
    assert!(e.message.to_lowercase().contains(needle), "{kind:?} at {site:?}: message lacks {needle:?}: {e}");
    println!("PASS {kind:?} at {site:?}: job failed with: {}", e.message);
    e.message
}

#[test]
fn gpu_faults_fail_one_job_and_the_engine_keeps_serving() {
    if let Err(e) = CudaBackend::new() {
        eprintln!("SKIP gpu_faults: no CUDA device ({})", e.message);
        return;
    }
    let f = common::fixture();
    let config = |lanes: usize| EngineConfig {
        backend: "cuda".into(),
        params_dir: Some(f.params_dir.clone()),
        synthesis_workers: 2,
        gpu_lanes: lanes,
        ..Default::default()
    };

    // Two lanes: out of device memory, the proof is retried with one workspace and succeeds.
    {
        let engine = Engine::new(config(2)).unwrap();
        engine.srs_load(common::PROOF, None).unwrap();
        expect_proved(&engine, &f, false, "two lanes, before any fault");
        assert_eq!(device0(&engine)["lanes"], 2);
        CudaBackend::inject_fault(FaultKind::Error, FaultSite::StageH).expect("arm the fault");
        expect_proved(&engine, &f, false, "two lanes, out of memory in stage H: retried on one lane");
        let d = device0(&engine);
        assert_eq!((d["lanes"].clone(), d["usable"].clone(), d["failures"].clone()), (1.into(), true.into(), 0.into()), "{d}");
        assert!(engine.metrics_text().contains("cuzk_device_lanes{device=\"0\"} 1"), "metrics must show one lane");
        expect_proved(&engine, &f, false, "one lane left, next job");
    }

    // One lane from here on: out of device memory on its only lane, the partition goes to the CPU.
    let engine = Engine::new(config(1)).unwrap();
    engine.srs_load(common::PROOF, None).unwrap();

    expect_proved(&engine, &f, false, "before any fault");
    let mut failures = 0;
    for site in [FaultSite::StageH, FaultSite::Msm] {
        CudaBackend::inject_fault(FaultKind::Error, site).expect("arm the fault");
        expect_proved(&engine, &f, true, &format!("one lane, out of memory at {site:?}: proved on the CPU"));
        failures += 1;
        let d = device0(&engine);
        assert_eq!(d["usable"], true, "a recoverable error must not retire the device: {d}");
        assert_eq!(d["failures"], failures, "{d}");
        expect_proved(&engine, &f, false, &format!("after a recoverable error at {site:?}"));
    }

    // The sticky fault must not terminate the process (sppark's ~msm_t would throw).
    expect_failed(&engine, &f, FaultKind::Sticky, FaultSite::Msm, "illegal");
    let d = device0(&engine);
    assert_eq!(d["usable"], false, "a lost context must retire the device: {d}");
    let why = d["error"].as_str().unwrap_or_default().to_lowercase();
    assert!(why.contains("context lost") && why.contains("illegal"), "status must say why: {d}");
    println!("PASS status after the sticky fault: {d}");
    assert!(engine.metrics_text().contains("cuzk_device_usable{device=\"0\"} 0"), "metrics must show the device retired");

    expect_proved(&engine, &f, true, "after the device was lost (CPU fallback)");
    expect_proved(&engine, &f, true, "a second job on the CPU fallback");
    println!("PASS gpu_faults");
}
