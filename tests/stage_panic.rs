//! A panic outside the per-job guards kills a stage thread: the engine must then fail every
//! unfinished job (so no waiter blocks forever) and refuse new work with a message, instead of
//! leaving jobs "running" forever. Driven by a backend whose `name()` — called by the finisher
//! thread while publishing a result, outside any guard — panics once armed.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState};
use cuzk::error::{Result, Status};
use cuzk::prover::{Backend, CpuBackend, PartitionProof};
use cuzk::srs::Srs;
use cuzk::synth::Assignment;

struct PanicsWhenNamed(Arc<AtomicBool>);

impl Backend for PanicsWhenNamed {
    fn name(&self) -> &'static str {
        if self.0.load(Ordering::SeqCst) {
            panic!("backend name panicked on purpose");
        }
        "cpu-panicky"
    }

    fn prove(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        CpuBackend::default().prove(srs, assignment, r, s)
    }
}

#[test]
fn a_dead_stage_thread_fails_every_job_and_refuses_work() {
    let f = common::fixture();
    let armed = Arc::new(AtomicBool::new(false));
    let config = EngineConfig { params_dir: Some(f.params_dir.clone()), ..Default::default() };
    let engine = Engine::with_backend(config, Box::new(PanicsWhenNamed(armed.clone()))).unwrap();
    engine.srs_load(common::PROOF, None).unwrap();
    let first = common::submit(&engine, &f);
    let second = common::submit(&engine, &f);
    armed.store(true, Ordering::SeqCst);

    for id in [first, second] {
        let snap = engine.wait(id, Some(Duration::from_secs(600))).expect("the waiter must wake");
        assert_eq!(snap.state, JobState::Failed, "job {id}");
        let e = snap.error.expect("an error");
        assert!(e.message.contains("cuzk-finish panicked"), "{}", e.message);
    }
    let e = common::try_submit(&engine, &f).expect_err("a broken engine must refuse work");
    assert_eq!(e.status, Status::Internal);
    assert!(e.message.contains("recreated"), "{}", e.message);
    armed.store(false, Ordering::SeqCst);
    drop(engine); // shutdown joins the remaining threads
}
