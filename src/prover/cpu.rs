//! The CPU Groth16 backend: works everywhere. H via bellperson's NTTs, MSMs via [`super::msm`],
//! the proof put together by [`super::assemble`].

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use super::assemble::{assemble, check_shape, MsmSums};
use super::msm::{msm_sparse, BlstPoint};
use super::ntt;
use super::{Backend, Begun, PartitionProof, PhaseTimings};
use crate::error::Result;
use crate::srs::Srs;
use crate::synth::Assignment;

/// The CPU backend. `lanes`: partitions it proves at once (the engine runs one prover thread
/// each). One proof already uses every core, so a second lane buys no throughput; it lets a
/// short proof (a WinningPoSt) start while a long C2 partition is being proved instead of
/// waiting the whole proof for it, the two sharing the cores.
#[derive(Debug)]
pub struct CpuBackend {
    lanes: usize,
}

impl Default for CpuBackend {
    fn default() -> Self {
        CpuBackend { lanes: 1 }
    }
}

/// bellperson's own H computation (EvaluationDomain), kept as the reference the faster
/// [`super::ntt`] path and the GPU NTTs are checked against. First n−1 coefficients (the last
/// is always zero).
#[cfg(any(test, all(feature = "cuda", feature = "tools")))]
pub(crate) fn compute_h_bellperson(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> Result<Vec<Scalar>> {
    use bellperson::domain::EvaluationDomain;
    use ec_gpu_gen::threadpool::Worker;
    let worker = Worker::new();
    let domain = |v| EvaluationDomain::from_coeffs(v).map_err(|e| err!(Prover, "evaluation domain: {e}"));
    let (mut a, mut b, mut c) = (domain(a)?, domain(b)?, domain(c)?);
    let mut kern = None;
    EvaluationDomain::ifft_many(&mut [&mut a, &mut b, &mut c], &worker, &mut kern)
        .map_err(|e| err!(Prover, "ifft: {e}"))?;
    EvaluationDomain::coset_fft_many(&mut [&mut a, &mut b, &mut c], &worker, &mut kern)
        .map_err(|e| err!(Prover, "coset fft: {e}"))?;
    a.mul_assign(&worker, &b);
    drop(b);
    a.sub_assign(&worker, &c);
    drop(c);
    a.divide_by_z_on_coset(&worker);
    a.icoset_fft(&worker, &mut kern).map_err(|e| err!(Prover, "icoset fft: {e}"))?;
    let mut h = a.into_coeffs();
    h.pop();
    Ok(h)
}

/// Σ h_i · H_i over the n−1 coefficients of H (canonical little-endian bytes).
fn msm_h(bases: &[G1Affine], h: &[u8]) -> Result<G1Projective> {
    let m = h.len() / 32;
    if bases.len() < m {
        return Err(err!(Prover, "SRS has {} h points, the domain needs {m}", bases.len()));
    }
    Ok(G1Affine::pippenger(&bases[..m], h))
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn prove(&self, srs: &Srs, asg: Assignment, r: Scalar, s: Scalar) -> Result<PartitionProof> {
        self.prove_cancellable(srs, asg, r, s, &|| false)
    }

    fn start(&self, srs: &Srs, asg: Assignment, r: Scalar, s: Scalar, cancelled: &dyn Fn() -> bool) -> Result<Begun> {
        self.prove_cancellable(srs, asg, r, s, cancelled).map(Begun::Done)
    }

    fn lanes(&self) -> usize {
        self.lanes
    }

    fn working_bytes(&self, srs: &Srs) -> u64 {
        let n = srs.size_hint().constraints.next_power_of_two() as u64;
        if super::ifma::available() {
            // IFMA: three NTT buffers of 40-byte scalars, ΣH's scalars, its converted bases
            // (128 bytes each) and two windows' sort buffers.
            n * (3 * 40 + 32 + 128 + 2 * 8)
        } else {
            n * 32 // ΣH's scalars
        }
    }
}

impl CpuBackend {
    /// A backend proving `lanes` partitions at once (0 = automatic: 1).
    pub fn with_lanes(lanes: usize) -> Self {
        CpuBackend { lanes: lanes.max(1) }
    }

    /// As [`Backend::prove`], giving up with `Status::Cancelled` at the next phase boundary once
    /// `cancelled()` returns true.
    pub fn prove_cancellable(
        &self,
        srs: &Srs,
        asg: Assignment,
        r: Scalar,
        s: Scalar,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<PartitionProof> {
        let check = || if cancelled() { Err(err!(Cancelled, "cancelled while proving")) } else { Ok(()) };
        let p = &srs.params;
        let mut t = PhaseTimings::default();
        let mut asg = asg;
        if asg.deferred.is_some() {
            t.time("cpu_abc", || asg.evaluate_deferred());
        }
        let Assignment { prepared, deferred: _, a, b, c, input, aux, a_aux_density, b_input_density, b_aux_density } = asg;
        drop(prepared); // another backend's; of no use here
        check_shape(srs, a.len(), input.len(), aux.len())?;

        let (_, h, mut garbage) = t.time("ntt_h", || ntt::h_coefficients(a, b, c));
        check()?;
        let sum_h = t.time("msm_h", || msm_h(&p.h, &h))?;
        check()?;
        let (sum_l, _) = t.time("msm_l", || msm_sparse::<G1Affine>(&p.l, 0, &aux, None))?;
        let sum_a = t.time("msm_a", || -> Result<G1Projective> {
            let (ai, _) = msm_sparse::<G1Affine>(&p.a, 0, &input, None)?;
            let (aa, _) = msm_sparse::<G1Affine>(&p.a, input.len(), &aux, Some(&a_aux_density.bv))?;
            Ok(ai + aa)
        })?;
        check()?;
        let b_inputs = b_input_density.get_total_density();
        let sum_b_g1 = t.time("msm_b_g1", || -> Result<G1Projective> {
            let (bi, _) = msm_sparse::<G1Affine>(&p.b_g1, 0, &input, Some(&b_input_density.bv))?;
            let (ba, _) = msm_sparse::<G1Affine>(&p.b_g1, b_inputs, &aux, Some(&b_aux_density.bv))?;
            Ok(bi + ba)
        })?;
        let sum_b_g2 = t.time("msm_b_g2", || -> Result<G2Projective> {
            let (bi, _) = msm_sparse::<G2Affine>(&p.b_g2, 0, &input, Some(&b_input_density.bv))?;
            let (ba, _) = msm_sparse::<G2Affine>(&p.b_g2, b_inputs, &aux, Some(&b_aux_density.bv))?;
            Ok(bi + ba)
        })?;
        let sums = MsmSums { h: sum_h, l: sum_l, a: sum_a, b_g1: sum_b_g1, b_g2: sum_b_g2 };
        let proof = t.time("assemble", || assemble(srs, &sums, r, s))?;
        let witness_bytes = (32 * (input.capacity() + aux.capacity())) as u64;
        let h_bytes = h.capacity() as u64;
        garbage.push((Box::new(h), h_bytes));
        garbage.push((Box::new((input, aux, a_aux_density, b_input_density, b_aux_density)), witness_bytes));
        Ok(PartitionProof { proof, phases: t, garbage, cpu_fallback: false })
    }
}
