//! Eight field elements at once, one per 64-bit lane of an AVX-512 register set: an element
//! of an N-limb field is N limbs of 52 bits in Montgomery form with R = 2^(52·N), and limb i
//! of all eight elements lives in register i. Products use the IFMA instructions (52×52-bit
//! multiply-add), which Zen 4/5 and Ice Lake+ run several per cycle — the reason this exists:
//! blst's scalar `mulx` code does one 64-bit product per cycle.
//!
//! Reduction is lazy. When a·b < p·R, the Montgomery product is below 2p, so results are never
//! conditionally subtracted (for BLS12-381's Fp, R = 2^416 is 2^35 times p: any inputs below
//! 2^398 qualify); a subtraction adds a multiple of p at least as large as the subtrahend's
//! bound, which callers state. Every value handed to [`mul`] must be normalized (limbs < 2^52);
//! every function here returns normalized limbs.

use std::arch::x86_64::*;

const MASK52: u64 = (1 << 52) - 1;
/// Limbs of the largest field (the accumulator of a product has twice as many).
const MAX_LIMBS: usize = 8;

/// Eight elements of an N-limb field.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Fe<const N: usize>(pub [__m512i; N]);

/// An odd modulus below 2^(52·N − 3) and what the arithmetic needs of it.
pub struct Modulus<const N: usize> {
    /// p as 52-bit limbs.
    pub p: [u64; N],
    /// −p⁻¹ mod 2^52.
    pub n0: u64,
    /// 2^k · p for the lazy subtractions, index k.
    pub p_shl: [[u64; N]; 12],
}

/// Little-endian 64-bit words → N 52-bit limbs (the value must fit).
pub const fn to_limbs<const N: usize>(w: &[u64]) -> [u64; N] {
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
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

/// N 52-bit limbs → little-endian 64-bit words (8 words, enough for N ≤ 8 with carries).
pub const fn from_limbs<const N: usize>(l: &[u64; N]) -> [u64; 8] {
    let mut out = [0u64; 8];
    let mut i = 0;
    while i < N {
        let bit = 52 * i;
        let (word, shift) = (bit / 64, bit % 64);
        out[word] |= l[i] << shift;
        if shift > 12 && word + 1 < 8 {
            out[word + 1] |= l[i] >> (64 - shift);
        }
        i += 1;
    }
    out
}

/// Little-endian word helpers for the constants (8 words wide).
pub mod words {
    pub type W = [u64; 8];

    pub const fn from(w: &[u64]) -> W {
        let mut out = [0u64; 8];
        let mut i = 0;
        while i < w.len() {
            out[i] = w[i];
            i += 1;
        }
        out
    }

    pub const fn ge(a: &W, b: &W) -> bool {
        let mut i = 8;
        while i > 0 {
            i -= 1;
            if a[i] != b[i] {
                return a[i] > b[i];
            }
        }
        true
    }

    pub const fn sub(a: &W, b: &W) -> W {
        let mut out = [0u64; 8];
        let mut borrow = 0u64;
        let mut i = 0;
        while i < 8 {
            let (d, b1) = a[i].overflowing_sub(b[i]);
            let (d, b2) = d.overflowing_sub(borrow);
            out[i] = d;
            borrow = (b1 | b2) as u64;
            i += 1;
        }
        out
    }

    pub const fn shl1(a: &W) -> W {
        let mut out = [0u64; 8];
        let mut carry = 0u64;
        let mut i = 0;
        while i < 8 {
            out[i] = (a[i] << 1) | carry;
            carry = a[i] >> 63;
            i += 1;
        }
        out
    }

    /// 2^k mod p.
    pub const fn pow2_mod(k: u32, p: &W) -> W {
        let mut v = [0u64; 8];
        v[0] = 1;
        let mut n = 0;
        while n < k {
            v = shl1(&v);
            if ge(&v, p) {
                v = sub(&v, p);
            }
            n += 1;
        }
        v
    }

    /// v mod p for v below 2p.
    pub const fn reduce_once(v: &W, p: &W) -> W {
        if ge(v, p) {
            sub(v, p)
        } else {
            *v
        }
    }
}

impl<const N: usize> Modulus<N> {
    /// The constants of modulus `p` (little-endian 64-bit words).
    pub const fn new(p: &[u64]) -> Self {
        let mut p_shl = [[0u64; N]; 12];
        let mut v = words::from(p);
        let mut k = 0;
        while k < 12 {
            p_shl[k] = to_limbs::<N>(&v);
            v = words::shl1(&v);
            k += 1;
        }
        // −p⁻¹ mod 2^64 by Newton's iteration, then mod 2^52.
        let mut inv = 1u64;
        let mut i = 0;
        while i < 7 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(p[0].wrapping_mul(inv)));
            i += 1;
        }
        Modulus { p: to_limbs::<N>(p), n0: inv.wrapping_neg() & MASK52, p_shl }
    }

    /// 2^k mod p as limbs (e.g. Montgomery's R, or conversion factors).
    pub const fn pow2(&self, k: u32) -> [u64; N] {
        to_limbs::<N>(&words::pow2_mod(k, &words::from(&from_limbs(&self.p))))
    }
}

#[inline]
#[target_feature(enable = "avx512f")]
pub fn splat<const N: usize>(c: &[u64; N]) -> Fe<N> {
    Fe(std::array::from_fn(|i| _mm512_set1_epi64(c[i] as i64)))
}

#[inline]
#[target_feature(enable = "avx512f")]
pub fn zero<const N: usize>() -> Fe<N> {
    Fe([_mm512_setzero_si512(); N])
}

/// Carry-propagates limbs (the top limb absorbs the rest): non-negative 64-bit values, or with
/// `SIGNED` limbs that may be negative (arithmetic shifts; the top limb keeps the sign).
#[inline]
#[target_feature(enable = "avx512f")]
fn carry<const N: usize, const SIGNED: bool>(mut t: [__m512i; N]) -> Fe<N> {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    for i in 0..N - 1 {
        let c = if SIGNED { _mm512_srai_epi64::<52>(t[i]) } else { _mm512_srli_epi64::<52>(t[i]) };
        t[i] = _mm512_and_si512(t[i], mask);
        t[i + 1] = _mm512_add_epi64(t[i + 1], c);
    }
    Fe(t)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn normalize<const N: usize>(t: [__m512i; N]) -> Fe<N> {
    carry::<N, false>(t)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn normalize_signed<const N: usize>(t: [__m512i; N]) -> Fe<N> {
    carry::<N, true>(t)
}

/// a + b (bounds add up).
#[inline]
#[target_feature(enable = "avx512f")]
pub fn add<const N: usize>(a: &Fe<N>, b: &Fe<N>) -> Fe<N> {
    normalize(std::array::from_fn(|i| _mm512_add_epi64(a.0[i], b.0[i])))
}

/// a + 2^k·p − b: callers pick k with 2^k·p ≥ b's bound.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn sub<const N: usize, const K: usize>(m: &Modulus<N>, a: &Fe<N>, b: &Fe<N>) -> Fe<N> {
    let kp = &m.p_shl[K];
    normalize_signed(std::array::from_fn(|i| {
        _mm512_sub_epi64(_mm512_add_epi64(a.0[i], _mm512_set1_epi64(kp[i] as i64)), b.0[i])
    }))
}

/// 2^k·p − a (a's bound ≤ 2^k·p).
#[inline]
#[target_feature(enable = "avx512f")]
pub fn neg<const N: usize, const K: usize>(m: &Modulus<N>, a: &Fe<N>) -> Fe<N> {
    let kp = &m.p_shl[K];
    normalize_signed(std::array::from_fn(|i| _mm512_sub_epi64(_mm512_set1_epi64(kp[i] as i64), a.0[i])))
}

/// a − 2^k·p where that is not negative, else a: brings a below 2^k·p when it was below 2^(k+1)·p.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn reduce_below<const N: usize, const K: usize>(m: &Modulus<N>, a: &Fe<N>) -> Fe<N> {
    let kp = &m.p_shl[K];
    let d = normalize_signed(std::array::from_fn(|i| _mm512_sub_epi64(a.0[i], _mm512_set1_epi64(kp[i] as i64))));
    let negative = _mm512_cmplt_epi64_mask(d.0[N - 1], _mm512_setzero_si512());
    select(negative, &d, a)
}

/// Per lane: `m` selects b, else a.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn select<const N: usize>(m: __mmask8, a: &Fe<N>, b: &Fe<N>) -> Fe<N> {
    Fe(std::array::from_fn(|i| _mm512_mask_blend_epi64(m, a.0[i], b.0[i])))
}

/// Montgomery product a·b·R⁻¹ (inputs normalized with a·b < p·R; result below 2p).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn mul<const N: usize>(m: &Modulus<N>, a: &Fe<N>, b: &Fe<N>) -> Fe<N> {
    let z = _mm512_setzero_si512();
    let n0 = _mm512_set1_epi64(m.n0 as i64);
    let p: [__m512i; N] = std::array::from_fn(|j| _mm512_set1_epi64(m.p[j] as i64));
    let a = &a.0;
    // t[i..i + N + 1] accumulates row i; the rows' low limbs are cleared one by one.
    let mut t = [z; 2 * MAX_LIMBS];
    // Rows are unrolled by hand (constant row numbers keep t in registers; LLVM does not
    // unroll the outer loop by itself).
    macro_rules! row {
        ($i:literal) => {
            if $i < N {
                let bi = b.0[$i];
                for j in 0..N {
                    t[$i + j] = _mm512_madd52lo_epu64(t[$i + j], a[j], bi);
                }
                for j in 0..N {
                    t[$i + j + 1] = _mm512_madd52hi_epu64(t[$i + j + 1], a[j], bi);
                }
                let q = _mm512_madd52lo_epu64(z, t[$i], n0);
                for j in 0..N {
                    t[$i + j] = _mm512_madd52lo_epu64(t[$i + j], q, p[j]);
                }
                for j in 0..N {
                    t[$i + j + 1] = _mm512_madd52hi_epu64(t[$i + j + 1], q, p[j]);
                }
                // t[i] is now a multiple of 2^52: keep only its carry.
                t[$i + 1] = _mm512_add_epi64(t[$i + 1], _mm512_srli_epi64::<52>(t[$i]));
            }
        };
    }
    const { assert!(N <= MAX_LIMBS) };
    row!(0);
    row!(1);
    row!(2);
    row!(3);
    row!(4);
    row!(5);
    row!(6);
    row!(7);
    normalize(std::array::from_fn(|j| t[N + j]))
}

/// Per lane: is the value ≡ 0 (mod p)? (Any normalized value below p·R.)
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn is_zero_mod_p<const N: usize>(m: &Modulus<N>, a: &Fe<N>) -> __mmask8 {
    // a·1·R⁻¹ is below p + 1, so it is ≡ 0 exactly when it is 0 or p.
    let mut one = [0u64; N];
    one[0] = 1;
    let r = mul(m, a, &splat(&one));
    let mut is0: __mmask8 = 0xff;
    let mut isp: __mmask8 = 0xff;
    for i in 0..N {
        is0 &= _mm512_cmpeq_epi64_mask(r.0[i], _mm512_setzero_si512());
        isp &= _mm512_cmpeq_epi64_mask(r.0[i], _mm512_set1_epi64(m.p[i] as i64));
    }
    is0 | isp
}

/// Lane `lane` as limbs.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn lane<const N: usize>(a: &Fe<N>, lane: usize) -> [u64; N] {
    let mut out = [0u64; N];
    for i in 0..N {
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
pub fn from_lanes<const N: usize>(l: &[[u64; N]; 8]) -> Fe<N> {
    Fe(std::array::from_fn(|i| {
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

/// A canonical (below p) value from lane limbs below 2p, as little-endian words.
pub fn canonical<const N: usize>(m: &Modulus<N>, l: &[u64; N]) -> [u64; 8] {
    words::reduce_once(&from_limbs(l), &from_limbs(&m.p))
}

/// True when this CPU runs the AVX-512 IFMA code.
pub fn available() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma")
}
