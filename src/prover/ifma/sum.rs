//! Σ bases[i] over a list of indices (the MSMs' scalar-one terms), eight additions per
//! instruction stream: each lane sums every eighth point in XYZZ form, converted from blst's
//! form as it is loaded; the eight lane sums and the tail go through blst. A lane that met an
//! equal or opposite point (ZZ ≡ 0, see [`super::point`]) makes the whole list go through blst.

use blst::{blst_p1, blst_p1_affine};

use super::fp::{self, Limbs};
use super::point::{self, Xyzz8};

fn is_infinity(p: &blst_p1_affine) -> bool {
    p.x.l.iter().chain(p.y.l.iter()).all(|&w| w == 0)
}

/// Σ bases[i] for i in `idx`, with blst's complete formulas.
pub fn blst_sum(bases: &[blst_p1_affine], idx: impl Iterator<Item = u32>) -> blst_p1 {
    let mut acc = blst_p1::default();
    for i in idx {
        // SAFETY: blst point operations on valid points (in place is allowed).
        unsafe { blst::blst_p1_add_or_double_affine(&mut acc, &acc, &bases[i as usize]) };
    }
    acc
}

/// Σ bases[i] for i in `idx` (every index in range). The caller checked [`super::available`].
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn sum(bases: &[blst_p1_affine], idx: &[u32]) -> blst_p1 {
    // Points at infinity add nothing; the lanes never see them.
    let finite: Vec<u32> = idx.iter().copied().filter(|&i| !is_infinity(&bases[i as usize])).collect();
    let groups = finite.len() / 8;
    if groups < 2 {
        return blst_sum(bases, finite.into_iter());
    }
    let k = fp::splat(&fp::FROM_BLST);
    let load = |g: usize| {
        let pts: [&blst_p1_affine; 8] = std::array::from_fn(|l| &bases[finite[8 * g + l] as usize]);
        let x: [Limbs; 8] = std::array::from_fn(|l| fp::to_limbs(&pts[l].x.l));
        let y: [Limbs; 8] = std::array::from_fn(|l| fp::to_limbs(&pts[l].y.l));
        (fp::mul(&fp::from_lanes(&x), &k), fp::mul(&fp::from_lanes(&y), &k))
    };
    let one = fp::splat(&fp::ONE);
    let (x, y) = load(0);
    let mut acc = Xyzz8 { x, y, zz: one, zzz: one };
    for g in 1..groups {
        let (x, y) = load(g);
        acc = point::add_affine(&acc, &x, &y);
    }
    if fp::is_zero_mod_p(&acc.zz) != 0 {
        return blst_sum(bases, finite.into_iter());
    }
    let mut total = blst_sum(bases, finite[8 * groups..].iter().copied());
    for l in 0..8 {
        let p = point::xyzz_to_blst(&point::lane(&acc, l));
        // SAFETY: blst point operations on valid points.
        unsafe { blst::blst_p1_add_or_double(&mut total, &total, &p) };
    }
    total
}
