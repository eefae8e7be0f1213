//! Host memory a backend holds between proofs (the CUDA backend's parking space for a lean stage
//! H: 8 GiB a lane at 32 GiB) comes out of the engine's automatic memory budget, so synthesized
//! partitions are not admitted into memory that is already taken.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use blstrs::Scalar;
use cuzk::engine::{Engine, EngineConfig};
use cuzk::error::Result;
use cuzk::prover::{Backend, CpuBackend, PartitionProof};
use cuzk::srs::Srs;
use cuzk::synth::Assignment;

struct Holding(Arc<AtomicU64>);

impl Backend for Holding {
    fn name(&self) -> &'static str {
        "cpu-holding"
    }

    fn prove(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        CpuBackend::default().prove(srs, assignment, r, s)
    }

    fn held_host_bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

fn budget(engine: &Engine) -> u64 {
    let m = engine.metrics_text();
    let line = m.lines().find(|l| l.starts_with("cuzk_memory_budget_bytes ")).unwrap_or_else(|| panic!("no budget in\n{m}"));
    line.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64
}

#[test]
fn what_the_backend_holds_comes_out_of_the_automatic_budget() {
    let held = Arc::new(AtomicU64::new(0));
    let engine = Engine::with_backend(EngineConfig::default(), Box::new(Holding(held.clone()))).unwrap();
    const GIB: u64 = 1 << 30;
    // The host's room is re-read now and then; a pair of reads straddling a refresh is retried.
    let mut seen = Vec::new();
    for _ in 0..5 {
        held.store(0, Ordering::Relaxed);
        let free = budget(&engine);
        held.store(3 * GIB, Ordering::Relaxed);
        let holding = budget(&engine);
        if free >= 3 * GIB && free - holding == 3 * GIB {
            return;
        }
        seen.push((free, holding));
    }
    panic!("the budget did not shrink by the 3 GiB held: (free, holding) = {seen:?}");
}
