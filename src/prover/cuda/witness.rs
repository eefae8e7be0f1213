//! The witness as the GPU stages read it: its scalars classified per query (0 / 1 / other),
//! the sparse descriptors handed to cuda/, and the CPU's share of the small MSMs (pieces under
//! [`GPU_MIN_POINTS`]).

use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ec_gpu_gen::multiexp_cpu::DensityTracker;

use super::ffi;
use super::prep::{classes, classify, SparseScalars};
use crate::error::Result;
use crate::prover::msm::msm_sparse;
use crate::prover::vram::{CircuitSizes, Footprint};
use crate::srs::Srs;
use crate::synth::{Assignment, R1cs};

/// MSMs smaller than this run on the CPU (GPU launch and sort overheads dominate them).
pub(super) const GPU_MIN_POINTS: usize = 64;

/// The witness the classification (and the B_G2 thread, on the CPU) reads.
pub(super) struct Witness {
    pub(super) input: Vec<Scalar>,
    pub(super) aux: Vec<Scalar>,
    pub(super) a_aux_density: DensityTracker,
    pub(super) b_input_density: DensityTracker,
    pub(super) b_aux_density: DensityTracker,
}

impl Witness {
    #[cfg(any(test, feature = "tools"))]
    pub(super) fn copy_of(asg: &Assignment) -> Witness {
        Witness {
            input: asg.input.clone(),
            aux: asg.aux.clone(),
            a_aux_density: asg.a_aux_density.clone(),
            b_input_density: asg.b_input_density.clone(),
            b_aux_density: asg.b_aux_density.clone(),
        }
    }
}

/// What [`Backend::prepare`] leaves on an assignment for this backend: the witness classified
/// (0 / 1 / other per query), so that the GPU does not wait for the CPU to do it.
pub(super) struct Prepared(pub(super) [SparseScalars; 3]);

/// The device memory a proof of `srs` plans for (`vram`): with `r1cs` when a, b, c come from
/// the recorded circuit, and this witness's own significant counts when it is classified
/// already (what the recorded circuit's witnesses were seen to hold may be less, and without
/// one nothing else counts them).
pub(super) fn footprint(srs: &Srs, r1cs: Option<&R1cs>, classes: Option<&[SparseScalars; 3]>) -> Footprint {
    let sizes = CircuitSizes::of(srs, r1cs);
    Footprint::of(&classes.map_or(sizes, |q| sizes.seen(q.each_ref().map(|q| q.n_sig as u64))))
}

/// The classification [`Backend::prepare`] left on an assignment, if any.
pub(super) fn prepared(asg: &Assignment) -> Option<&[SparseScalars; 3]> {
    asg.prepared.as_ref().and_then(|p| p.downcast_ref::<Prepared>()).map(|p| &p.0)
}

/// Whether q's significant scalars are summed on the GPU (a dense query's always are).
pub(super) fn sig_on_gpu(q: &SparseScalars) -> bool {
    q.is_dense() || q.sig.len() >= GPU_MIN_POINTS
}

/// q as cuda/ reads it: its significant scalars only where [`sig_on_gpu`].
pub(super) fn sparse(q: &SparseScalars) -> ffi::Sparse {
    if q.is_dense() {
        return ffi::Sparse { npoints: q.npoints as u64, dense: q.dense.as_ptr().cast(), ..empty_sparse() };
    }
    ffi::Sparse {
        ones: q.ones.as_ptr(),
        ones_words: q.ones.len() as u64,
        npoints: q.npoints as u64,
        sig_idx: q.sig_idx.as_ptr(),
        sig_scalars: q.sig.as_ptr().cast(),
        nsig: if sig_on_gpu(q) { q.sig.len() as u64 } else { 0 },
        dense: std::ptr::null(),
    }
}

pub(super) fn empty_sparse() -> ffi::Sparse {
    ffi::Sparse {
        ones: std::ptr::null(),
        ones_words: 0,
        npoints: 0,
        sig_idx: std::ptr::null(),
        sig_scalars: std::ptr::null(),
        nsig: 0,
        dense: std::ptr::null(),
    }
}

/// Σ bases[j] · sig[k] for j = sig_idx[k] on the CPU (a dense query's: Σ bases[j] · dense[j],
/// its ones included).
pub(super) fn cpu_sig_g1(bases: &[G1Affine], q: &SparseScalars) -> Result<G1Projective> {
    if q.is_dense() {
        return Ok(msm_sparse::<G1Affine>(&Arc::new(bases[..q.npoints].to_vec()), 0, &q.dense, None)?.0);
    }
    let picked: Arc<Vec<G1Affine>> = Arc::new(q.sig_idx.iter().map(|&j| bases[j as usize]).collect());
    Ok(msm_sparse::<G1Affine>(&picked, 0, &q.sig, None)?.0)
}

pub(super) fn cpu_sig_g2(bases: &[G2Affine], q: &SparseScalars) -> Result<G2Projective> {
    if q.is_dense() {
        return Ok(msm_sparse::<G2Affine>(&Arc::new(bases[..q.npoints].to_vec()), 0, &q.dense, None)?.0);
    }
    let picked: Arc<Vec<G2Affine>> = Arc::new(q.sig_idx.iter().map(|&j| bases[j as usize]).collect());
    Ok(msm_sparse::<G2Affine>(&picked, 0, &q.sig, None)?.0)
}

/// B over G2 the direct way (the split tests compare the GPU's ones + rest with it).
#[cfg(test)]
pub(super) fn b_g2_sum(bases: &Arc<Vec<G2Affine>>, w: &Witness) -> Result<G2Projective> {
    let b_inputs = w.b_input_density.get_total_density();
    let (bi, _) = msm_sparse::<G2Affine>(bases, 0, &w.input, Some(w.b_input_density.bv.as_bitslice()))?;
    let (ba, _) = msm_sparse::<G2Affine>(bases, b_inputs, &w.aux, Some(w.b_aux_density.bv.as_bitslice()))?;
    Ok(bi + ba)
}

/// Classify the witness for the L, A and B queries (in parallel).
pub(super) fn classify_all(w: &Witness) -> Result<[SparseScalars; 3]> {
    classify_parts(&w.input, &w.aux, &w.a_aux_density, &w.b_input_density, &w.b_aux_density, None)
}

pub(super) fn classify_parts(
    input: &[Scalar],
    aux: &[Scalar],
    a_aux: &DensityTracker,
    b_input: &DensityTracker,
    b_aux: &DensityTracker,
    seen: Option<[u64; 3]>,
) -> Result<[SparseScalars; 3]> {
    let (ci, ca) = rayon::join(|| classes(input), || classes(aux));
    let seen = |f: usize| seen.map(|s| s[f]);
    let (l, (a, b)) = rayon::join(
        || classify(&[(aux, &ca, None)], seen(0)),
        || {
            rayon::join(
                || classify(&[(input, &ci, None), (aux, &ca, Some(a_aux.bv.as_bitslice()))], seen(1)),
                || classify(&[(input, &ci, Some(b_input.bv.as_bitslice())), (aux, &ca, Some(b_aux.bv.as_bitslice()))], seen(2)),
            )
        },
    );
    Ok([l?, a?, b?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Assignment, SizeHint, Toy};

    /// What cuda/ reads of a classified witness: a dense query as its scalars alone (no bitmap,
    /// no list, its significant part on the GPU), a sparse one as its bitmap and list; and the
    /// CPU's sum of a query (ones + significant part) is the same sum either way.
    #[test]
    fn descriptors_of_dense_and_sparse_queries() {
        for (mode, dense) in [(2, true), (3, false)] {
            let asg = Assignment::synthesize(Toy { constraints: 2000, inputs: 2, mode }, SizeHint::default()).unwrap();
            let w = Witness::copy_of(&asg);
            for q in classify_all(&w).unwrap() {
                let d = sparse(&q);
                assert_eq!((d.npoints, q.is_dense()), (q.npoints as u64, dense), "mode {mode}");
                if dense {
                    assert_eq!((d.ones_words, d.nsig, d.dense), (0, 0, q.dense.as_ptr().cast()));
                    assert!(d.ones.is_null() && d.sig_idx.is_null() && d.sig_scalars.is_null());
                } else {
                    assert_eq!((d.ones_words, d.nsig), (q.ones.len() as u64, q.sig.len() as u64));
                    assert!(d.dense.is_null());
                }
                assert!(sig_on_gpu(&q));
            }
        }
        // The same L sum from a witness classified sparse and from its dense form.
        let asg = Assignment::synthesize(Toy { constraints: 3000, inputs: 1, mode: 3 }, SizeHint::default()).unwrap();
        let w = Witness::copy_of(&asg);
        let q = classify_all(&w).unwrap().into_iter().next().unwrap();
        assert!(!q.is_dense());
        let bases: Vec<G1Affine> = crate::prover::cuda::synthetic::g1_points(q.npoints, 3);
        let sparse_sum = super::super::checks::cpu_ones(&bases, &q) + cpu_sig_g1(&bases, &q).unwrap();
        let as_dense = SparseScalars { npoints: q.npoints, dense: w.aux.clone(), ..Default::default() };
        assert_eq!(cpu_sig_g1(&bases, &as_dense).unwrap(), sparse_sum);
    }

    /// Without a recorded circuit a proof is planned from its own classification once it has
    /// one: a dense witness (a PoSt's) plans its queries' scalars on the device (32 B a point),
    /// not the lists and gathered bases of the planning share (5 %, sparse).
    #[test]
    fn footprint_follows_the_classified_witness() {
        use crate::prover::cuda::synthetic::{random_params, Shape};
        let asg = Assignment::synthesize(Toy { constraints: 4000, inputs: 2, mode: 2 }, SizeHint::default()).unwrap();
        let srs = Srs::from_parameters(filecoin_proofs_api::RegisteredSealProof::StackedDrg2KiBV1_1, random_params(Shape::of(&asg), 7));
        let q = classify_all(&Witness::copy_of(&asg)).unwrap();
        assert!(q.iter().all(SparseScalars::is_dense));
        let (unknown, classified) = (footprint(&srs, None, None), footprint(&srs, None, Some(&q)));
        assert_eq!(unknown.sizes.dense(), [false; 3]);
        assert_eq!(classified.sizes.dense(), [true; 3]);
        assert_eq!(classified.sizes.significant_seen, q.each_ref().map(|q| q.n_sig as u64));
        assert_ne!(classified.workspace, unknown.workspace, "the dense form's uploads, no gather or fold");
    }
}
