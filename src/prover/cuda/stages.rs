//! One proof's GPU stages on a held lane: stage H (upload, a·b·c, NTTs), the sparse queries'
//! upload, then under the device's MSM gate the sparse stage (ΣH, ones by batch addition, the rest
//! by Pippenger), with out-of-memory on a second workspace retried on one, and the small pieces
//! left to the CPU.

use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use ff::{Field, PrimeField};

use super::ffi;
use super::prep::SparseScalars;
use super::riders::Board;
use super::witness::{classify_all, cpu_sig_g1, cpu_sig_g2, empty_sparse, sig_on_gpu, sparse, Witness, GPU_MIN_POINTS};
use super::CudaBackend;
use crate::prover::vram::{AbcAt, Plan};
use crate::error::Result;
use crate::prover::msm::msm_sparse;
use crate::prover::PhaseTimings;
use crate::srs::Srs;
use crate::synth::R1cs;

/// A GPU stage's failure, and whether it was the device running out of memory.
pub(super) struct StageError {
    pub(super) error: crate::error::Error,
    pub(super) oom: bool,
}

impl StageError {
    pub(super) fn cuda(e: ffi::CudaError) -> StageError {
        StageError { oom: e.code == ffi::E_CUDA_OOM, error: ffi::to_err("prove")(e) }
    }
}

impl From<crate::error::Error> for StageError {
    fn from(error: crate::error::Error) -> StageError {
        StageError { error, oom: false }
    }
}

impl From<StageError> for crate::error::Error {
    fn from(e: StageError) -> crate::error::Error {
        e.error
    }
}

/// Where a proof's a, b, c come from.
#[derive(Clone, Copy)]
pub(super) enum Abc<'a> {
    Values(&'a [Scalar], &'a [Scalar], &'a [Scalar]),
    /// Evaluated on the device: the recorded circuit's matrices times [input | aux].
    Recorded(&'a Arc<R1cs>, &'a [Scalar], &'a [Scalar]),
}

/// What one proof asks of the GPU stages.
pub(super) struct GpuJob<'a> {
    pub(super) abc: Abc<'a>,
    pub(super) witness: &'a Witness,
    /// The witness's classification when `prepare` made it (else it runs beside stage H).
    pub(super) ready: Option<[SparseScalars; 3]>,
    /// Bring H's coefficients back to the host too (the checks compare them).
    pub(super) download_h: bool,
    /// The proof's r, to fold the significant L and r·B_G1 scalars into ΣH (None: apart).
    pub(super) fold_r: Option<Scalar>,
}

/// GPU results of one proof, parts kept apart for checking.
pub(super) struct GpuParts {
    pub(super) h: G1Projective,
    pub(super) ones: [G1Projective; 3],
    pub(super) sig: [G1Projective; 3],
    /// (ones, rest) of B over G2.
    pub(super) b2: (G2Projective, G2Projective),
    /// H's coefficients, downloaded only when checking (read by `checks`).
    #[cfg_attr(not(any(test, feature = "tools")), allow(dead_code))]
    pub(super) h_coeffs: Option<Vec<Scalar>>,
}

pub(super) fn ms(v: f32) -> Duration {
    Duration::from_secs_f64(v.max(0.0) as f64 / 1e3)
}

/// 1 / Z(g) on the coset g·⟨ω⟩ of size n, Z(x) = xⁿ − 1, g the multiplicative generator
/// (bellperson's `divide_by_z_on_coset`).
pub(super) fn z_inv(n: usize) -> Result<[u64; 4]> {
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE;
    let inv = Option::<Scalar>::from(z.invert()).ok_or_else(|| err!(Prover, "Z(g) is zero for domain {n}"))?;
    Ok(mont_limbs(inv))
}

/// A scalar as the GPU code reads it.
pub(super) fn mont_limbs(x: Scalar) -> [u64; 4] {
    // SAFETY: Scalar is #[repr(transparent)] over blst_fr = four little-endian u64 limbs in
    // Montgomery form.
    unsafe { std::mem::transmute::<Scalar, [u64; 4]>(x) }
}

/// Phase names of the CUDA-event timings, by `ffi::PH_*` index.
pub(super) const GPU_PHASES: [(&str, usize); 16] = [
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
    ("gpu_early", ffi::PH_EARLY),
    ("gpu_pcie_busy", ffi::PH_PCIE_BUSY),
];

/// The sparse stage's input from the classified witness (significant scalars too few for the GPU
/// are left to the CPU). A dense L or B is not folded into ΣH (cuda/ would not either: its
/// scalars cover every base).
fn set_queries(inp: &mut ffi::ProveIn, q: &[SparseScalars; 3], fold: bool) {
    inp.l = sparse(&q[0]);
    inp.a_q = sparse(&q[1]);
    inp.b_q = sparse(&q[2]);
    if fold && !q[0].is_dense() && !q[2].is_dense() {
        inp.flags |= ffi::FOLD;
    }
}

/// One attempt at a proof's device stages, on a held lane.
struct Attempt<'a> {
    /// The device's MSM gate (one proof's MSMs at a time).
    gate: &'a Mutex<()>,
    dsrs: &'a ffi::DeviceSrs,
    witness: &'a Witness,
    /// The witness's classification, if the synthesis thread made it.
    ready: Option<[SparseScalars; 3]>,
    /// ΣH folded with L's and B_G1's significant scalars (resident mode only).
    fold: bool,
    /// No other proof on the device: the sparse work but ΣH may run beside stage H.
    beside: bool,
    /// Streamed: the partitions waiting for a device whose sums this proof's passes over the
    /// tiles may make too, within the room its plan leaves in the budget.
    riding: Option<Riding<'a>>,
    /// Streamed: this partition's sums of ones and significant parts, made by another proof's
    /// passes (its sparse stage runs ΣH alone).
    given: Option<&'a ffi::ProveOut>,
}

/// Where a streamed proof's passes find riders, and how many bytes of them it may take.
#[derive(Clone, Copy)]
struct Riding<'a> {
    board: &'a Board,
    srs: [usize; 5],
    room: u64,
}

/// The sums a rider was given, in the output its proof reads them from.
fn copy_sums(from: &ffi::ProveOut, to: &mut ffi::ProveOut) {
    (to.l_ones, to.l_sig, to.a_ones, to.a_sig, to.b_ones, to.b_sig) = (from.l_ones, from.l_sig, from.a_ones, from.a_sig, from.b_ones, from.b_sig);
    (to.b2_ones, to.b2_sig) = (from.b2_ones, from.b2_sig);
}

impl CudaBackend {
    /// Stage H (the witness classified on CPU threads meanwhile unless `ready` has it), the
    /// queries' upload, then, holding the device's MSM gate, the sparse stage; with `beside`, a
    /// given classification and a free gate, the sparse work but ΣH beside stage H instead
    /// (STAGE_EARLY). Streamed, the sparse stage also makes the sums of the riders it takes
    /// (`served` gets how many it took), or runs ΣH alone when its own sums were given. Returns
    /// the classification.
    fn stages(
        ws: &mut ffi::Workspace,
        inp: &mut ffi::ProveIn,
        out: &mut ffi::ProveOut,
        a: Attempt<'_>,
        t: &mut PhaseTimings,
        served: &mut usize,
    ) -> std::result::Result<[SparseScalars; 3], StageError> {
        let Attempt { gate, dsrs, witness, ready, fold, beside, riding, given } = a;
        // An idle device and a classified witness: the sparse work but ΣH runs beside stage H,
        // under the MSM gate, taken only if free (another lane's MSMs never wait for a stage H).
        let free_gate = match (beside && ready.is_some()).then(|| gate.try_lock()) {
            Some(Ok(g)) => Some(g),
            Some(Err(TryLockError::Poisoned(e))) => Some(e.into_inner()),
            _ => None,
        };
        if let Some(_gate) = free_gate {
            let q = ready.expect("checked above");
            set_queries(inp, &q, fold);
            for name in ["cpu_prep", "cpu_prep_wait", "gpu_msm_gate_wait"] {
                t.push(name, Duration::ZERO);
            }
            ws.prove(dsrs, inp, out, ffi::STAGE_EARLY | ffi::STAGE_H).map_err(StageError::cuda)?;
            ws.prove(dsrs, inp, out, ffi::STAGE_SPARSE).map_err(StageError::cuda)?;
            return Ok(q);
        }
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
        set_queries(inp, &q, fold);
        if let Some(sums) = given {
            copy_sums(sums, out);
            inp.flags |= ffi::SUMS_GIVEN;
        } else {
            // The queries' upload needs no SMs: it runs before the gate, beside the other lane's
            // MSMs (inside the gate it queued behind that lane's a, b, c upload: ~0.12 s per proof
            // at 2^26).
            ws.prove(dsrs, inp, out, ffi::STAGE_QUERIES).map_err(StageError::cuda)?;
        }
        let t_gate = Instant::now();
        let _gate = gate.lock().unwrap_or_else(|e| e.into_inner());
        t.push("gpu_msm_gate_wait", t_gate.elapsed());
        // Taken now, under the gate: the partitions posted while this one's stage H ran.
        let mut serving = riding.filter(|_| given.is_none()).map(|r| r.board.take(r.srs, &[inp.l, inp.a_q, inp.b_q], r.room));
        let specs = serving.as_mut().map(|s| s.specs()).unwrap_or_default();
        (inp.riders, inp.nriders) = (if specs.is_empty() { std::ptr::null() } else { specs.as_ptr() }, specs.len() as u64);
        *served = specs.len();
        let res = ws.prove(dsrs, inp, out, ffi::STAGE_SPARSE);
        (inp.riders, inp.nriders) = (std::ptr::null(), 0);
        // On an error `serving` is dropped: its riders make their own sums.
        res.map_err(StageError::cuda)?;
        if let Some(s) = serving {
            s.done();
        }
        Ok(q)
    }

    /// Both GPU stages of one proof; the witness is classified on CPU threads while stage H
    /// runs (unless `job.ready` gives the classification). Small pieces go to the CPU. An error
    /// says whether the device ran out of memory on every try (`oom`).
    pub(super) fn run_gpu(&self, srs: &Srs, job: GpuJob<'_>, t: &mut PhaseTimings) -> std::result::Result<(GpuParts, [SparseScalars; 3]), StageError> {
        let GpuJob { abc, witness, ready, download_h, fold_r } = job;
        let p = &srs.params;
        let (m, values, recorded) = match abc {
            Abc::Values(a, b, c) => {
                if b.len() != a.len() || c.len() != a.len() {
                    return Err(err!(Prover, "a, b, c have {}, {}, {} entries", a.len(), b.len(), c.len()).into());
                }
                (a.len(), Some((a, b, c)), None)
            }
            Abc::Recorded(r, input, aux) => (r.constraints(), None, Some((r, input, aux))),
        };
        if m == 0 {
            return Err(err!(Prover, "no constraints").into());
        }
        let ptr = |v: Option<&[Scalar]>| v.map_or(std::ptr::null(), |v| v.as_ptr().cast());
        let n = m.next_power_of_two();
        let h_on_gpu = n > GPU_MIN_POINTS; // n − 1 coefficients
        let mut h_coeffs = if download_h || !h_on_gpu { Some(vec![Scalar::ZERO; n - 1]) } else { None };
        let mut inp = ffi::ProveIn {
            a: ptr(values.map(|v| v.0)),
            b: ptr(values.map(|v| v.1)),
            c: ptr(values.map(|v| v.2)),
            constraints: m as u64,
            lg_domain: n.trailing_zeros(),
            flags: if h_on_gpu { 0 } else { ffi::SKIP_MSM_H } | self.ones_flags(),
            z_inv: z_inv(n)?,
            h_out: h_coeffs.as_mut().map_or(std::ptr::null_mut(), |h| h.as_mut_ptr().cast()),
            l: empty_sparse(),
            a_q: empty_sparse(),
            b_q: empty_sparse(),
            r: fold_r.map_or([0; 4], mont_limbs),
            r1cs: std::ptr::null(), // set once the device holds it
            input: ptr(recorded.map(|r| r.1)),
            aux: ptr(recorded.map(|r| r.2)),
            tile_points: 0,
            spill: std::ptr::null_mut(),
            riders: std::ptr::null(),
            nriders: 0,
        };
        // a, b, c computed here when the device streams without the recorded circuit (the engine
        // normally computes them on its synthesis threads then: `evaluates_recorded`).
        let mut host_abc: Option<[Vec<Scalar>; 3]> = None;
        let mut out = ffi::new_out();

        let fold = fold_r.is_some() && h_on_gpu;
        let footprint = super::witness::footprint(srs, recorded.map(|r| &**r.0), ready.as_ref());
        let mut ready = ready;
        let srs_key = super::pool::srs_key(srs);
        // A classified partition waiting for a streamed device offers its queries to the proof
        // holding it (`riders`): that proof's passes over the SRS tiles may make its sums.
        let mut given: Option<Box<ffi::ProveOut>> = None;
        // Set after a proof carrying riders ran out of device memory: it is retried alone.
        let mut alone_in_pass = false;
        let (q, wall) = loop {
            let t_lock = Instant::now();
            let held = {
                // Only before the first attempt: it takes the classification (a retry makes its own).
                let ticket = match &ready {
                    Some(q) if self.pool.streams(&footprint) => Some(self.riders.post(srs_key, q)),
                    _ => None,
                };
                let held = self.pool.hold(&footprint);
                if let Some(ticket) = ticket {
                    given = ticket.settle();
                }
                held
            };
            let mut held = held.ok_or_else(|| err!(Prover, "no usable CUDA device with the VRAM budget for this circuit is left"))?;
            t.push("gpu_lane_wait", t_lock.elapsed());
            let gate = held.gate();
            let alone = held.alone();
            let mut served = 0;
            let res = held.resident(srs, recorded.map(|r| r.0), &footprint, t).map_err(StageError::from).and_then(|on| {
                inp.r1cs = on.r1cs.as_ref().map_or(std::ptr::null(), |d| d.raw());
                // Each attempt (another device on a retry) starts from the proof's own a, b, c or
                // witness, and from its flags without the streamed mode.
                (inp.a, inp.b, inp.c) = (ptr(values.map(|v| v.0)), ptr(values.map(|v| v.1)), ptr(values.map(|v| v.2)));
                (inp.input, inp.aux) = (ptr(recorded.map(|r| r.1)), ptr(recorded.map(|r| r.2)));
                inp.flags &= !(ffi::STREAMED | ffi::H_BESIDE_TILES | ffi::SUMS_GIVEN);
                inp.spill = std::ptr::null_mut();
                let mut park = false;
                let mut room = 0;
                let streamed = match on.plan {
                    Plan::Streamed(p) => {
                        room = self.rider_room(held.dev.budget.saturating_sub(p.need));
                        inp.flags |= ffi::STREAMED | if p.h_beside_tiles { ffi::H_BESIDE_TILES } else { 0 };
                        inp.tile_points = p.tile;
                        let tiles = on.r1cs.as_ref().is_some_and(|r| r.streamed());
                        park = tiles && (p.abc == AbcAt::CircuitTilesParked || self.parks_always());
                        if let (Some((r, input, aux)), None) = (recorded, &on.r1cs) {
                            let t_abc = Instant::now();
                            let abc = host_abc.get_or_insert_with(|| r.products(input, aux));
                            t.push("cpu_abc", t_abc.elapsed());
                            (inp.a, inp.b, inp.c) = (abc[0].as_ptr().cast(), abc[1].as_ptr().cast(), abc[2].as_ptr().cast());
                            (inp.input, inp.aux) = (std::ptr::null(), std::ptr::null());
                        }
                        true
                    }
                    _ => false,
                };
                // Streamed: the sparse stage follows stage H (its tiles need the memory stage
                // H frees) and runs its own ΣH (no fold).
                let beside = self.sparse_beside_h() && alone && !streamed;
                let wall = Instant::now();
                let ws = held.workspace()?;
                if park {
                    inp.spill = ws.spill(n);
                }
                // `ready` is moved into the attempt; a retry classifies again (rare: once per device).
                let given = given.as_deref().filter(|_| streamed);
                let attempt = Attempt {
                    gate,
                    dsrs: &on.srs,
                    witness,
                    ready: ready.take(),
                    fold: fold && !streamed,
                    beside,
                    riding: (streamed && given.is_none() && !alone_in_pass).then_some(Riding { board: &self.riders, srs: srs_key, room }),
                    given,
                };
                Self::stages(ws, &mut inp, &mut out, attempt, t, &mut served).map(|q| (q, wall.elapsed()))
            });
            if res.is_ok() {
                held.served(served);
                held.moved(out.h2d_bytes, out.d2h_bytes, ms(out.ms[ffi::PH_PCIE_BUSY]));
            }
            // Out of device memory with riders: retry alone (the riders make their own sums);
            // with two workspaces: retry with one. The check clears the failed allocation's
            // error from this thread (else the retry's next error check would report it again)
            // and confirms the device still works.
            if let Err(StageError { oom: true, .. }) = &res {
                if served > 0 && !alone_in_pass && ffi::device_check(held.dev.index).is_ok() {
                    log::warn!(
                        "CUDA device {}: out of memory with {served} partitions riding this one's passes; retrying it alone",
                        held.dev.index
                    );
                    alone_in_pass = true;
                    continue;
                }
                if ffi::device_check(held.dev.index).is_ok() && held.shrink_to_one_lane() {
                    continue;
                }
            }
            let oom = matches!(&res, Err(StageError { oom: true, .. }));
            let res = res.map_err(|e| e.error);
            if res.is_ok() && (inp.flags & ffi::STREAMED) != 0 && log::log_enabled!(log::Level::Debug) {
                // The pool's high-water marks beside the plan: what the budget had to hold, measured.
                if let Ok([free, total, reserved, used]) = ffi::device_memory(held.dev.index) {
                    log::debug!(
                        "CUDA device {}: streamed proof done; pool high-water {} MiB reserved, {} MiB used; {} of {} MiB free",
                        held.dev.index,
                        reserved >> 20,
                        used >> 20,
                        free >> 20,
                        total >> 20
                    );
                }
            }
            held.record(&res);
            break res.map_err(|e| StageError { oom, error: e.context(format!("CUDA device {} ({})", held.dev.index, held.dev.info.name)) })?;
        };
        if let Some((r, ..)) = recorded {
            r.observe_significant(q.each_ref().map(|q| q.n_sig as u64)); // (unprepared: the next plan's)
        }
        let sig_on_gpu = q.each_ref().map(sig_on_gpu);

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
        let rest = if sig_on_gpu[2] { ffi::g2(&out.b2_sig) } else { cpu_sig_g2(&p.b_g2, &q[2])? };
        let b2 = (ffi::g2(&out.b2_ones), rest);
        let h = match (&h_coeffs, h_on_gpu) {
            (Some(h), false) => msm_sparse::<G1Affine>(&p.h, 0, h, None)?.0,
            _ => ffi::g1(&out.h),
        };
        t.push("cpu_small_msm", t_cpu.elapsed());
        let ones = [ffi::g1(&out.l_ones), ffi::g1(&out.a_ones), ffi::g1(&out.b_ones)];
        Ok((GpuParts { h, ones, sig, b2, h_coeffs: if download_h { h_coeffs } else { None } }, q))
    }
}
