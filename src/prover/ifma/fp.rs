//! BLS12-381's base field on [`super::lanes`]: 8 limbs of 52 bits (R = 2^416), so inputs
//! below 2^398 multiply to below 2p (see there for the lazy-reduction rules).

use super::lanes::{self, Fe, Modulus};

pub const LIMBS: usize = 8;
pub type Fp8 = Fe<LIMBS>;
pub type Limbs = [u64; LIMBS];

/// The modulus, little-endian 64-bit words.
pub const P64: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];
pub const FP: Modulus<LIMBS> = Modulus::new(&P64);
/// 1 in Montgomery form (2^416 mod p).
pub const ONE: Limbs = FP.pow2(416);
/// blst's Montgomery form (x·2^384) times this, Montgomery-multiplied, gives ours (x·2^416).
pub const FROM_BLST: Limbs = FP.pow2(448);
/// Ours times this, Montgomery-multiplied, gives blst's form (below 2p: reduce once).
pub const TO_BLST: Limbs = FP.pow2(384);

pub use lanes::{available, from_lanes, lane, select, splat, to_limbs, zero};

#[inline]
#[target_feature(enable = "avx512f")]
pub fn add(a: &Fp8, b: &Fp8) -> Fp8 {
    lanes::add(a, b)
}

/// a + 2^k·p − b (2^k·p ≥ b's bound).
#[inline]
#[target_feature(enable = "avx512f")]
pub fn sub<const K: usize>(a: &Fp8, b: &Fp8) -> Fp8 {
    lanes::sub::<LIMBS, K>(&FP, a, b)
}

/// 2^k·p − a (a's bound ≤ 2^k·p): the negation used for signed digits.
#[inline]
#[target_feature(enable = "avx512f")]
pub fn neg<const K: usize>(a: &Fp8) -> Fp8 {
    lanes::neg::<LIMBS, K>(&FP, a)
}

/// Montgomery product (inputs below 2^398; result below 2p).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn mul(a: &Fp8, b: &Fp8) -> Fp8 {
    lanes::mul(&FP, a, b)
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn sqr(a: &Fp8) -> Fp8 {
    lanes::mul(&FP, a, a)
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn is_zero_mod_p(a: &Fp8) -> std::arch::x86_64::__mmask8 {
    lanes::is_zero_mod_p(&FP, a)
}

/// The canonical value (little-endian 64-bit words) of lane limbs below 2p.
pub fn canonical(l: &Limbs) -> [u64; 6] {
    let w = lanes::canonical(&FP, l);
    [w[0], w[1], w[2], w[3], w[4], w[5]]
}
