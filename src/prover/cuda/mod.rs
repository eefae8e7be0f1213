//! The CUDA Groth16 backend (feature `cuda`): H through sppark's NTTs and all five MSMs (H, L,
//! A, B_G1, B_G2) on the GPU, assembly shared with the CPU backend. With r, s fixed its proofs
//! are byte-identical to the CPU backend's.
//!
//! ```text
//! prepare (synthesis thread): classify the witness (0 / 1 / other scalars per query)
//! prove_start: hold a lane ─ SRS in VRAM? ─ stage H: upload a,b,c or the witness (copy stream,
//!              one lane's upload at a time per device)
//!              ─┬ a·b·c from the recorded circuit, NTTs per vector ┐
//!              (unprepared: classify on CPU threads ── concurrently ┤)
//!              stage queries: bitmaps and significant scalars up (copy stream, no kernels) ─
//!              take the device's MSM gate ─ stage sparse: batch additions (ones) ─
//!              ΣH with the significant L and r·B_G1 terms folded in ─ A (and, on a second host
//!              thread, B_G2) Pippenger ─ release gate and lane
//! (prepared, no other proof on the device, gate free: take the gate, upload the queries, then
//!              stage H ∥ on a second host thread the batch additions and, once a, b, c are
//!              staged, the Pippengers ─ ΣH ─ release gate and lane: STAGE_EARLY)
//! (streamed, the SRS sections the VRAM budget cannot keep crossing PCIe in tiles: a classified
//!              partition waiting for the lane posts its queries; the holder's sparse stage
//!              sums its ones and significant scalars from the same tiles, and its own sparse
//!              stage then runs ΣH alone: `riders`)
//! Started::finish (the proof's tail): assemble
//!              (prover::assemble, shared with the CPU backend)
//! ```
//!
//! A device whose context is lost (a sticky CUDA error) is marked unusable and skipped
//! (`pool`); with none left, partitions are proved on the CPU so the engine keeps serving.
//!
//! SRS bases are uploaded once per device and kept, keyed by the identity of the SRS's point
//! vectors (weak references, so an evicted SRS is noticed and its VRAM freed). Each device has
//! two lanes (`gpu_lanes`), each a workspace (stream, events, pinned staging and scratch
//! buffers, reused from proof to proof): one partition's stage H runs while another holds the
//! MSM gate. B_G2 runs on the GPU. A recorded circuit's a, b, c are evaluated by warps walking
//! 32 rows' terms. A lone proof's sparse work runs beside stage H; stage H's NTTs split their
//! passes evenly where sppark's are uneven (2^20, 2^23, 2^26). One path per stage, each the
//! measured winner: the variants that lost are gone (their numbers are in BENCHMARKS.md and
//! cuda/HISTORY.md), and the library reads no environment variable. Tools and tests may force
//! the paths the backend otherwise picks by size or by the device's state (`Forced`).

/// Self-checks of the GPU's intermediates against the CPU (feature `tools`: tests, selftest).
#[cfg(any(test, feature = "tools"))]
mod checks;
mod ffi;
mod pool;
mod riders;
mod prep;
mod stages;
mod tail;
mod witness;
/// Synthetic workloads and their export for the peer benchmark (feature `tools`).
#[cfg(any(test, feature = "tools"))]
pub mod synthetic;
#[cfg(any(test, feature = "tools"))]
mod synthetic_export;

use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "tools")]
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::Scalar;
use ff::PrimeField;

use super::assemble::check_shape;
use super::{Backend, Begun, CpuBackend, DeviceStatus, Garbage, PartitionProof, PhaseTimings};
use crate::error::Result;
use crate::srs::Srs;
use crate::synth::{Assignment, R1cs};
#[cfg(feature = "tools")]
pub use checks::{classify_time, witness_stats};
#[cfg(feature = "tools")]
pub use ffi::Ceiling;
pub use ffi::DeviceInfo;
use super::vram::Footprint;
use pool::Pool;
use stages::{Abc, GpuJob, StageError};
pub use tail::Started;
#[cfg(test)]
use witness::b_g2_sum;
use witness::{classify_parts, Prepared, Witness};

/// Tools and tests only: how the sparse stage sums the G1 bases whose scalar is one
/// (cuda/sum_ones.cuh).
#[cfg(feature = "tools")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnesSums {
    /// Affine rounds from 2^24 bases of a query up, sppark's batch addition below (the default:
    /// each where it is faster on the H200).
    BySize,
    /// Affine rounds at every size.
    Rounds,
    /// sppark's batch addition at every size.
    Sppark,
}

/// The largest domain (log2) of an urgent proof the backend takes to the CPU while its devices
/// are busy (`start_urgent`): a 2^19 WinningPoSt took 1.15–1.32 s there on a 16-core host busy
/// with 32 GiB SnapDeals synthesis (BENCHMARKS.md, 2026-12-07 03:02), against 0.1 s on an idle
/// GPU and a wait of up to a 32 GiB partition's sparse stage (1.1–1.5 s on an H100) behind a busy one.
const URGENT_ON_CPU_MAX_LOG: u32 = 20;

/// Groth16 on CUDA devices. Per device, one proof's MSMs at a time and another's stage H beside
/// them; proofs on different devices run concurrently.
pub struct CudaBackend {
    pool: Pool,
    /// Classified partitions waiting for a streamed device, whose sums another proof's passes
    /// over the SRS tiles may make (`riders`).
    riders: riders::Board,
    /// Tools and tests only: paths the backend picks by itself, forced.
    #[cfg(feature = "tools")]
    forced: Forced,
    /// Set once the CPU fallback has been logged.
    fallback_logged: AtomicBool,
    /// Circuits (their params files) logged as too big for every device's VRAM budget.
    too_big_logged: std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
}

/// Tools and tests only: paths the backend otherwise picks by size or by the device's state,
/// forced, so that the GPU identity tests reach them with small circuits and the benchmarks can
/// compare them. The shipped library has none of this: its getters return the backend's choice.
#[cfg(feature = "tools")]
#[derive(Default)]
struct Forced {
    /// `OnesSums`' prove flag (0: by size).
    ones_flags: AtomicU32,
    /// The sparse work after stage H, also on an idle device.
    sparse_after_h: AtomicBool,
    /// C and A parked in host memory in every streamed proof from a circuit in tiles.
    park_always: AtomicBool,
    /// The room for riders a streamed proof's passes take (0: the budget less the plan's need).
    rider_room: std::sync::atomic::AtomicU64,
}

/// What an injected fault does (test builds only, [`CudaBackend::inject_fault`]).
#[cfg(feature = "cuda-fault-injection")]
#[derive(Debug, Clone, Copy)]
pub enum FaultKind {
    /// A failed CUDA runtime call (out of memory): recoverable, the device keeps working.
    Error,
    /// An out-of-bounds kernel write: the device's context is lost for the process.
    Sticky,
}

/// Where an injected fault fires.
#[cfg(feature = "cuda-fault-injection")]
#[derive(Debug, Clone, Copy)]
pub enum FaultSite {
    /// Stage H, after the first vector's upload is queued.
    StageH,
    /// Inside a Pippenger MSM, between sppark's setup and its kernels.
    Msm,
}

impl CudaBackend {
    /// All usable CUDA devices, or an `Unsupported` error saying why there are none.
    pub fn new() -> Result<CudaBackend> {
        Self::on_devices(None)
    }

    /// The CUDA devices `only` names (ordinals), or all; see [`Pool::open`].
    pub fn on_devices(only: Option<&[usize]>) -> Result<CudaBackend> {
        Self::with_lanes(only, 0)
    }

    /// [`CudaBackend::on_devices`] proving `lanes` partitions at once per device (0: the
    /// default, [`pool::MAX_LANES`]).
    pub fn with_lanes(only: Option<&[usize]>, lanes: usize) -> Result<CudaBackend> {
        Self::with_budget(only, lanes, None)
    }

    /// [`CudaBackend::with_lanes`] using at most `budget` bytes of each device's memory (None:
    /// what is free on it at start, less 2 %; see `prover::vram`). A circuit whose proofs do not
    /// fit any device's budget is proved on the CPU (logged once per circuit, counted in each
    /// proof's `cpu_fallback`).
    pub fn with_budget(only: Option<&[usize]>, lanes: usize, budget: Option<u64>) -> Result<CudaBackend> {
        ffi::check_abi()?;
        if Scalar::MULTIPLICATIVE_GENERATOR != Scalar::from(7u64) {
            return Err(err!(Internal, "Fr multiplicative generator is not 7 (the GPU NTT's coset generator)"));
        }
        let pool = Pool::open(only, if lanes == 0 { pool::MAX_LANES } else { lanes }, budget)?;
        Ok(CudaBackend {
            pool,
            riders: riders::Board::default(),
            #[cfg(feature = "tools")]
            forced: Forced::default(),
            fallback_logged: AtomicBool::new(false),
            too_big_logged: std::sync::Mutex::default(),
        })
    }

    /// [`Backend::prepare`]: classify the witness now (the synthesis thread's time, not the
    /// GPU's: at 2^27 it takes ~0.6 s and competes with the a, b, c upload for memory
    /// bandwidth). Done once; returns the time it took.
    pub fn prepare_now(&self, asg: &mut Assignment) -> Result<Duration> {
        let t = Instant::now();
        if !asg.prepared.as_ref().is_some_and(|p| p.is::<Prepared>()) {
            // A circuit seen dense before is classified dense at once (no list made first).
            let seen = asg.deferred.as_ref().map(|r| r.significant_seen());
            let classes =
                classify_parts(&asg.input, &asg.aux, &asg.a_aux_density, &asg.b_input_density, &asg.b_aux_density, seen)?;
            // Before the proof plans its device memory (`vram`), which follows these counts.
            if let Some(r) = &asg.deferred {
                r.observe_significant(classes.each_ref().map(|q| q.n_sig as u64));
            }
            asg.prepared = Some(Box::new(Prepared(classes)));
        }
        Ok(t.elapsed())
    }

    /// Tools and tests only: how the G1 sums of the bases whose scalar is one run (the same
    /// sums every way; the library picks by size), to test the rounds at small sizes.
    #[cfg(feature = "tools")]
    pub fn set_ones_sums(&self, how: OnesSums) {
        let flags = match how {
            OnesSums::BySize => 0,
            OnesSums::Rounds => ffi::ONES_ROUNDS,
            OnesSums::Sppark => ffi::ONES_SPPARK,
        };
        self.forced.ones_flags.store(flags, Ordering::Relaxed);
    }

    pub(crate) fn ones_flags(&self) -> u32 {
        #[cfg(feature = "tools")]
        return self.forced.ones_flags.load(Ordering::Relaxed);
        #[cfg(not(feature = "tools"))]
        0
    }

    /// Tools and tests only: with `false`, a lone proof's sparse work (batch additions, the small
    /// Pippengers) runs after stage H, as it does whenever another proof holds the device,
    /// instead of beside it (the library's choice for an idle device: the a, b, c upload leaves
    /// SMs idle there).
    #[cfg(feature = "tools")]
    pub fn set_sparse_beside_h(&self, beside: bool) {
        self.forced.sparse_after_h.store(!beside, Ordering::Relaxed);
    }

    pub(crate) fn sparse_beside_h(&self) -> bool {
        #[cfg(feature = "tools")]
        return !self.forced.sparse_after_h.load(Ordering::Relaxed);
        #[cfg(not(feature = "tools"))]
        true
    }

    /// Tools and tests only: every streamed proof whose circuit is streamed in tiles parks C and
    /// A's coset values in host memory (the lean stage H), also where its budget holds them on
    /// the device. The plan parks them only where it must — the witness beside two domain slots
    /// dominates the streamed mode's memory only at production sizes (32 GiB on a 12 GiB
    /// card) — so this is how the GPU identity tests reach that path with small circuits.
    #[cfg(feature = "tools")]
    pub fn set_park_always(&self, park: bool) {
        self.forced.park_always.store(park, Ordering::Relaxed);
    }

    /// Tools and tests only: streamed proofs take riders (partitions waiting for the device,
    /// `riders`) whose queries fit `bytes`, not the room their plan leaves in the budget. A toy
    /// circuit's plan keeps SRS sections up to its budget, leaving no room (the 32 GiB plans on 12
    /// to 24 GiB cards keep none and leave 1–3 GB), so this is how the GPU identity tests reach
    /// the shared passes with small circuits. 0 restores the budget's room.
    #[cfg(feature = "tools")]
    pub fn set_rider_room(&self, bytes: u64) {
        self.forced.rider_room.store(bytes, Ordering::Relaxed);
    }

    /// The room a streamed proof's riders may take: `by_plan` (the budget less the plan's need).
    pub(crate) fn rider_room(&self, by_plan: u64) -> u64 {
        #[cfg(feature = "tools")]
        if let r @ 1.. = self.forced.rider_room.load(Ordering::Relaxed) {
            return r;
        }
        by_plan
    }

    pub(crate) fn parks_always(&self) -> bool {
        #[cfg(feature = "tools")]
        return self.forced.park_always.load(Ordering::Relaxed);
        #[cfg(not(feature = "tools"))]
        false
    }

    pub fn device_count(&self) -> usize {
        self.pool.len()
    }

    /// Name and memory of device `i` (memory read now).
    pub fn device_info(&self, i: usize) -> Result<DeviceInfo> {
        let d = self.pool.device(i).ok_or_else(|| err!(InvalidArgument, "no CUDA device {i}"))?;
        let mut info = ffi::device_info(d.index)?;
        info.name = d.info.name.clone();
        Ok(info)
    }

    /// Device `i`'s ceiling (multiplication and copy rates, sppark's NTT at 2^ntt_lg), measured
    /// now (~2 s; waits for the device to be free). A tool's (feature `tools`).
    #[cfg(feature = "tools")]
    pub fn ceiling(&self, i: usize, ntt_lg: u32) -> Result<Ceiling> {
        self.pool.with_device(i, |d| ffi::ceiling(d.index, ntt_lg)).ok_or_else(|| err!(InvalidArgument, "no CUDA device {i}"))?
    }

    /// The one-pass big-MSM experiment against sppark's Pippenger on device `i` (see
    /// `cuzk_cuda_msm_bench`); waits for the device to be free.
    #[cfg(feature = "tools")]
    pub fn msm_bench(
        &self,
        i: usize,
        points: &[blstrs::G1Affine],
        n: usize,
        windows: &[u32],
        seed: u64,
    ) -> Result<ffi::MsmBench> {
        self.pool.with_device(i, |d| ffi::msm_bench(d.index, points, n, windows, seed)).ok_or_else(|| err!(InvalidArgument, "no CUDA device {i}"))?
    }

    /// The sums of ones against sppark's batch addition on device `i` (see `cuzk_cuda_ones_bench`);
    /// waits for the device to be free.
    #[cfg(feature = "tools")]
    pub fn ones_bench(
        &self,
        i: usize,
        points: &[blstrs::G1Affine],
        n: usize,
        max_chunk: usize,
        seed: u64,
    ) -> Result<((blstrs::G1Projective, f32), (blstrs::G1Projective, f32))> {
        self.pool.with_device(i, |d| ffi::ones_bench(d.index, points, n, max_chunk, seed)).ok_or_else(|| err!(InvalidArgument, "no CUDA device {i}"))?
    }

    /// Device memory held by the backend's workspaces (not counting SRS bases).
    pub fn workspace_bytes(&self) -> u64 {
        self.pool.workspace_bytes()
    }

    /// Drop every SRS copy held in VRAM.
    pub fn evict_srs(&self) {
        self.pool.evict_srs()
    }

    /// Test builds only: the next proof step reaching `site` (ffi::fault::SITE_*) fails with a
    /// real CUDA error of `kind` (ffi::fault::ERROR: recoverable; STICKY: the device's context
    /// is lost).
    #[cfg(feature = "cuda-fault-injection")]
    pub fn inject_fault(kind: FaultKind, site: FaultSite) -> Result<()> {
        let kind = match kind {
            FaultKind::Error => ffi::fault::ERROR,
            FaultKind::Sticky => ffi::fault::STICKY,
        };
        let site = match site {
            FaultSite::StageH => ffi::fault::SITE_STAGE_H,
            FaultSite::Msm => ffi::fault::SITE_MSM,
        };
        ffi::inject_fault(kind, site)
    }

    /// No usable device is left: prove on the CPU (logged once), so the engine keeps serving.
    fn cpu_fallback(&self, srs: &Srs, asg: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        if !self.fallback_logged.swap(true, Ordering::Relaxed) {
            log::error!("no usable CUDA device left; proving on the CPU from now on (see the engine status)");
        }
        Self::on_cpu(srs, asg, r, s)
    }

    /// A proof the devices cannot take, made by the CPU backend and counted as such.
    fn on_cpu(srs: &Srs, asg: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        let mut p = CpuBackend::default().prove(srs, asg, r, s)?;
        p.cpu_fallback = true;
        Ok(p)
    }

    /// Whether a device can prove `asg` against `srs` within its budget; when none can, says so
    /// once per circuit (the proof then goes to the CPU).
    fn fits(&self, srs: &Srs, asg: &Assignment) -> bool {
        let f = witness::footprint(srs, asg.deferred.as_deref(), witness::prepared(asg));
        if self.pool.fits(&f) {
            return true;
        }
        if self.too_big_logged.lock().unwrap_or_else(|e| e.into_inner()).insert(srs.path.clone()) {
            log::error!(
                "the proofs of {} need ~{} MiB of device memory even with the SRS streamed from host memory (~{} MiB \
                 with it resident); no CUDA device's VRAM budget holds that ({}): proving them on the CPU.",
                srs.circuit.name(),
                f.streamed(0, super::vram::AbcAt::Cpu) >> 20,
                f.resident(1) >> 20,
                self.pool.status().iter().map(|d| format!("device {}: {} MiB", d.index, d.budget_bytes.unwrap_or(0) >> 20)).collect::<Vec<_>>().join(", ")
            );
        }
        false
    }

    /// GPU work of one proof with blinding factors `r`, `s` (its tail: the finisher's). r is
    /// needed here: the significant B_G1 terms enter the H MSM as r·b. A proof that runs out of
    /// device memory on every try (fewer lanes, no riders) is made on the CPU instead (`Done`):
    /// the plan counted what the circuit's witnesses were seen to need (`vram`), so a witness
    /// unlike them, or the device's memory taken by another process, costs a slower proof, not
    /// a failed job — a WindowPoSt that fails costs its sectors' power.
    pub fn prove_start(&self, srs: &Srs, asg: Assignment, r: Scalar, s: Scalar) -> Result<Begun> {
        let started = Instant::now();
        let mut t = PhaseTimings::default();
        let Assignment { prepared, deferred, a, b, c, input, aux, a_aux_density, b_input_density, b_aux_density } = asg;
        let classes = prepared.and_then(|p| p.downcast::<Prepared>().ok()).map(|p| p.0);
        let constraints = deferred.as_ref().map_or(a.len(), |r| r.constraints());
        check_shape(srs, constraints, input.len(), aux.len())?;
        let witness = Witness { input, aux, a_aux_density, b_input_density, b_aux_density };
        let abc = match &deferred {
            Some(r1cs) => Abc::Recorded(r1cs, &witness.input, &witness.aux),
            None => Abc::Values(&a, &b, &c),
        };
        let job = GpuJob { abc, witness: &witness, ready: classes, download_h: false, fold_r: Some(r) };
        let (parts, q) = match self.run_gpu(srs, job, &mut t) {
            Ok(done) => done,
            Err(StageError { oom: true, error }) => {
                log::warn!("{}: {error}; proving this partition on the CPU", srs.circuit.name());
                let Witness { input, aux, a_aux_density, b_input_density, b_aux_density } = witness;
                let asg = Assignment { prepared: None, deferred, a, b, c, input, aux, a_aux_density, b_input_density, b_aux_density };
                let t_cpu = Instant::now();
                let mut p = Self::on_cpu(srs, asg, r, s)?;
                p.phases.push("gpu_out_of_memory_on_cpu", t_cpu.elapsed());
                return Ok(Begun::Done(p));
            }
            Err(e) => return Err(e.error),
        };
        let sums = [parts.h, parts.ones[0] + parts.sig[0], parts.ones[1] + parts.sig[1], parts.ones[2] + parts.sig[2]];
        let b_g2 = parts.b2.0 + parts.b2.1;
        let bytes = (32 * (a.capacity() + b.capacity() + c.capacity())) as u64;
        let qbytes =
            q.iter().map(|q| q.bytes()).sum();
        let garbage: Garbage = vec![(Box::new((a, b, c)), bytes), (Box::new(q), qbytes)];
        Ok(Begun::Tail(Box::new(Started { sums, r, s, b_g2, witness, phases: t, garbage, started })))
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn prove(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        if !self.pool.any_usable() {
            return self.cpu_fallback(srs, assignment, r, s);
        }
        if !self.fits(srs, &assignment) {
            return Self::on_cpu(srs, assignment, r, s);
        }
        match self.prove_start(srs, assignment, r, s)? {
            Begun::Done(p) => Ok(p),
            Begun::Tail(tail) => tail.finish(srs),
        }
    }

    fn held_host_bytes(&self) -> u64 {
        ffi::spill_bytes()
    }

    fn devices(&self) -> Vec<DeviceStatus> {
        self.pool.status()
    }

    fn lanes(&self) -> usize {
        self.pool.lanes().max(1)
    }

    fn preload(&self, srs: &Srs, circuit: Option<&Arc<R1cs>>) -> Result<()> {
        self.pool.preload(srs, circuit)
    }

    fn evaluates_recorded(&self, srs: &Srs, circuit: &R1cs) -> bool {
        self.pool.any_usable() && self.pool.keeps_r1cs(&Footprint::of_srs(srs, Some(circuit)))
    }

    fn prepare(&self, assignment: &mut Assignment) -> Result<Option<Duration>> {
        self.prepare_now(assignment).map(Some)
    }

    /// A small urgent circuit (a WinningPoSt: 2^19 at 32 GiB) while no device is idle goes to
    /// the CPU, all cores, at once: on the GPU it would wait for the MSM gate, which one 32 GiB
    /// partition holds for 1.1–1.5 s at a time (its sparse stage). An idle device (no lane held,
    /// gate free) proves it; so does a busy one when the circuit is large (a 32 GiB WindowPoSt),
    /// through `start`.
    fn start_urgent(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar, cancelled: &dyn Fn() -> bool) -> Result<Begun> {
        let constraints = assignment.deferred.as_ref().map_or(assignment.a.len(), |r| r.constraints());
        let small = constraints.next_power_of_two() <= 1 << URGENT_ON_CPU_MAX_LOG;
        if small && self.pool.any_usable() {
            let f = witness::footprint(srs, assignment.deferred.as_deref(), witness::prepared(&assignment));
            if !self.pool.idle_for(&f) {
                let t = Instant::now();
                let mut p = CpuBackend::default().prove_cancellable(srs, assignment, r, s, cancelled)?;
                p.phases.push("urgent_on_cpu", t.elapsed());
                return Ok(Begun::Done(p));
            }
        }
        self.start(srs, assignment, r, s, cancelled)
    }

    fn start(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar, _: &dyn Fn() -> bool) -> Result<Begun> {
        if !self.pool.any_usable() {
            return self.cpu_fallback(srs, assignment, r, s).map(Begun::Done);
        }
        if !self.fits(srs, &assignment) {
            return Self::on_cpu(srs, assignment, r, s).map(Begun::Done);
        }
        self.prove_start(srs, assignment, r, s)
    }
}

/// Tools only: usable CUDA devices (0 where there are none), without opening a backend.
#[cfg(feature = "tools")]
pub fn device_count() -> usize {
    ffi::device_count().unwrap_or(0)
}

/// Tools only: the test SRS's fixed-base multiples of G1 on the first CUDA device
/// (src/fixtures/test_srs.rs). Err where there is no usable device.
#[cfg(feature = "tools")]
pub fn fixed_base_g1(table: &[blstrs::G1Affine], scalars: &[Scalar], out: &mut [blstrs::G1Affine]) -> Result<()> {
    fixed_base(table, scalars, out, ffi::fixed_base_g1)
}

/// Tools only: [`fixed_base_g1`] over G2.
#[cfg(feature = "tools")]
pub fn fixed_base_g2(table: &[blstrs::G2Affine], scalars: &[Scalar], out: &mut [blstrs::G2Affine]) -> Result<()> {
    fixed_base(table, scalars, out, ffi::fixed_base_g2)
}

#[cfg(feature = "tools")]
fn fixed_base<A>(table: &[A], scalars: &[Scalar], out: &mut [A], on_device: fn(i32, &[A], &[[u8; 32]], &mut [A]) -> Result<()>) -> Result<()> {
    use rayon::prelude::*;
    if device_count() == 0 {
        return Err(err!(Unsupported, "no CUDA device"));
    }
    // In pieces, so the canonical copies of the scalars stay small (1 GiB).
    const PIECE: usize = 1 << 25;
    for (src, dst) in scalars.chunks(PIECE).zip(out.chunks_mut(PIECE)) {
        let bytes: Vec<[u8; 32]> = src.par_iter().map(|s| s.to_bytes_le()).collect();
        on_device(0, table, &bytes, dst)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use blstrs::G1Affine;

    use super::checks::cpu_ones;
    use super::stages::z_inv;
    use super::witness::{classify_all, cpu_sig_g1, cpu_sig_g2};
    use super::*;
    use crate::prover::assemble::{assemble, MsmSums};
    use crate::prover::msm::msm_sparse;
    use crate::prover::CpuBackend;
    use crate::kinds::registry::RegisteredSealProof;
    use crate::synth::SizeHint;
    use synthetic::{clone_assignment, random_params, Shape, Toy};

    /// `devices`: an ordinal past the last device is InvalidArgument naming it; with no CUDA
    /// device at all every choice is Unsupported (what "auto" falls back on).
    #[test]
    fn device_selection() {
        match ffi::device_count() {
            Ok(n) => {
                let e = CudaBackend::on_devices(Some(&[n])).err().expect("a device past the last one");
                assert_eq!(e.status, crate::error::Status::InvalidArgument, "{}", e.message);
                assert!(e.message.contains(&format!("no CUDA device {n}")), "{}", e.message);
                let b = CudaBackend::on_devices(Some(&[n - 1])).unwrap();
                assert_eq!((b.device_count(), b.pool.device(0).unwrap().index), (1, n as i32 - 1));
            }
            Err(_) => {
                let e = CudaBackend::on_devices(Some(&[0])).err().expect("no device");
                assert_eq!(e.status, crate::error::Status::Unsupported, "{}", e.message);
            }
        }
    }

    /// Without a GPU: the host-side split (classification, index layout, z_inv, assembly) gives
    /// the CPU backend's proof when every part is computed on the CPU instead; sparse witnesses
    /// (toy modes 3, 4) and a dense one (mode 2: no ones, the whole sum in the significant part,
    /// not folded).
    #[test]
    fn host_split_reassembles_to_the_cpu_proof() {
        let toys = [
            Toy { constraints: 3000, inputs: 3, mode: 3 },
            Toy { constraints: 700, inputs: 0, mode: 4 },
            Toy { constraints: 3000, inputs: 3, mode: 2 },
        ];
        for (k, toy) in toys.into_iter().enumerate() {
            let dense = toy.mode == 2;
            let asg = Assignment::synthesize(toy, SizeHint::default()).unwrap();
            let srs = Srs::from_parameters(
                RegisteredSealProof::StackedDrg2KiBV1_1,
                random_params(Shape::of(&asg), 9 + k as u64),
            );
            let p = &srs.params;
            let (r, s) = (Scalar::from(5u64), Scalar::from(11u64));
            let want = CpuBackend::default().prove(&srs, clone_assignment(&asg), r, s).unwrap().proof;

            let w = Witness::copy_of(&asg);
            let q = classify_all(&w).unwrap();
            let h = crate::prover::cpu::compute_h_bellperson(asg.a.clone(), asg.b.clone(), asg.c.clone()).unwrap();
            let bases: [&[G1Affine]; 3] = [&p.l, &p.a, &p.b_g1];
            let part = |f: usize| cpu_ones(bases[f], &q[f]) + cpu_sig_g1(bases[f], &q[f]).unwrap();
            let m = MsmSums {
                h: msm_sparse::<G1Affine>(&p.h, 0, &h, None).unwrap().0,
                l: part(0),
                a: part(1),
                b_g1: part(2),
                b_g2: b_g2_sum(&p.b_g2, &w).unwrap(),
            };
            // B_G2 as the GPU splits it: ones + the rest.
            assert_eq!(cpu_ones(&p.b_g2, &q[2]) + cpu_sig_g2(&p.b_g2, &q[2]).unwrap(), m.b_g2);
            assert_eq!(assemble(&srs, &m, r, s).unwrap(), want, "case {k}");
            assert_eq!(q.each_ref().map(|q| q.is_dense()), [dense; 3], "case {k}");
            if dense {
                continue;
            }

            // FOLD as the GPU lays it out: one MSM over [h bases | gathered L sig bases |
            // gathered B_G1 sig bases] with scalars [H coefficients | L sig | r·B_G1 sig], and
            // only the one-scalar sums of L and B_G1 kept apart.
            let nh = h.len().min(p.h.len());
            let mut fb: Vec<G1Affine> = p.h[..nh].to_vec();
            let mut fs: Vec<Scalar> = h[..nh].to_vec();
            fb.extend(q[0].sig_idx.iter().map(|&i| p.l[i as usize]));
            fs.extend(q[0].sig.iter().copied());
            fb.extend(q[2].sig_idx.iter().map(|&i| p.b_g1[i as usize]));
            fs.extend(q[2].sig.iter().map(|x| *x * r));
            let folded_h = msm_sparse::<G1Affine>(&fb, 0, &fs, None).unwrap().0;
            let sig = |f: usize| cpu_sig_g1(bases[f], &q[f]).unwrap();
            assert_eq!(folded_h, m.h + sig(0) + sig(2) * r, "case {k}: folded ΣH");
            let folded = MsmSums {
                h: folded_h,
                l: cpu_ones(&p.l, &q[0]),
                a: m.a,
                b_g1: cpu_ones(&p.b_g1, &q[2]),
                b_g2: m.b_g2,
            };
            assert_eq!(assemble(&srs, &folded, r, s).unwrap(), want, "case {k}: folded assembly");
            let zi = z_inv(asg.a.len().next_power_of_two()).unwrap();
            assert_ne!(zi, [0u64; 4]);
        }
    }
}
