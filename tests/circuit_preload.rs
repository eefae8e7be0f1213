//! A recorded circuit goes where the backend evaluates it as soon as its recording ends (for
//! CUDA: into VRAM, beside the SRS that `srs_load` already put there), so no proof pays for the
//! upload. A backend that evaluates recorded circuits (the CPU prover underneath, a, b, c from
//! the recorded matrices on the host) notes what it was asked to preload: the SRS at load, then
//! the SRS with the recorded circuit once the first job has recorded it; the job still verifies.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState};
use cuzk::error::Result;
use cuzk::prover::{Backend, CpuBackend, PartitionProof};
use cuzk::srs::Srs;
use cuzk::synth::{Assignment, R1cs};

/// Each preload: the SRS's path and the circuit's constraints, if one came with it.
type Preloads = Arc<Mutex<Vec<(std::path::PathBuf, Option<usize>)>>>;

struct Recording {
    preloads: Preloads,
}

impl Backend for Recording {
    fn name(&self) -> &'static str {
        "cpu-recorded"
    }

    fn prove(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        CpuBackend::default().prove(srs, assignment, r, s)
    }

    fn evaluates_recorded(&self, _srs: &Srs, _circuit: &R1cs) -> bool {
        true
    }

    fn preload(&self, srs: &Srs, circuit: Option<&Arc<R1cs>>) -> Result<()> {
        self.preloads.lock().unwrap().push((srs.path.clone(), circuit.map(|c| c.constraints())));
        Ok(())
    }
}

#[test]
fn a_recorded_circuit_is_preloaded_when_its_recording_ends() {
    let f = common::fixture();
    let preloads = Preloads::default();
    let config = EngineConfig { params_dir: Some(f.params_dir.clone()), ..Default::default() };
    let engine = Engine::with_backend(config, Box::new(Recording { preloads: preloads.clone() })).unwrap();
    let srs = engine.srs_load(common::PROOF, None).unwrap();
    assert_eq!(*preloads.lock().unwrap(), vec![(srs.path.clone(), None)], "srs_load preloads the SRS alone");

    let done = engine.wait(common::submit(&engine, &f), Some(Duration::from_secs(600))).unwrap();
    assert_eq!(done.state, JobState::Done, "{:?}", done.error);
    assert!(common::filecoin_verify(&f, &done.result.unwrap().proof));

    // The recording thread preloads right after publishing the circuit: poll, bounded.
    let status: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap();
    assert_eq!(status["circuits"][0]["state"], "ready", "{}", status["circuits"]);
    let constraints = status["circuits"][0]["constraints"].as_u64().unwrap() as usize;
    let t = Instant::now();
    while preloads.lock().unwrap().len() < 2 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        *preloads.lock().unwrap(),
        vec![(srs.path.clone(), None), (srs.path.clone(), Some(constraints))],
        "then the SRS with the recorded circuit, once"
    );
}
