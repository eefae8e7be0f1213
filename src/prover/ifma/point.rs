//! G1 points eight at a time in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ³ = ZZZ²), the form
//! whose mixed addition costs 8 multiplications and 2 squarings, plus the conversions between
//! blst's points and the 52-bit-limb form of [`super::fp`].
//!
//! The formulas have no branches: an addition of equal or opposite points (P = 0 below) yields
//! ZZ ≡ 0, which every later addition keeps, so callers check ZZ once at the end of a sum and
//! redo the rare sums where it happened with blst (`add_or_double`). Bounds (multiples of p)
//! are noted where a subtraction needs one: X < 8p, Y < 4p, ZZ, ZZZ < 2p on output.

use std::arch::x86_64::*;

use blst::{blst_fp, blst_p1, blst_p1_affine};

use super::fp::{self, Fp8, Limbs, LIMBS};
use super::lanes::Fe;

/// An affine point in the 52-bit Montgomery form (x, y < 2p), one 128-byte row: two cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Row {
    pub x: Limbs,
    pub y: Limbs,
}

/// Eight points in XYZZ coordinates.
#[derive(Clone, Copy)]
pub struct Xyzz8 {
    pub x: Fp8,
    pub y: Fp8,
    pub zz: Fp8,
    pub zzz: Fp8,
}

/// acc + (x2, y2) for affine (x2, y2 < 2p).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn add_affine(acc: &Xyzz8, x2: &Fp8, y2: &Fp8) -> Xyzz8 {
    let u2 = fp::mul(x2, &acc.zz);
    let s2 = fp::mul(y2, &acc.zzz);
    let p = fp::sub::<3>(&u2, &acc.x); // X < 8p
    let r = fp::sub::<2>(&s2, &acc.y); // Y < 4p
    finish(&acc.x, &acc.y, &acc.zz, &acc.zzz, &p, &r, None)
}

/// a + b for XYZZ points (neither at infinity: callers blend those lanes).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn add(a: &Xyzz8, b: &Xyzz8) -> Xyzz8 {
    let u1 = fp::mul(&a.x, &b.zz);
    let u2 = fp::mul(&b.x, &a.zz);
    let s1 = fp::mul(&a.y, &b.zzz);
    let s2 = fp::mul(&b.y, &a.zzz);
    let p = fp::sub::<1>(&u2, &u1);
    let r = fp::sub::<1>(&s2, &s1);
    finish(&u1, &s1, &a.zz, &a.zzz, &p, &r, Some((&b.zz, &b.zzz)))
}

/// The common tail: from U1 (or X1), S1 (or Y1), P = U2 − U1 and R = S2 − S1.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn finish(u1: &Fp8, s1: &Fp8, zz1: &Fp8, zzz1: &Fp8, p: &Fp8, r: &Fp8, b: Option<(&Fp8, &Fp8)>) -> Xyzz8 {
    let pp = fp::sqr(p);
    let ppp = fp::mul(p, &pp);
    let q = fp::mul(u1, &pp);
    let r2 = fp::sqr(r);
    let x3 = fp::sub::<2>(&fp::sub::<1>(&r2, &ppp), &fp::add(&q, &q)); // < 8p
    let y3 = fp::sub::<1>(&fp::mul(r, &fp::sub::<3>(&q, &x3)), &fp::mul(s1, &ppp)); // < 4p
    let (zz3, zzz3) = match b {
        None => (fp::mul(zz1, &pp), fp::mul(zzz1, &ppp)),
        Some((zz2, zzz2)) => (fp::mul(&fp::mul(zz1, zz2), &pp), fp::mul(&fp::mul(zzz1, zzz2), &ppp)),
    };
    Xyzz8 { x: x3, y: y3, zz: zz3, zzz: zzz3 }
}

/// Per lane: `m` selects b, else a.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn select(m: __mmask8, a: &Xyzz8, b: &Xyzz8) -> Xyzz8 {
    Xyzz8 {
        x: fp::select(m, &a.x, &b.x),
        y: fp::select(m, &a.y, &b.y),
        zz: fp::select(m, &a.zz, &b.zz),
        zzz: fp::select(m, &a.zzz, &b.zzz),
    }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn lanes_u32(idx: &[u32; 8]) -> __m512i {
    // SAFETY: 8 u32s are 32 readable bytes.
    _mm512_cvtepu32_epi64(unsafe { _mm256_loadu_si256(idx.as_ptr().cast()) })
}

/// The affine rows at `idx` (row numbers, one per lane) as XYZZ with ZZ = ZZZ = 1, y negated
/// where `neg` is set.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn gather(rows: &[Row], idx: &[u32; 8], neg: __mmask8) -> (Fp8, Fp8) {
    debug_assert!(idx.iter().all(|&i| (i as usize) < rows.len()));
    let base = rows.as_ptr().cast::<i64>();
    let off = _mm512_slli_epi64::<4>(lanes_u32(idx)); // 16 i64s per row
    // SAFETY: every index is a row of `rows` (checked by the callers, asserted above); a row is
    // 16 i64s, x then y.
    let (x, y) = unsafe {
        (
            Fe(std::array::from_fn(|i| _mm512_i64gather_epi64::<8>(_mm512_add_epi64(off, _mm512_set1_epi64(i as i64)), base))),
            Fe(std::array::from_fn(|i| {
                _mm512_i64gather_epi64::<8>(_mm512_add_epi64(off, _mm512_set1_epi64((LIMBS + i) as i64)), base)
            })),
        )
    };
    (x, fp::select(neg, &y, &fp::neg::<1>(&y)))
}

/// Stored XYZZ points (normalized limbs, X, Y, ZZ, ZZZ) at `idx`, one per lane.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn gather_xyzz(points: &[[Limbs; 4]], idx: &[u32; 8]) -> Xyzz8 {
    debug_assert!(idx.iter().all(|&i| (i as usize) < points.len()));
    let base = points.as_ptr().cast::<i64>();
    let off = _mm512_slli_epi64::<5>(lanes_u32(idx)); // 32 i64s per point
    let coord = |c: usize| {
        // SAFETY: every index is an element of `points` (32 i64s each).
        Fe(std::array::from_fn(|i| unsafe {
            _mm512_i64gather_epi64::<8>(_mm512_add_epi64(off, _mm512_set1_epi64((c * LIMBS + i) as i64)), base)
        }))
    };
    Xyzz8 { x: coord(0), y: coord(1), zz: coord(2), zzz: coord(3) }
}

/// Lane `k` of `p` as stored limbs.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn lane(p: &Xyzz8, k: usize) -> [Limbs; 4] {
    [fp::lane(&p.x, k), fp::lane(&p.y, k), fp::lane(&p.zz, k), fp::lane(&p.zzz, k)]
}

/// blst affine points (up to 8) → rows; `None` for the point at infinity.
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn rows_from_blst(points: &[blst_p1_affine], out: &mut [Row]) {
    debug_assert!(points.len() <= 8 && out.len() == points.len());
    let k = fp::splat(&fp::FROM_BLST);
    let x: [Limbs; 8] = std::array::from_fn(|i| points.get(i).map_or([0; LIMBS], |p| fp::to_limbs(&p.x.l)));
    let y: [Limbs; 8] = std::array::from_fn(|i| points.get(i).map_or([0; LIMBS], |p| fp::to_limbs(&p.y.l)));
    let (x, y) = (fp::mul(&fp::from_lanes(&x), &k), fp::mul(&fp::from_lanes(&y), &k));
    for (i, row) in out.iter_mut().enumerate() {
        *row = Row { x: fp::lane(&x, i), y: fp::lane(&y, i) };
    }
}

/// Our form (below 2^398) → blst's Montgomery form, canonical, for up to 8 values.
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn to_blst_fp(v: &[Limbs]) -> Vec<blst_fp> {
    debug_assert!(v.len() <= 8);
    let lanes: [Limbs; 8] = std::array::from_fn(|i| v.get(i).copied().unwrap_or([0; LIMBS]));
    let m = fp::mul(&fp::from_lanes(&lanes), &fp::splat(&fp::TO_BLST));
    (0..v.len()).map(|i| blst_fp { l: fp::canonical(&fp::lane(&m, i)) }).collect()
}

/// blst Montgomery values → our form, for up to 8 values.
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn from_blst_fp(v: &[blst_fp]) -> Vec<Limbs> {
    debug_assert!(v.len() <= 8);
    let lanes: [Limbs; 8] = std::array::from_fn(|i| v.get(i).map_or([0; LIMBS], |f| fp::to_limbs(&f.l)));
    let m = fp::mul(&fp::from_lanes(&lanes), &fp::splat(&fp::FROM_BLST));
    (0..v.len()).map(|i| fp::lane(&m, i)).collect()
}

/// A stored XYZZ point → blst Jacobian: (X·ZZ², Y·ZZZ², ZZZ), since ZZZ² = ZZ³.
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn xyzz_to_blst(p: &[Limbs; 4]) -> blst_p1 {
    let f = to_blst_fp(p);
    let (mut zz2, mut zzz2, mut x, mut y) = (blst_fp::default(), blst_fp::default(), blst_fp::default(), blst_fp::default());
    // SAFETY: blst field operations on valid, distinct locals.
    unsafe {
        blst::blst_fp_sqr(&mut zz2, &f[2]);
        blst::blst_fp_sqr(&mut zzz2, &f[3]);
        blst::blst_fp_mul(&mut x, &f[0], &zz2);
        blst::blst_fp_mul(&mut y, &f[1], &zzz2);
    }
    blst_p1 { x, y, z: f[3] }
}

/// A blst Jacobian point (not at infinity) → stored XYZZ (X, Y, Z², Z³).
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn xyzz_from_blst(p: &blst_p1) -> [Limbs; 4] {
    let (mut zz, mut zzz) = (blst_fp::default(), blst_fp::default());
    // SAFETY: as above.
    unsafe {
        blst::blst_fp_sqr(&mut zz, &p.z);
        blst::blst_fp_mul(&mut zzz, &zz, &p.z);
    }
    let v = from_blst_fp(&[p.x, p.y, zz, zzz]);
    [v[0], v[1], v[2], v[3]]
}
