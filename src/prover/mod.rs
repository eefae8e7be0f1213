//! Groth16 prover backends. Every backend takes the same [`Assignment`] and the blinding
//! factors r, s, so backends can be compared byte for byte.

mod assemble;
mod cpu;
// Internal FFI to cuda/, not part of the public C ABI.
/// cbindgen:ignore
#[cfg(feature = "cuda")]
mod cuda;
/// cbindgen:ignore
pub mod ifma;
pub mod msm;
mod ntt;
mod select;
pub mod vram;

use std::sync::Arc;
use std::time::Duration;

use bellperson::groth16::Proof;
use blstrs::{Bls12, Scalar};

pub use cpu::CpuBackend;
pub use select::{select_backend, BackendChoice};
#[cfg(feature = "cuda")]
pub use cuda::{CudaBackend, DeviceInfo as CudaDeviceInfo, Started as CudaStarted};
#[cfg(all(feature = "cuda", feature = "tools"))]
pub use cuda::{OnesSums as CudaOnesSums, classify_time, device_count as cuda_device_count, fixed_base_g1 as cuda_fixed_base_g1, fixed_base_g2 as cuda_fixed_base_g2, synthetic as cuda_synthetic, witness_stats};
#[cfg(feature = "cuda-fault-injection")]
pub use cuda::{FaultKind, FaultSite};

use crate::error::Result;
use crate::srs::Srs;
use crate::synth::{Assignment, R1cs};

/// Named phase durations of one partition proof, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct PhaseTimings(pub Vec<(&'static str, Duration)>);

impl PhaseTimings {
    pub fn push(&mut self, name: &'static str, d: Duration) {
        self.0.push((name, d));
    }

    /// Time `f` as phase `name`.
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let t = std::time::Instant::now();
        let out = f();
        self.push(name, t.elapsed());
        out
    }

    pub fn total(&self) -> Duration {
        self.0.iter().map(|(_, d)| *d).sum()
    }

    /// Add `d` to phase `name` (a new phase if there is none of that name yet).
    pub fn add(&mut self, name: &'static str, d: Duration) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, acc)) => *acc += d,
            None => self.0.push((name, d)),
        }
    }

    /// Add another partition's phases into this one (phase by phase, by name).
    pub fn accumulate(&mut self, other: &PhaseTimings) {
        for (name, d) in &other.0 {
            self.add(name, *d);
        }
    }
}

/// Big buffers a backend is done with, with their sizes; the engine hands them to its
/// deallocator thread.
pub type Garbage = Vec<(Box<dyn Send>, u64)>;

pub struct PartitionProof {
    pub proof: Proof<Bls12>,
    pub phases: PhaseTimings,
    pub garbage: Garbage,
    /// Proved on the CPU because the backend had no usable device left.
    pub cpu_fallback: bool,
}

/// One device of a backend, as the engine's status reports it.
#[derive(Debug, Clone)]
pub struct DeviceStatus {
    pub index: usize,
    pub name: String,
    pub total_bytes: u64,
    /// Free device memory when the status was read (None: it could not be read).
    pub free_bytes: Option<u64>,
    /// False once the device's context is lost (see `error`); it is skipped from then on.
    pub usable: bool,
    pub error: Option<String>,
    /// Proofs that succeeded and failed on it.
    pub proofs: u64,
    pub failures: u64,
    /// Partitions whose sums of ones and significant parts another partition's pass over the
    /// SRS tiles made on it (streamed mode: one pass serves several partitions).
    pub shared_passes: u64,
    /// Bytes the proofs on it copied over PCIe host → device and device → host (their large
    /// copies: streamed SRS and circuit tiles, a, b, c or the witness, queries, parked vectors),
    /// and the time at least one of a proof's copies was moving data, summed over proofs.
    pub h2d_bytes: u64,
    pub d2h_bytes: u64,
    pub pcie_busy: Duration,
    /// Partitions it proves at once (its lanes in use).
    pub lanes: usize,
    /// Device bytes the backend may use on it (`vram_budget_mib`, or what was free at start).
    pub budget_bytes: Option<u64>,
    /// Host memory page-locked for what the devices stream (SRS sections, recorded circuits,
    /// stage H's parking space; process-wide).
    pub pinned_host_bytes: Option<u64>,
    /// Time at least one of its lanes was held by a proof (overlapping lanes count once).
    pub busy: Duration,
}

/// A proof [`Backend::start`]ed: already done, or with its tail left to finish.
pub enum Begun {
    Done(PartitionProof),
    Tail(Box<dyn ProofTail>),
}

/// What is left of a proof once the backend let go of its device: downloads, B_G2 from CPU
/// threads, assembly. Each backend's tail type carries everything it needs, so the engine's
/// finisher thread runs it without knowing the backend.
pub trait ProofTail: Send {
    fn finish(self: Box<Self>, srs: &Srs) -> Result<PartitionProof>;
}

pub trait Backend: Send + Sync {
    fn name(&self) -> &'static str;

    /// Prove one partition with blinding factors `r`, `s`.
    fn prove(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof>;

    /// Work a backend wants done on the synthesis thread once a partition is synthesized, off
    /// its own critical path (the CUDA backend classifies the witness's scalars). Returns the
    /// time spent, or None when there was nothing to do. An error leaves the assignment as it
    /// was and is no reason to fail the job.
    fn prepare(&self, assignment: &mut Assignment) -> Result<Option<Duration>> {
        let _ = assignment;
        Ok(None)
    }

    /// The part of [`Backend::prove`] that must hold the prover (the CUDA backend's device
    /// work). The engine finishes a [`Begun::Tail`] on another thread, so the next partition's
    /// device work starts while this one's CPU tail (assembly) completes. A backend may give up with `Status::Cancelled` at a phase boundary once
    /// `cancelled()` returns true (so cancel and shutdown do not wait for a whole proof).
    /// Default: the whole proof here, not cancellable.
    fn start(
        &self,
        srs: &Srs,
        assignment: Assignment,
        r: Scalar,
        s: Scalar,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Begun> {
        let _ = cancelled;
        self.prove(srs, assignment, r, s).map(Begun::Done)
    }

    /// [`Backend::start`] for a partition with a deadline (a job above the default priority:
    /// PoSt), from the engine's urgent prover, which runs beside the prover lanes: a backend may
    /// take a path that does not queue behind the bulk work holding its devices (the CUDA
    /// backend proves a small circuit on the CPU while its device is busy). Default: `start`.
    fn start_urgent(
        &self,
        srs: &Srs,
        assignment: Assignment,
        r: Scalar,
        s: Scalar,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Begun> {
        self.start(srs, assignment, r, s, cancelled)
    }

    /// Whether the backend evaluates the recorded circuit `circuit`'s a, b, c itself (on its
    /// device) for proofs against `srs`, so the engine hands it assignments with `deferred` set
    /// and the host keeps only witnesses. Backends that do not evaluate them on the CPU threads
    /// ([`Assignment::evaluate_deferred`]).
    fn evaluates_recorded(&self, _srs: &Srs, _circuit: &crate::synth::R1cs) -> bool {
        false
    }

    /// Make `srs` resident where the backend proves (the CUDA backend: its bases in each
    /// device's memory), and with it `circuit`, the recorded circuit it evaluates a, b, c from,
    /// so the first proof does not pay for either. Default: nothing to do.
    fn preload(&self, srs: &Srs, circuit: Option<&Arc<R1cs>>) -> Result<()> {
        let _ = (srs, circuit);
        Ok(())
    }

    /// Host memory one partition's proof allocates beyond its assignment (working buffers),
    /// which the engine reserves with the partition. Default: none counted.
    fn working_bytes(&self, srs: &Srs) -> u64 {
        let _ = srs;
        0
    }

    /// Host memory the backend holds between proofs, beyond the SRS and recorded circuits (the
    /// CUDA backend's parking space for a lean stage H: 8 GiB per lane at 32 GiB). The engine's
    /// automatic memory budget leaves it out. Default: none.
    fn held_host_bytes(&self) -> u64 {
        0
    }

    /// The backend's devices and their health (none for the CPU backend).
    fn devices(&self) -> Vec<DeviceStatus> {
        Vec::new()
    }

    /// How many [`Backend::start`] calls it runs at once to good effect (the engine runs one
    /// prover thread each): the CUDA backend's lanes over its devices; 1 for the CPU backend,
    /// whose proofs already use every core.
    fn lanes(&self) -> usize {
        1
    }

}
