//! The CUDA Groth16 backend (feature `cuda`): H through sppark's NTTs and all five MSMs (H, L,
//! A, B_G1, B_G2) on the GPU, assembly shared with the CPU backend. With r, s fixed its proofs
//! are byte-identical to the CPU backend's.
//!
//! ```text
//! prepare (synthesis thread): classify the witness (0 / 1 / other scalars per query)
//! prove_start: hold a lane ─ SRS in VRAM? ─ stage H: upload a,b,c or the witness (copy stream)
//!              ─┬ a·b·c from the recorded circuit, NTTs per vector ┐
//!              (unprepared: classify on CPU threads ── concurrently ┤)
//!              take the device's MSM gate ─ stage sparse: bitmaps ─ batch additions (ones) ─
//!              ΣH with the significant L and r·B_G1 terms folded in ─ A (and, on a second host
//!              thread, B_G2) Pippenger ─ release gate and lane
//! Started::finish (the proof's tail): B_G2 from CPU threads if so configured, assemble
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
//! MSM gate. B_G2 runs on the GPU by default; `CUZK_CUDA_B_G2=cpu` (or
//! [`CudaBackend::set_b_g2_on_gpu`]) moves it to CPU threads that overlap the GPU work.

/// Self-checks of the GPU's intermediates against the CPU (feature `tools`: tests, selftest).
#[cfg(any(test, feature = "tools"))]
mod checks;
mod ffi;
mod pool;
mod prep;
/// Synthetic workloads and their export for the peer benchmark (feature `tools`).
#[cfg(any(test, feature = "tools"))]
pub mod synthetic;
#[cfg(any(test, feature = "tools"))]
mod synthetic_export;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::{Field, PrimeField};

use super::assemble::{assemble, check_shape, MsmSums};
use super::msm::msm_sparse;
use super::{Backend, Begun, CpuBackend, DeviceStatus, Garbage, PartitionProof, PhaseTimings, ProofTail};
use crate::error::Result;
use crate::srs::Srs;
use crate::synth::{Assignment, R1cs};
#[cfg(feature = "tools")]
pub use checks::witness_stats;
pub use ffi::DeviceInfo;
use pool::Pool;
use prep::{classify, SparseScalars};

/// MSMs smaller than this run on the CPU (GPU launch and sort overheads dominate them).
const GPU_MIN_POINTS: usize = 64;

/// The witness the classification (and the B_G2 thread, on the CPU) reads.
struct Witness {
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    a_aux_density: DensityTracker,
    b_input_density: DensityTracker,
    b_aux_density: DensityTracker,
}

impl Witness {
    #[cfg(any(test, feature = "tools"))]
    fn copy_of(asg: &Assignment) -> Witness {
        Witness {
            input: asg.input.clone(),
            aux: asg.aux.clone(),
            a_aux_density: asg.a_aux_density.clone(),
            b_input_density: asg.b_input_density.clone(),
            b_aux_density: asg.b_aux_density.clone(),
        }
    }
}

/// Groth16 on CUDA devices. Per device, one proof's MSMs at a time and another's stage H beside
/// them; proofs on different devices run concurrently.
pub struct CudaBackend {
    pool: Pool,
    b_g2_on_gpu: AtomicBool,
    /// Set once the CPU fallback has been logged.
    fallback_logged: AtomicBool,
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

/// A GPU stage's failure, and whether it was the device running out of memory.
struct StageError {
    error: crate::error::Error,
    oom: bool,
}

impl StageError {
    fn cuda(e: ffi::CudaError) -> StageError {
        StageError { oom: e.code == ffi::E_CUDA_OOM, error: ffi::to_err("prove")(e) }
    }
}

impl From<crate::error::Error> for StageError {
    fn from(error: crate::error::Error) -> StageError {
        StageError { error, oom: false }
    }
}

/// What [`Backend::prepare`] leaves on an assignment for this backend: the witness classified
/// (0 / 1 / other per query), so that the GPU does not wait for the CPU to do it.
struct Prepared([SparseScalars; 3]);

enum BG2 {
    Done(G2Projective),
    Thread(JoinHandle<Result<(G2Projective, Duration)>>),
}

/// The GPU's share of one proof, before assembly: the proof's tail ([`ProofTail`]).
pub struct Started {
    /// h (with the significant L and r·B_G1 terms folded in), L, A, B_G1.
    sums: [G1Projective; 4],
    r: Scalar,
    s: Scalar,
    b_g2: BG2,
    witness: Arc<Witness>,
    phases: PhaseTimings,
    garbage: Garbage,
    started: Instant,
}

/// Where a proof's a, b, c come from.
#[derive(Clone, Copy)]
enum Abc<'a> {
    Values(&'a [Scalar], &'a [Scalar], &'a [Scalar]),
    /// Evaluated on the device: the recorded circuit's matrices times [input | aux].
    Recorded(&'a Arc<R1cs>, &'a [Scalar], &'a [Scalar]),
}

/// GPU results of one proof, parts kept apart for checking.
struct GpuParts {
    h: G1Projective,
    ones: [G1Projective; 3],
    sig: [G1Projective; 3],
    /// (ones, rest) of B over G2, when it ran on the GPU.
    b2: Option<(G2Projective, G2Projective)>,
    /// H's coefficients, downloaded only when checking (read by `checks`).
    #[cfg_attr(not(any(test, feature = "tools")), allow(dead_code))]
    h_coeffs: Option<Vec<Scalar>>,
}

fn ms(v: f32) -> Duration {
    Duration::from_secs_f64(v.max(0.0) as f64 / 1e3)
}

fn sparse(q: &SparseScalars, on_gpu: bool) -> ffi::Sparse {
    ffi::Sparse {
        ones: q.ones.as_ptr(),
        ones_words: q.ones.len() as u64,
        npoints: q.npoints as u64,
        sig_idx: q.sig_idx.as_ptr(),
        sig_scalars: q.sig.as_ptr().cast(),
        nsig: if on_gpu { q.sig.len() as u64 } else { 0 },
    }
}

fn empty_sparse() -> ffi::Sparse {
    ffi::Sparse {
        ones: std::ptr::null(),
        ones_words: 0,
        npoints: 0,
        sig_idx: std::ptr::null(),
        sig_scalars: std::ptr::null(),
        nsig: 0,
    }
}

/// Σ bases[j] · sig[k] for j = sig_idx[k], on the CPU.
fn cpu_sig_g1(bases: &[G1Affine], q: &SparseScalars) -> Result<G1Projective> {
    let picked: Arc<Vec<G1Affine>> = Arc::new(q.sig_idx.iter().map(|&j| bases[j as usize]).collect());
    Ok(msm_sparse::<G1Affine>(&picked, 0, &q.sig, None)?.0)
}

fn cpu_sig_g2(bases: &[G2Affine], q: &SparseScalars) -> Result<G2Projective> {
    let picked: Arc<Vec<G2Affine>> = Arc::new(q.sig_idx.iter().map(|&j| bases[j as usize]).collect());
    Ok(msm_sparse::<G2Affine>(&picked, 0, &q.sig, None)?.0)
}

fn b_g2_sum(bases: &Arc<Vec<G2Affine>>, w: &Witness) -> Result<G2Projective> {
    let b_inputs = w.b_input_density.get_total_density();
    let (bi, _) = msm_sparse::<G2Affine>(bases, 0, &w.input, Some(w.b_input_density.bv.as_bitslice()))?;
    let (ba, _) = msm_sparse::<G2Affine>(bases, b_inputs, &w.aux, Some(w.b_aux_density.bv.as_bitslice()))?;
    Ok(bi + ba)
}

/// Classify the witness for the L, A and B queries (in parallel).
fn classify_all(w: &Witness) -> Result<[SparseScalars; 3]> {
    classify_parts(&w.input, &w.aux, &w.a_aux_density, &w.b_input_density, &w.b_aux_density)
}

fn classify_parts(
    input: &[Scalar],
    aux: &[Scalar],
    a_aux: &DensityTracker,
    b_input: &DensityTracker,
    b_aux: &DensityTracker,
) -> Result<[SparseScalars; 3]> {
    let (l, (a, b)) = rayon::join(
        || classify(&[(aux, None)]),
        || {
            rayon::join(
                || classify(&[(input, None), (aux, Some(a_aux.bv.as_bitslice()))]),
                || classify(&[(input, Some(b_input.bv.as_bitslice())), (aux, Some(b_aux.bv.as_bitslice()))]),
            )
        },
    );
    Ok([l?, a?, b?])
}


/// 1 / Z(g) on the coset g·⟨ω⟩ of size n, Z(x) = xⁿ − 1, g the multiplicative generator
/// (bellperson's `divide_by_z_on_coset`).
fn z_inv(n: usize) -> Result<[u64; 4]> {
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE;
    let inv = Option::<Scalar>::from(z.invert()).ok_or_else(|| err!(Prover, "Z(g) is zero for domain {n}"))?;
    Ok(mont_limbs(inv))
}

/// A scalar as the GPU code reads it.
fn mont_limbs(x: Scalar) -> [u64; 4] {
    // SAFETY: Scalar is #[repr(transparent)] over blst_fr = four little-endian u64 limbs in
    // Montgomery form.
    unsafe { std::mem::transmute::<Scalar, [u64; 4]>(x) }
}

/// Phase names of the CUDA-event timings, by `ffi::PH_*` index.
const GPU_PHASES: [(&str, usize); 14] = [
    ("gpu_upload", ffi::PH_UPLOAD),
    ("gpu_spmv", ffi::PH_SPMV),
    ("gpu_ntt", ffi::PH_NTT),
    ("gpu_h_download", ffi::PH_H_DOWNLOAD),
    ("gpu_msm_h", ffi::PH_MSM_H),
    ("gpu_stage_h", ffi::PH_TOTAL_H),
    ("gpu_upload_sparse", ffi::PH_UPLOAD_SPARSE),
    ("gpu_batch_add", ffi::PH_BATCH_ADD),
    ("gpu_batch_add_g2", ffi::PH_BATCH_ADD_G2),
    ("gpu_gather", ffi::PH_GATHER),
    ("gpu_msm_l", ffi::PH_MSM_L),
    ("gpu_msm_a", ffi::PH_MSM_A),
    ("gpu_msm_b_g1", ffi::PH_MSM_B_G1),
    ("gpu_msm_b_g2", ffi::PH_MSM_B_G2),
];

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
        ffi::check_abi()?;
        if Scalar::MULTIPLICATIVE_GENERATOR != Scalar::from(7u64) {
            return Err(err!(Internal, "Fr multiplicative generator is not 7 (the GPU NTT's coset generator)"));
        }
        let pool = Pool::open(only, if lanes == 0 { pool::MAX_LANES } else { lanes })?;
        let b_g2_on_gpu = !matches!(std::env::var("CUZK_CUDA_B_G2").as_deref(), Ok("cpu"));
        Ok(CudaBackend { pool, b_g2_on_gpu: AtomicBool::new(b_g2_on_gpu), fallback_logged: AtomicBool::new(false) })
    }

    /// [`Backend::prepare`]: classify the witness now (the synthesis thread's time, not the
    /// GPU's: at 2^27 it takes ~0.6 s and competes with the a, b, c upload for memory
    /// bandwidth). Done once; returns the time it took.
    pub fn prepare_now(&self, asg: &mut Assignment) -> Result<Duration> {
        let t = Instant::now();
        if !asg.prepared.as_ref().is_some_and(|p| p.is::<Prepared>()) {
            let classes =
                classify_parts(&asg.input, &asg.aux, &asg.a_aux_density, &asg.b_input_density, &asg.b_aux_density)?;
            asg.prepared = Some(Box::new(Prepared(classes)));
        }
        Ok(t.elapsed())
    }

    /// Run the B_G2 MSM on the GPU (default) or on CPU threads overlapping the GPU work.
    pub fn set_b_g2_on_gpu(&self, on_gpu: bool) {
        self.b_g2_on_gpu.store(on_gpu, Ordering::Relaxed);
    }

    pub fn b_g2_on_gpu(&self) -> bool {
        self.b_g2_on_gpu.load(Ordering::Relaxed)
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

    /// Device `i`'s arithmetic ceiling: (32-bit integer multiply-adds per second, BLS12-381 Fp
    /// multiplications per second), measured now (~1 s; waits for the device to be free).
    pub fn ceiling(&self, i: usize) -> Result<(f64, f64)> {
        self.pool.with_device(i, |d| ffi::ceiling(d.index)).ok_or_else(|| err!(InvalidArgument, "no CUDA device {i}"))?
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
        let mut p = CpuBackend::default().prove(srs, asg, r, s)?;
        p.cpu_fallback = true;
        Ok(p)
    }

    /// Stage H (the witness classified on CPU threads meanwhile unless `ready` has it), then,
    /// holding the device's MSM `gate`, the sparse stage, on a held lane. Returns the
    /// classification.
    #[allow(clippy::too_many_arguments)]
    fn stages(
        ws: &mut ffi::Workspace,
        gate: &Mutex<()>,
        dsrs: &ffi::DeviceSrs,
        inp: &mut ffi::ProveIn,
        out: &mut ffi::ProveOut,
        witness: &Witness,
        ready: Option<[SparseScalars; 3]>,
        b_g2: bool,
        fold: bool,
        t: &mut PhaseTimings,
    ) -> std::result::Result<[SparseScalars; 3], StageError> {
        let (stage_h, q, prep) = std::thread::scope(|scope| {
            let prep = ready.is_none().then(|| {
                scope.spawn(|| {
                    let t = Instant::now();
                    classify_all(witness).map(|q| (q, t.elapsed()))
                })
            });
            let stage_h = ws.prove(dsrs, inp, out, ffi::STAGE_H);
            let t_wait = Instant::now();
            let q = match prep {
                Some(h) => h.join().map_err(|_| err!(Internal, "witness classification panicked")).and_then(|r| r),
                None => Ok((ready.expect("given"), Duration::ZERO)),
            };
            (stage_h, q, t_wait.elapsed())
        });
        stage_h.map_err(StageError::cuda)?;
        let (q, prep_time) = q?;
        t.push("cpu_prep", prep_time);
        t.push("cpu_prep_wait", prep);
        let sig_on_gpu = q.each_ref().map(|q| q.sig.len() >= GPU_MIN_POINTS);
        inp.l = sparse(&q[0], sig_on_gpu[0]);
        inp.a_q = sparse(&q[1], sig_on_gpu[1]);
        inp.b_q = sparse(&q[2], sig_on_gpu[2]);
        if b_g2 {
            inp.flags |= ffi::B_G2;
        }
        if fold {
            inp.flags |= ffi::FOLD;
        }
        let t_gate = Instant::now();
        let _gate = gate.lock().unwrap_or_else(|e| e.into_inner());
        t.push("gpu_msm_gate_wait", t_gate.elapsed());
        ws.prove(dsrs, inp, out, ffi::STAGE_SPARSE).map_err(StageError::cuda)?;
        Ok(q)
    }

    /// Both GPU stages of one proof; the witness is classified on CPU threads while stage H
    /// runs (unless `ready` gives the classification). Small pieces go to the CPU.
    #[allow(clippy::too_many_arguments)]
    fn run_gpu(
        &self,
        srs: &Srs,
        abc: Abc<'_>,
        witness: &Witness,
        ready: Option<[SparseScalars; 3]>,
        download_h: bool,
        b_g2: bool,
        fold_r: Option<Scalar>,
        t: &mut PhaseTimings,
    ) -> Result<(GpuParts, [SparseScalars; 3])> {
        let p = &srs.params;
        let (m, values, recorded) = match abc {
            Abc::Values(a, b, c) => {
                if b.len() != a.len() || c.len() != a.len() {
                    return Err(err!(Prover, "a, b, c have {}, {}, {} entries", a.len(), b.len(), c.len()));
                }
                (a.len(), Some((a, b, c)), None)
            }
            Abc::Recorded(r, input, aux) => (r.constraints(), None, Some((r, input, aux))),
        };
        if m == 0 {
            return Err(err!(Prover, "no constraints"));
        }
        let ptr = |v: Option<&[Scalar]>| v.map_or(std::ptr::null(), |v| v.as_ptr().cast());
        let n = m.next_power_of_two();
        let h_on_gpu = n - 1 >= GPU_MIN_POINTS;
        let mut h_coeffs = if download_h || !h_on_gpu { Some(vec![Scalar::ZERO; n - 1]) } else { None };
        let mut inp = ffi::ProveIn {
            a: ptr(values.map(|v| v.0)),
            b: ptr(values.map(|v| v.1)),
            c: ptr(values.map(|v| v.2)),
            constraints: m as u64,
            lg_domain: n.trailing_zeros(),
            flags: if h_on_gpu { 0 } else { ffi::SKIP_MSM_H },
            z_inv: z_inv(n)?,
            h_out: h_coeffs.as_mut().map_or(std::ptr::null_mut(), |h| h.as_mut_ptr().cast()),
            l: empty_sparse(),
            a_q: empty_sparse(),
            b_q: empty_sparse(),
            r: fold_r.map_or([0; 4], mont_limbs),
            r1cs: std::ptr::null(), // set once the device holds it
            input: ptr(recorded.map(|r| r.1)),
            aux: ptr(recorded.map(|r| r.2)),
        };
        let mut out = ffi::new_out();

        let fold = fold_r.is_some() && h_on_gpu;
        let mut ready = ready;
        let (q, wall) = loop {
            let t_lock = Instant::now();
            let mut held = self.pool.hold().ok_or_else(|| err!(Prover, "no usable CUDA device is left"))?;
            t.push("gpu_lane_wait", t_lock.elapsed());
            let gate = held.gate();
            let res = held.resident(srs, recorded.map(|r| r.0), t).map_err(StageError::from).and_then(|on| {
                inp.r1cs = on.r1cs.as_ref().map_or(std::ptr::null(), |d| d.raw());
                let wall = Instant::now();
                let ws = held.workspace()?;
                // `ready` is moved into the attempt; a retry classifies again (rare: once per device).
                Self::stages(ws, gate, &on.srs, &mut inp, &mut out, witness, ready.take(), b_g2, fold, t).map(|q| (q, wall.elapsed()))
            });
            // Out of device memory with two workspaces: retry with one. The check clears the
            // failed allocation's error from this thread (else the retry's next error check
            // would report it again) and confirms the device still works.
            if let Err(StageError { oom: true, .. }) = &res {
                if ffi::device_check(held.dev.index).is_ok() && held.shrink_to_one_lane() {
                    continue;
                }
            }
            let res = res.map_err(|e| e.error);
            held.record(&res);
            break res.map_err(|e| e.context(format!("CUDA device {} ({})", held.dev.index, held.dev.info.name)))?;
        };
        let sig_on_gpu = q.each_ref().map(|q| q.sig.len() >= GPU_MIN_POINTS);

        for (name, k) in GPU_PHASES {
            if k != ffi::PH_SPMV || recorded.is_some() {
                t.push(name, ms(out.ms[k]));
            }
        }
        t.push("gpu_events_total", ms(out.ms[ffi::PH_TOTAL_H] + out.ms[ffi::PH_TOTAL_SPARSE]));
        t.push("gpu_wall", wall);

        let t_cpu = Instant::now();
        let bases: [&[G1Affine]; 3] = [&p.l, &p.a, &p.b_g1];
        let mut sig = [ffi::g1(&out.l_sig), ffi::g1(&out.a_sig), ffi::g1(&out.b_sig)];
        for f in 0..3 {
            if !sig_on_gpu[f] {
                sig[f] = cpu_sig_g1(bases[f], &q[f])?;
            }
        }
        let b2 = if b_g2 {
            let rest = if sig_on_gpu[2] { ffi::g2(&out.b2_sig) } else { cpu_sig_g2(&p.b_g2, &q[2])? };
            Some((ffi::g2(&out.b2_ones), rest))
        } else {
            None
        };
        let h = match (&h_coeffs, h_on_gpu) {
            (Some(h), false) => msm_sparse::<G1Affine>(&p.h, 0, h, None)?.0,
            _ => ffi::g1(&out.h),
        };
        t.push("cpu_small_msm", t_cpu.elapsed());
        let ones = [ffi::g1(&out.l_ones), ffi::g1(&out.a_ones), ffi::g1(&out.b_ones)];
        Ok((GpuParts { h, ones, sig, b2, h_coeffs: if download_h { h_coeffs } else { None } }, q))
    }

    /// GPU work of one proof with blinding factors `r`, `s` (B_G2 on a CPU thread if so
    /// configured). r is needed here: the significant B_G1 terms enter the H MSM as r·b.
    pub fn prove_start(&self, srs: &Srs, asg: Assignment, r: Scalar, s: Scalar) -> Result<Started> {
        let started = Instant::now();
        let mut t = PhaseTimings::default();
        let Assignment { prepared, deferred, a, b, c, input, aux, a_aux_density, b_input_density, b_aux_density } = asg;
        let classes = prepared.and_then(|p| p.downcast::<Prepared>().ok()).map(|p| p.0);
        let constraints = deferred.as_ref().map_or(a.len(), |r| r.constraints());
        check_shape(srs, constraints, input.len(), aux.len())?;
        let witness = Arc::new(Witness { input, aux, a_aux_density, b_input_density, b_aux_density });
        let on_gpu = self.b_g2_on_gpu();

        let thread = if on_gpu {
            None
        } else {
            let (w2, bases) = (witness.clone(), srs.params.b_g2.clone());
            Some(
                std::thread::Builder::new()
                    .name("cuzk-b-g2".into())
                    .spawn(move || {
                        let t = Instant::now();
                        b_g2_sum(&bases, &w2).map(|s| (s, t.elapsed()))
                    })
                    .map_err(|e| err!(Internal, "spawning the B_G2 thread: {e}"))?,
            )
        };

        let abc = match &deferred {
            Some(r1cs) => Abc::Recorded(r1cs, &witness.input, &witness.aux),
            None => Abc::Values(&a, &b, &c),
        };
        let (parts, q) = self.run_gpu(srs, abc, &witness, classes, false, on_gpu, Some(r), &mut t)?;
        let sums = [parts.h, parts.ones[0] + parts.sig[0], parts.ones[1] + parts.sig[1], parts.ones[2] + parts.sig[2]];
        let b_g2 = match (parts.b2, thread) {
            (Some((ones, rest)), _) => BG2::Done(ones + rest),
            (None, Some(h)) => BG2::Thread(h),
            (None, None) => return Err(err!(Internal, "B_G2 was computed nowhere")),
        };
        let bytes = (32 * (a.capacity() + b.capacity() + c.capacity())) as u64;
        let qbytes =
            q.iter().map(|q| (4 * (q.ones.capacity() + q.sig_idx.capacity()) + 32 * q.sig.capacity()) as u64).sum();
        let garbage: Garbage = vec![(Box::new((a, b, c)), bytes), (Box::new(q), qbytes)];
        Ok(Started { sums, r, s, b_g2, witness, phases: t, garbage, started })
    }

    /// Wait for B_G2 (when on CPU threads), blind and assemble.
    pub fn prove_finish(&self, srs: &Srs, s0: Started) -> Result<PartitionProof> {
        Box::new(s0).finish(srs)
    }
}

impl ProofTail for Started {
    /// B_G2 (joined from its CPU thread when it ran there), then the proof's assembly.
    fn finish(self: Box<Self>, srs: &Srs) -> Result<PartitionProof> {
        let Started { sums, r, s, b_g2, witness, mut phases, mut garbage, started } = *self;
        let b_g2 = match b_g2 {
            BG2::Done(v) => v,
            BG2::Thread(h) => {
                let t_wait = Instant::now();
                let (v, took) = h.join().map_err(|_| err!(Internal, "the B_G2 thread panicked"))??;
                phases.push("b_g2_wait", t_wait.elapsed());
                phases.push("cpu_b_g2", took);
                v
            }
        };
        let m = MsmSums { h: sums[0], l: sums[1], a: sums[2], b_g1: sums[3], b_g2 };
        let proof: Proof<Bls12> = phases.time("assemble", || assemble(srs, &m, r, s))?;
        phases.push("backend_wall", started.elapsed());
        let wbytes = (32 * (witness.input.capacity() + witness.aux.capacity())) as u64;
        garbage.push((Box::new(witness), wbytes));
        Ok(PartitionProof { proof, phases, garbage, cpu_fallback: false })
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
        let started = self.prove_start(srs, assignment, r, s)?;
        self.prove_finish(srs, started)
    }

    fn devices(&self) -> Vec<DeviceStatus> {
        self.pool.status()
    }

    fn lanes(&self) -> usize {
        self.pool.lanes().max(1)
    }

    fn preload(&self, srs: &Srs) -> Result<()> {
        self.pool.preload(srs)
    }

    fn evaluates_recorded(&self) -> bool {
        self.pool.any_usable()
    }

    fn prepare(&self, assignment: &mut Assignment) -> Result<Option<Duration>> {
        self.prepare_now(assignment).map(Some)
    }

    fn start(&self, srs: &Srs, assignment: Assignment, r: Scalar, s: Scalar, _: &dyn Fn() -> bool) -> Result<Begun> {
        if !self.pool.any_usable() {
            return self.cpu_fallback(srs, assignment, r, s).map(Begun::Done);
        }
        Ok(Begun::Tail(Box::new(self.prove_start(srs, assignment, r, s)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::checks::cpu_ones;
    use super::*;
    use crate::prover::CpuBackend;
    use crate::registry::RegisteredSealProof;
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
    /// the CPU backend's proof when every part is computed on the CPU instead.
    #[test]
    fn host_split_reassembles_to_the_cpu_proof() {
        for (k, toy) in [Toy { constraints: 3000, inputs: 3, mode: 2 }, Toy { constraints: 700, inputs: 0, mode: 1 }]
            .into_iter()
            .enumerate()
        {
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
