//! The CPU prover's hot loops on AVX-512 IFMA — the big G1 MSMs (ΣH) and the H polynomial's
//! NTTs — eight field elements per instruction stream instead of blst's one, where the CPU has
//! the 52-bit multiply-add (Zen 4/5, Ice Lake and later). Elsewhere, and for small inputs,
//! blst's Pippenger and the scalar NTTs run as before; both give the same values.

#[cfg(target_arch = "x86_64")]
mod fp;
#[cfg(target_arch = "x86_64")]
mod fr;
#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(target_arch = "x86_64")]
mod ntt;
#[cfg(target_arch = "x86_64")]
mod pippenger;
#[cfg(target_arch = "x86_64")]
mod point;
#[cfg(target_arch = "x86_64")]
mod sum;

use blstrs::{G1Affine, G1Projective};

#[cfg(target_arch = "x86_64")]
pub(crate) use ntt::{h_coefficients, Tables as NttTables};

/// Below this many points blst's Pippenger is as fast (the table conversion and per-window
/// sorting do not pay off).
pub const MIN_POINTS: usize = 1 << 12;

/// Window width for n points: ⌈log2 n⌉ − 6, within 8..=16 (2^15 buckets of 256 bytes per
/// window in flight). Measured on Zen 5 at 2^20 and 2^22: BENCHMARKS.md.
pub fn window_bits(n: usize) -> usize {
    let lg = usize::BITS as usize - n.saturating_sub(1).leading_zeros() as usize;
    lg.saturating_sub(6).clamp(8, 16)
}

/// True when this CPU runs the IFMA code (checked once).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVAILABLE.get_or_init(fp::available)
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Σ scalars[i]·bases[i] (scalars 32-byte little-endian canonical field elements) on the IFMA
/// code with window width `c` (None: by size); None when this CPU lacks it.
pub fn msm_g1(bases: &[G1Affine], scalars: &[u8], c: Option<usize>) -> Option<G1Projective> {
    if !available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, G1Projective over blst_p1.
        let raw: &[blst::blst_p1_affine] = unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) };
        let c = c.unwrap_or_else(|| window_bits(bases.len()));
        let out = pippenger::msm(raw, scalars, c);
        Some(unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(out) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Σ bases[i] for i in `idx` (indices in range) on the IFMA code; None when this CPU lacks it.
pub fn sum_g1(bases: &[G1Affine], idx: &[u32]) -> Option<G1Projective> {
    if !available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        assert!(idx.iter().all(|&i| (i as usize) < bases.len()), "indices in range");
        // SAFETY: as in `msm_g1`; the caller checked `available`.
        let raw: &[blst::blst_p1_affine] = unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) };
        let out = unsafe { sum::sum(raw, idx) };
        Some(unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(out) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar;
    use ff::Field;
    use group::{prime::PrimeCurveAffine, Curve, Group};
    use rand::{Rng, SeedableRng};

    fn points(n: usize, rng: &mut impl rand::RngCore) -> Vec<G1Affine> {
        // Random points cheaply: P, P + Q, P + 2Q, …
        let (mut p, q) = (G1Projective::random(&mut *rng), G1Projective::random(&mut *rng));
        let proj: Vec<G1Projective> = (0..n)
            .map(|_| {
                p += q;
                p
            })
            .collect();
        let mut out = vec![G1Affine::identity(); n];
        G1Projective::batch_normalize(&proj, &mut out);
        out
    }

    fn bytes(scalars: &[Scalar]) -> Vec<u8> {
        scalars.iter().flat_map(|s| s.to_bytes_le()).collect()
    }

    fn check(bases: &[G1Affine], scalars: &[u8], what: &str) {
        let want = crate::prover::msm::blst_g1(bases, scalars).to_affine();
        for c in [8, 11, 13, 16] {
            let got = msm_g1(bases, scalars, Some(c)).expect("available").to_affine();
            assert_eq!(got, want, "{what}, window {c}");
        }
    }

    #[test]
    fn equals_blst_on_random_and_adversarial_inputs() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512 IFMA (the code path is not used here)");
            return;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let pts = points(6000, &mut rng);

        // Random full-width scalars, several sizes.
        for n in [1usize, 7, 100, 6000] {
            let s: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            check(&pts[..n], &bytes(&s), &format!("random n={n}"));
        }
        // Small and structured scalars: 0, 1, −1, powers of two, digits at the sign boundary.
        let mut s: Vec<Scalar> = (0..6000u64)
            .map(|i| match i % 7 {
                0 => Scalar::ZERO,
                1 => Scalar::ONE,
                2 => -Scalar::ONE,
                3 => Scalar::from(1u64 << (i % 64)),
                4 => Scalar::from(0x7f7f_7f80_8080_8000u64 ^ i),
                5 => Scalar::from(rng.gen::<u64>()),
                _ => Scalar::random(&mut rng),
            })
            .collect();
        check(&pts, &bytes(&s), "structured");

        // Equal and opposite bases under equal scalars: buckets that must double or cancel,
        // and a base at infinity.
        let mut bases = pts.clone();
        let same = Scalar::random(&mut rng);
        for i in 0..64 {
            bases[2 * i + 1] = if i % 2 == 0 { bases[2 * i] } else { (-G1Projective::from(bases[2 * i])).to_affine() };
            s[2 * i] = same;
            s[2 * i + 1] = same;
        }
        bases[200] = G1Affine::identity();
        check(&bases, &bytes(&s), "equal and opposite bases");

        // Every base equal: every bucket doubles; pairs that cancel to infinity.
        let p = vec![pts[0]; 5000];
        let s1 = vec![same; 5000];
        check(&p, &bytes(&s1), "all equal");
        let mut pairs = pts[..2048].to_vec();
        let neg: Vec<G1Affine> = pairs.iter().map(|b| (-G1Projective::from(*b)).to_affine()).collect();
        pairs.extend(neg);
        let half: Vec<Scalar> = (0..2048).map(|_| Scalar::random(&mut rng)).collect();
        let s2: Vec<Scalar> = half.iter().chain(half.iter()).copied().collect();
        let sum = msm_g1(&pairs, &bytes(&s2), Some(10)).unwrap();
        assert!(bool::from(sum.is_identity()), "pairs that cancel sum to the identity");
    }

    #[test]
    fn sum_equals_blst_with_equal_opposite_and_infinite_points() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX-512 IFMA");
            return;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let pts = points(3000, &mut rng);
        let naive = |b: &[G1Affine], idx: &[u32]| idx.iter().fold(G1Projective::identity(), |a, &i| a + b[i as usize]);
        for n in [0usize, 1, 9, 15, 16, 17, 100, 2999] {
            let idx: Vec<u32> = (0..n as u32).map(|i| (i * 7) % 3000).collect();
            assert_eq!(sum_g1(&pts, &idx).unwrap().to_affine(), naive(&pts, &idx).to_affine(), "n={n}");
        }
        // A point twice in one lane (indices 8 apart), a point and its negation, infinity.
        let mut b = pts.clone();
        b[40] = b[32];
        b[48] = (-G1Projective::from(b[56])).to_affine();
        b[64] = G1Affine::identity();
        let idx: Vec<u32> = (0..200).collect();
        assert_eq!(sum_g1(&b, &idx).unwrap().to_affine(), naive(&b, &idx).to_affine(), "degenerate lanes");
        let all_same = vec![pts[5]; 100];
        let idx: Vec<u32> = (0..100).collect();
        assert_eq!(sum_g1(&all_same, &idx).unwrap().to_affine(), naive(&all_same, &idx).to_affine(), "all equal");
    }

    #[test]
    fn window_bits_grow_with_size() {
        assert_eq!(window_bits(1), 8);
        assert_eq!(window_bits(1 << 20), 14);
        assert_eq!(window_bits((1 << 22) - 1), 16);
        assert_eq!(window_bits(1 << 27), 16);
    }
}
