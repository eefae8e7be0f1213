//! BLS12-381's scalar field on [`super::lanes`]: 5 limbs of 52 bits (R = 2^260). A product is
//! below 2r when a·b < r·2^260, e.g. data below 4r times a constant below r, or two values
//! below 2r (the NTT's bounds, see [`super::ntt`]).

use super::lanes::{Fe, Modulus};

pub const LIMBS: usize = 5;
pub type Fr8 = Fe<LIMBS>;
pub type Limbs = [u64; LIMBS];

/// The modulus r, little-endian 64-bit words.
pub const R64: [u64; 4] = [0xffff_ffff_0000_0001, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];
pub const FR: Modulus<LIMBS> = Modulus::new(&R64);
/// blst's (blstrs') Montgomery form x·2^256 times this, Montgomery-multiplied, gives ours (x·2^260).
pub const FROM_BLST: Limbs = FR.pow2(264);
