//! The CUDA backend checked against the CPU part by part (tests and `cuzk-gpu selftest`), and
//! the witness statistics `cuzk-gpu stats-2kib` prints.

use blstrs::G1Affine;
use group::{prime::PrimeCurveAffine, Group};
use rayon::prelude::*;

use super::prep::SparseScalars;
use super::stages::{Abc, GpuJob};
use super::witness::{classify_all, classify_parts, cpu_sig_g1, cpu_sig_g2, Witness};
use super::CudaBackend;
use crate::error::Result;
use crate::prover::assemble::check_shape;
use crate::prover::msm::msm_sparse;
use crate::prover::PhaseTimings;
use crate::srs::Srs;
use crate::synth::Assignment;

impl CudaBackend {
    /// Check every GPU intermediate of one proof against the CPU: H coefficients, ΣH, and for
    /// L, A, B_G1 and B_G2 the sum of the one-scalar bases and the MSM
    /// of the rest. For tests and `cuzk-gpu selftest`; returns (part, matches).
    pub fn check_parts(&self, srs: &Srs, asg: &Assignment) -> Result<Vec<(&'static str, bool)>> {
        let p = &srs.params;
        if asg.deferred.is_some() {
            return Err(err!(InvalidArgument, "check_parts needs an assignment with a, b, c evaluated"));
        }
        check_shape(srs, asg.a.len(), asg.input.len(), asg.aux.len())?;
        let w = Witness::copy_of(asg);
        let q = classify_all(&w)?;
        let mut t = PhaseTimings::default();
        let abc = Abc::Values(&asg.a, &asg.b, &asg.c);
        let job = GpuJob { abc, witness: &w, ready: Some(q), download_h: true, fold_r: None };
        let (gpu, q) = self.run_gpu(srs, job, &mut t)?;
        let h = crate::prover::cpu::compute_h_bellperson(asg.a.clone(), asg.b.clone(), asg.c.clone())?;
        let mut res = vec![("h_coefficients", gpu.h_coeffs.as_deref() == Some(h.as_slice()))];
        let cpu_h = msm_sparse::<G1Affine>(&p.h, 0, &h, None)?.0;
        res.push(("msm_h", cpu_h == gpu.h));
        let bases: [&[G1Affine]; 3] = [&p.l, &p.a, &p.b_g1];
        let names = [("ones_l", "sig_l"), ("ones_a", "sig_a"), ("ones_b_g1", "sig_b_g1")];
        for f in 0..3 {
            res.push((names[f].0, cpu_ones(bases[f], &q[f]) == gpu.ones[f]));
            res.push((names[f].1, cpu_sig_g1(bases[f], &q[f])? == gpu.sig[f]));
        }
        let (ones, rest) = gpu.b2;
        res.push(("ones_b_g2", cpu_ones(&p.b_g2, &q[2]) == ones));
        res.push(("sig_b_g2", cpu_sig_g2(&p.b_g2, &q[2])? == rest));
        Ok(res)
    }
}

/// Per query (L, A, B): (bases used, zero scalars, one scalars, other scalars) of a witness.
pub fn witness_stats(asg: &Assignment) -> Result<[(usize, usize, usize, usize); 3]> {
    let q = classify_all(&Witness::copy_of(asg))?;
    Ok(q.map(|q| {
        let (zeros, ones, sig) = q.class_counts();
        (q.npoints, zeros, ones, sig)
    }))
}

/// How long the witness classification that `prepare` runs takes on this host (benchmarks; no
/// device needed): the first of a circuit's witnesses (nothing seen), and one after (the
/// counts seen: a dense query copied at once, no list made first). The results are dropped
/// after the clocks stop.
pub fn classify_time(asg: &Assignment) -> Result<(std::time::Duration, std::time::Duration)> {
    let classify = |seen| {
        let t = std::time::Instant::now();
        let q = classify_parts(&asg.input, &asg.aux, &asg.a_aux_density, &asg.b_input_density, &asg.b_aux_density, seen)?;
        Ok::<_, crate::error::Error>((t.elapsed(), q.each_ref().map(|q| q.n_sig as u64)))
    };
    let (first, counts) = classify(None)?;
    let (after, _) = classify(Some(counts))?;
    Ok((first, after))
}

/// Σ bases[j] over the bits of q.ones, on the CPU (the self-checks' reference).
pub(super) fn cpu_ones<G>(bases: &[G], q: &SparseScalars) -> G::Curve
where
    G: PrimeCurveAffine + Sync,
    G::Curve: Send + std::ops::AddAssign<G>,
{
    q.ones
        .par_iter()
        .enumerate()
        .map(|(w, &bits)| {
            let mut acc = G::Curve::identity();
            for b in 0..32 {
                if bits >> b & 1 == 1 {
                    acc += bases[w * 32 + b];
                }
            }
            acc
        })
        .reduce(G::Curve::identity, |a, b| a + b)
}
