//! Eight BLS12-381 base-field elements at once, one per 64-bit lane of an AVX-512 register
//! set: each element is 8 limbs of 52 bits (416 bits) in Montgomery form with R = 2^416, and
//! limb i of all eight elements lives in register i. Products use the IFMA instructions
//! (52×52-bit multiply-add), which Zen 4/5 and Ice Lake+ run several times per cycle — the
//! reason this exists: blst's scalar `mulx` code does one 64-bit product per cycle.
//!
//! Reduction is lazy. A Montgomery product of inputs below 2^398 is below 2p (R is 2^35
//! times larger than p), so results are never conditionally subtracted; a subtraction adds a
//! multiple of p at least as large as the subtrahend's bound, which callers state. Every value
//! handed to [`mul`] must be normalized (limbs < 2^52) and below 2^398; every function here
//! returns normalized limbs.

use std::arch::x86_64::*;

pub const LIMBS: usize = 8;
const MASK52: u64 = (1 << 52) - 1;

/// The modulus, little-endian 64-bit words.
pub const P64: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];

/// Eight field elements (see the module head).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Fp8(pub [__m512i; LIMBS]);

/// A 416-bit integer as eight 52-bit limbs (a constant, broadcast to every lane on use).
pub type Limbs = [u64; LIMBS];

/// Little-endian 64-bit words → 52-bit limbs (the value must be below 2^416).
pub const fn to_limbs(w: &[u64]) -> Limbs {
    let mut out = [0u64; LIMBS];
    let mut i = 0;
    while i < LIMBS {
        let bit = 52 * i;
        let (word, shift) = (bit / 64, bit % 64);
        let mut v = if word < w.len() { w[word] >> shift } else { 0 };
        if shift > 12 && word + 1 < w.len() {
            v |= w[word + 1] << (64 - shift);
        }
        out[i] = v & MASK52;
        i += 1;
    }
    out
}

/// 52-bit limbs → little-endian 64-bit words (7 words: values below 2^448).
pub const fn from_limbs(l: &Limbs) -> [u64; 7] {
    let mut out = [0u64; 7];
    let mut i = 0;
    while i < LIMBS {
        let bit = 52 * i;
        let (word, shift) = (bit / 64, bit % 64);
        out[word] |= l[i] << shift;
        if shift > 12 && word + 1 < 7 {
            out[word + 1] |= l[i] >> (64 - shift);
        }
        i += 1;
    }
    out
}

const fn ge(a: &[u64; 7], b: &[u64; 7]) -> bool {
    let mut i = 7;
    while i > 0 {
        i -= 1;
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

const fn sub7(a: &[u64; 7], b: &[u64; 7]) -> [u64; 7] {
    let mut out = [0u64; 7];
    let mut borrow = 0u64;
    let mut i = 0;
    while i < 7 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(borrow);
        out[i] = d;
        borrow = (b1 | b2) as u64;
        i += 1;
    }
    out
}

const fn p7() -> [u64; 7] {
    [P64[0], P64[1], P64[2], P64[3], P64[4], P64[5], 0]
}

/// 2^k mod p (k small), by doubling.
const fn pow2_mod_p(k: u32) -> [u64; 7] {
    let p = p7();
    let mut v = [1u64, 0, 0, 0, 0, 0, 0];
    let mut n = 0;
    while n < k {
        let mut carry = 0u64;
        let mut i = 0;
        while i < 7 {
            let nv = (v[i] << 1) | carry;
            carry = v[i] >> 63;
            v[i] = nv;
            i += 1;
        }
        if ge(&v, &p) {
            v = sub7(&v, &p);
        }
        n += 1;
    }
    v
}

/// 2^k · p (k ≤ 34) as normalized limbs.
const fn p_times_pow2(k: u32) -> Limbs {
    let mut v = p7();
    let mut n = 0;
    while n < k {
        let mut carry = 0u64;
        let mut i = 0;
        while i < 7 {
            let nv = (v[i] << 1) | carry;
            carry = v[i] >> 63;
            v[i] = nv;
            i += 1;
        }
        n += 1;
    }
    to_limbs(&v)
}

/// −p⁻¹ mod 2^52 (Newton's iteration on the inverse mod 2^64).
const fn n0() -> u64 {
    let p0 = P64[0];
    let mut inv = 1u64;
    let mut i = 0;
    while i < 7 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(p0.wrapping_mul(inv)));
        i += 1;
    }
    inv.wrapping_neg() & MASK52
}

pub const P: Limbs = to_limbs(&P64);
pub const N0: u64 = n0();
/// 2^k · p for the lazy subtractions: index k.
pub const P_SHL: [Limbs; 12] = {
    let mut t = [[0u64; LIMBS]; 12];
    let mut k = 0;
    while k < 12 {
        t[k] = p_times_pow2(k as u32);
        k += 1;
    }
    t
};
/// 1 in Montgomery form (2^416 mod p).
pub const ONE: Limbs = to_limbs(&pow2_mod_p(416));
/// blst's Montgomery form (x·2^384) times this, Montgomery-multiplied, gives ours (x·2^416).
pub const FROM_BLST: Limbs = to_limbs(&pow2_mod_p(448));
/// Ours times this, Montgomery-multiplied, gives blst's form (below 2p: subtract p once).
pub const TO_BLST: Limbs = to_limbs(&pow2_mod_p(384));

#[inline]
#[target_feature(enable = "avx512f")]
pub fn splat(c: &Limbs) -> Fp8 {
    Fp8(std::array::from_fn(|i| _mm512_set1_epi64(c[i] as i64)))
}

#[inline]
#[target_feature(enable = "avx512f")]
pub fn zero() -> Fp8 {
    Fp8([_mm512_setzero_si512(); LIMBS])
}

/// Carry-propagates 8 limbs holding non-negative 64-bit values (top limb absorbs the rest).
#[inline]
#[target_feature(enable = "avx512f")]
fn normalize(mut t: [__m512i; LIMBS]) -> Fp8 {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    for i in 0..LIMBS - 1 {
        let c = _mm512_srli_epi64::<52>(t[i]);
        t[i] = _mm512_and_si512(t[i], mask);
        t[i + 1] = _mm512_add_epi64(t[i + 1], c);
    }
    Fp8(t)
}

/// As [`normalize`] for limbs that may be negative (the total is not).
#[inline]
#[target_feature(enable = "avx512f")]
fn normalize_signed(mut t: [__m512i; LIMBS]) -> Fp8 {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    for i in 0..LIMBS - 1 {
        let c = _mm512_srai_epi64::<52>(t[i]);
        t[i] = _mm512_and_si512(t[i], mask);
        t[i + 1] = _mm512_add_epi64(t[i + 1], c);
    }
    Fp8(t)
}

/// a + b (bounds add up).
#[inline]
#[target_feature(enable = "avx512f")]
pub fn add(a: &Fp8, b: &Fp8) -> Fp8 {
    normalize(std::array::from_fn(|i| _mm512_add_epi64(a.0[i], b.0[i])))
}

/// a + 2^k·p − b: callers pick k with 2^k·p ≥ b's bound.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn sub<const K: usize>(a: &Fp8, b: &Fp8) -> Fp8 {
    let kp = &P_SHL[K];
    normalize_signed(std::array::from_fn(|i| {
        _mm512_sub_epi64(_mm512_add_epi64(a.0[i], _mm512_set1_epi64(kp[i] as i64)), b.0[i])
    }))
}

/// 2^k·p − a (a's bound ≤ 2^k·p): the negation used for signed digits.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn neg<const K: usize>(a: &Fp8) -> Fp8 {
    let kp = &P_SHL[K];
    normalize_signed(std::array::from_fn(|i| _mm512_sub_epi64(_mm512_set1_epi64(kp[i] as i64), a.0[i])))
}

/// Per lane: `m` selects b, else a.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn select(m: __mmask8, a: &Fp8, b: &Fp8) -> Fp8 {
    Fp8(std::array::from_fn(|i| _mm512_mask_blend_epi64(m, a.0[i], b.0[i])))
}

/// Montgomery product a·b·2^−416 (inputs normalized, below 2^398; result below 2p).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn mul(a: &Fp8, b: &Fp8) -> Fp8 {
    let z = _mm512_setzero_si512();
    let n0 = _mm512_set1_epi64(N0 as i64);
    let p: [__m512i; LIMBS] = std::array::from_fn(|j| _mm512_set1_epi64(P[j] as i64));
    let a = &a.0;
    // t[i..i + 9] accumulates row i; the rows' low limbs are cleared one by one (Montgomery).
    let mut t = [z; 2 * LIMBS];
    macro_rules! row {
        ($i:expr) => {{
            let bi = b.0[$i];
            for j in 0..LIMBS {
                t[$i + j] = _mm512_madd52lo_epu64(t[$i + j], a[j], bi);
            }
            for j in 0..LIMBS {
                t[$i + j + 1] = _mm512_madd52hi_epu64(t[$i + j + 1], a[j], bi);
            }
            let m = _mm512_madd52lo_epu64(z, t[$i], n0);
            for j in 0..LIMBS {
                t[$i + j] = _mm512_madd52lo_epu64(t[$i + j], m, p[j]);
            }
            for j in 0..LIMBS {
                t[$i + j + 1] = _mm512_madd52hi_epu64(t[$i + j + 1], m, p[j]);
            }
            // t[i] is now a multiple of 2^52: keep only its carry.
            t[$i + 1] = _mm512_add_epi64(t[$i + 1], _mm512_srli_epi64::<52>(t[$i]));
        }};
    }
    row!(0);
    row!(1);
    row!(2);
    row!(3);
    row!(4);
    row!(5);
    row!(6);
    row!(7);
    normalize(std::array::from_fn(|j| t[LIMBS + j]))
}

/// a² (as [`mul`]).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn sqr(a: &Fp8) -> Fp8 {
    mul(a, a)
}

/// Per lane: is the value ≡ 0 (mod p)? (Any normalized value below 2^398.)
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn is_zero_mod_p(a: &Fp8) -> __mmask8 {
    // a·1·2^−416 is below p + 1, so it is ≡ 0 exactly when it is 0 or p.
    let mut one = [0u64; LIMBS];
    one[0] = 1;
    let r = mul(a, &splat(&one));
    let mut is0: __mmask8 = 0xff;
    let mut isp: __mmask8 = 0xff;
    for i in 0..LIMBS {
        is0 &= _mm512_cmpeq_epi64_mask(r.0[i], _mm512_setzero_si512());
        isp &= _mm512_cmpeq_epi64_mask(r.0[i], _mm512_set1_epi64(P[i] as i64));
    }
    is0 | isp
}

/// Lane `lane` as normalized limbs.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn lane(a: &Fp8, lane: usize) -> Limbs {
    let mut out = [0u64; LIMBS];
    for i in 0..LIMBS {
        let mut v = [0u64; 8];
        // SAFETY: v is 64 bytes, the register 64 bytes (unaligned store).
        unsafe { _mm512_storeu_si512(v.as_mut_ptr().cast(), a.0[i]) };
        out[i] = v[lane];
    }
    out
}

/// Eight elements from limb arrays (one per lane).
#[inline]
#[target_feature(enable = "avx512f")]
pub fn from_lanes(l: &[Limbs; 8]) -> Fp8 {
    Fp8(std::array::from_fn(|i| {
        _mm512_set_epi64(
            l[7][i] as i64,
            l[6][i] as i64,
            l[5][i] as i64,
            l[4][i] as i64,
            l[3][i] as i64,
            l[2][i] as i64,
            l[1][i] as i64,
            l[0][i] as i64,
        )
    }))
}

/// A canonical (below p) little-endian value from a lane value below 2p.
pub fn canonical(l: &Limbs) -> [u64; 6] {
    let mut v = from_limbs(l);
    let p = p7();
    if ge(&v, &p) {
        v = sub7(&v, &p);
    }
    [v[0], v[1], v[2], v[3], v[4], v[5]]
}

/// True when this CPU runs the AVX-512 IFMA code.
pub fn available() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma")
}

