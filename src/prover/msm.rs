//! CPU multi-scalar multiplication tuned for PoRep witnesses, where most scalars are 0 or 1:
//! zeros are skipped, ones are summed with plain mixed additions (G1: eight at a time on AVX-512
//! IFMA where the CPU has it, [`super::ifma`]), and only the remaining
//! "significant" scalars go through Pippenger: for G1, the AVX-512 IFMA one of
//! [`super::ifma`] where the CPU has it and the MSM is big (ΣH), else blst's multi-threaded
//! implementation (~2x faster than the generic one bellperson uses).

use bitvec::prelude::{BitSlice, Lsb0};
use blst::MultiPoint;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Group};
use rayon::prelude::*;

use crate::error::Result;

/// Affine points blst can run Pippenger on directly.
pub trait BlstPoint: PrimeCurveAffine<Scalar = Scalar> + Send + Sync {
    /// Σ points[i] · scalars[i], scalars as 32-byte little-endian strings.
    fn pippenger(points: &[Self], scalars: &[u8]) -> Self::Curve;

    /// Σ points[i] for i in `idx` (the scalar-one terms).
    fn sum(points: &[Self], idx: &[u32]) -> Self::Curve {
        idx.iter().fold(Self::Curve::identity(), |acc, &i| acc + points[i as usize])
    }
}

impl BlstPoint for G1Affine {
    fn pippenger(points: &[Self], scalars: &[u8]) -> G1Projective {
        if points.len() >= super::ifma::MIN_POINTS {
            if let Some(sum) = super::ifma::msm_g1(points, scalars, None) {
                return sum;
            }
        }
        blst_g1(points, scalars)
    }

    fn sum(points: &[Self], idx: &[u32]) -> G1Projective {
        super::ifma::sum_g1(points, idx).unwrap_or_else(|| idx.iter().fold(G1Projective::identity(), |acc, &i| acc + points[i as usize]))
    }
}

/// blst's Pippenger over G1 (scalars 32-byte little-endian).
pub fn blst_g1(points: &[G1Affine], scalars: &[u8]) -> G1Projective {
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, G1Projective over blst_p1.
    let raw: &[blst::blst_p1_affine] = unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) };
    let out: blst::blst_p1 = raw.mult(scalars, 255);
    unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(out) }
}

impl BlstPoint for G2Affine {
    fn pippenger(points: &[Self], scalars: &[u8]) -> G2Projective {
        // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine, G2Projective over blst_p2.
        let raw: &[blst::blst_p2_affine] = unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) };
        let out: blst::blst_p2 = raw.mult(scalars, 255);
        unsafe { std::mem::transmute::<blst::blst_p2, G2Projective>(out) }
    }
}

/// Counts of the scalar classes seen by one MSM (reported in timings/metrics).
#[derive(Debug, Clone, Copy, Default)]
pub struct MsmStats {
    pub zeros: usize,
    pub ones: usize,
    pub significant: usize,
}

/// Pippenger over all of `bases[skip..skip + exps.len()]`.
pub fn msm_dense<G: BlstPoint>(bases: &[G], skip: usize, exps: Vec<Scalar>) -> Result<G::Curve> {
    if bases.len() < skip + exps.len() {
        return Err(err!(Prover, "SRS has {} bases, the witness needs {}", bases.len(), skip + exps.len()));
    }
    if exps.is_empty() {
        return Ok(G::Curve::identity());
    }
    let mut bytes = vec![0u8; 32 * exps.len()];
    bytes.par_chunks_exact_mut(32).zip(exps.par_iter()).for_each(|(b, s)| b.copy_from_slice(&s.to_bytes_le()));
    drop(exps);
    Ok(G::pippenger(&bases[skip..skip + bytes.len() / 32], &bytes))
}

/// Σ bases[skip + j] · exps[i] over the variables i selected by `density` (all when `None`),
/// j counting selected variables only — the layout of the A / B query points in the SRS.
pub fn msm_sparse<G: BlstPoint>(
    bases: &[G],
    skip: usize,
    exps: &[Scalar],
    density: Option<&BitSlice<usize, Lsb0>>,
) -> Result<(G::Curve, MsmStats)> {
    if let Some(d) = density {
        if d.len() != exps.len() {
            return Err(err!(Prover, "density has {} bits for {} scalars", d.len(), exps.len()));
        }
    }
    let needed = density.map_or(exps.len(), |d| d.count_ones());
    if bases.len() < skip + needed {
        return Err(err!(Prover, "SRS has {} bases, the witness needs {}", bases.len(), skip + needed));
    }

    // Fixed-size chunks; each knows where its bases start.
    let chunk = (exps.len() / (rayon::current_num_threads() * 8)).max(1 << 14);
    let starts: Vec<(usize, usize)> = {
        let mut base = skip;
        (0..exps.len())
            .step_by(chunk)
            .map(|i| {
                let here = base;
                let end = (i + chunk).min(exps.len());
                base += density.map_or(end - i, |d| d[i..end].count_ones());
                (i, here)
            })
            .collect()
    };

    let parts: Vec<(G::Curve, Vec<(u32, Scalar)>, MsmStats)> = starts
        .par_iter()
        .map(|&(i0, mut j)| {
            let end = (i0 + chunk).min(exps.len());
            let mut ones = Vec::new();
            let mut sig = Vec::new();
            let mut st = MsmStats::default();
            for i in i0..end {
                if let Some(d) = density {
                    if !d[i] {
                        continue;
                    }
                }
                let s = &exps[i];
                if bool::from(s.is_zero()) {
                    st.zeros += 1;
                } else if *s == Scalar::ONE {
                    ones.push(j as u32);
                    st.ones += 1;
                } else {
                    sig.push((j as u32, *s));
                    st.significant += 1;
                }
                j += 1;
            }
            (G::sum(bases, &ones), sig, st)
        })
        .collect();

    let mut total = MsmStats::default();
    let mut ones = G::Curve::identity();
    let mut sig_bases = Vec::new();
    let mut sig_exps = Vec::new();
    for (o, sig, st) in parts {
        ones += o;
        total.zeros += st.zeros;
        total.ones += st.ones;
        total.significant += st.significant;
        sig_bases.extend(sig.iter().map(|(j, _)| bases[*j as usize]));
        sig_exps.extend(sig.into_iter().map(|(_, s)| s));
    }
    let rest = msm_dense(&sig_bases, 0, sig_exps)?;
    Ok((ones + rest, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitvec::vec::BitVec;
    use group::Curve;
    use rand::{Rng, SeedableRng};

    fn naive(bases: &[G1Affine], skip: usize, exps: &[Scalar], density: Option<&BitVec>) -> G1Projective {
        let mut acc = G1Projective::identity();
        let mut j = skip;
        for (i, s) in exps.iter().enumerate() {
            if density.map_or(true, |d| d[i]) {
                acc += bases[j] * s;
                j += 1;
            }
        }
        acc
    }

    #[test]
    fn sparse_matches_naive_on_mixed_scalars() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 40_000;
        let bases: Vec<G1Affine> =
            (0..n + 3).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        let exps: Vec<Scalar> = (0..n)
            .map(|i| match i % 5 {
                0 | 1 => Scalar::ZERO,
                2 | 3 => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect();
        let density: BitVec = (0..n).map(|_| rng.gen_bool(0.7)).collect();
        let (got, st) = msm_sparse(&bases, 3, &exps, Some(&density)).unwrap();
        assert_eq!(got.to_affine(), naive(&bases, 3, &exps, Some(&density)).to_affine());
        assert_eq!(st.zeros + st.ones + st.significant, density.count_ones());
        let (got, _) = msm_sparse(&bases, 0, &exps, None).unwrap();
        assert_eq!(got.to_affine(), naive(&bases, 0, &exps, None).to_affine());
        let dense = msm_dense(&bases, 2, exps.clone()).unwrap();
        assert_eq!(dense.to_affine(), naive(&bases, 2, &exps, None).to_affine());
    }

    #[test]
    fn too_few_bases_is_an_error() {
        let bases = vec![G1Affine::generator(); 2];
        assert!(msm_sparse(&bases, 0, &[Scalar::ONE; 3], None).is_err());
        assert!(msm_dense(&bases, 1, vec![Scalar::ONE; 2]).is_err());
    }
}
