//! The engine's split proofs: the prover thread only starts a proof (`Backend::start`, the device
//! work on a GPU) and a finisher thread completes it (`ProofTail::finish`), so the next partition
//! starts meanwhile. A backend that leaves every real CPU proof as a tail drives that path on a
//! machine without a GPU: jobs through it verify with filecoin-proofs, and a failing tail fails
//! its job with the backend's message while the engine keeps serving.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig, JobState};
use cuzk::error::Result;
use cuzk::prover::{Backend, Begun, CpuBackend, PartitionProof, ProofTail};
use cuzk::srs::Srs;
use cuzk::synth::Assignment;

/// The CPU backend, with each proof handed back as a tail; the first `fail` tails fail.
struct Tailing {
    fail: usize,
    /// Tails handed out so far.
    tails: AtomicUsize,
}

/// A CPU proof waiting to be handed over by the finisher thread.
struct Tail {
    proof: PartitionProof,
    fail: bool,
}

impl ProofTail for Tail {
    fn finish(self: Box<Self>, _: &Srs) -> Result<PartitionProof> {
        if self.fail {
            return Err(cuzk::err!(Prover, "tail failed on purpose"));
        }
        Ok(self.proof)
    }
}

impl Backend for Tailing {
    fn name(&self) -> &'static str {
        "cpu-tailing"
    }

    fn prove(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        CpuBackend::default().prove(srs, assignment, r, s)
    }

    fn start(&self, srs: &Srs, asg: Assignment, r: Scalar, s: Scalar, _: &dyn Fn() -> bool) -> Result<Begun> {
        let proof = self.prove(srs, asg, r, s)?;
        let fail = self.tails.fetch_add(1, Ordering::SeqCst) < self.fail;
        Ok(Begun::Tail(Box::new(Tail { proof, fail })))
    }
}

#[test]
fn tails_finish_on_the_finisher_thread() {
    let f = common::fixture();
    let config = EngineConfig { params_dir: Some(f.params_dir.clone()), ..Default::default() };
    let engine = Engine::with_backend(config, Box::new(Tailing { fail: 1, tails: AtomicUsize::new(0) })).unwrap();
    engine.srs_load(common::PROOF, None).unwrap();

    // Bounded waits: a tail nobody finishes must fail the test, not hang it.
    let wait = |id| engine.wait(id, Some(Duration::from_secs(600))).unwrap();
    let failed = wait(common::submit(&engine, &f));
    assert_eq!(failed.state, JobState::Failed);
    let e = failed.error.expect("an error");
    assert!(e.message.contains("tail failed on purpose"), "{}", e.message);

    let done = wait(common::submit(&engine, &f));
    assert_eq!(done.state, JobState::Done, "{:?}", done.error);
    let r = done.result.unwrap();
    assert_eq!(r.backend, "cpu-tailing");
    assert!(r.verified);
    assert!(common::filecoin_verify(&f, &r.proof));
}
