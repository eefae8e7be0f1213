//! bellperson's SHA-256 gadget (`bellperson::gadgets::sha256::sha256`, 0.27) computed natively:
//! the same padding, message schedule and rounds, the same deferred additions, allocating exactly
//! the variables the gadget allocates in the same order (see [`super::bits`]).

use super::bits::{Bit, MultiEq, U32};
use super::Sink;

const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// `sha256(cs, input)`: the digest's 256 bits, most significant first.
pub fn sha256<S: Sink + ?Sized>(s: &mut S, input: &[Bit]) -> Vec<Bit> {
    assert!(input.len().is_multiple_of(8));
    let mut padded = Vec::with_capacity(input.len() + 576);
    padded.extend_from_slice(input);
    let len = input.len() as u64;
    padded.push(Bit::Const(true));
    while !(padded.len() + 64).is_multiple_of(512) {
        padded.push(Bit::Const(false));
    }
    padded.extend((0..64).rev().map(|i| Bit::Const((len >> i) & 1 == 1)));
    let mut cur = IV.map(U32::constant);
    for block in padded.chunks(512) {
        cur = compression(s, block, &cur);
    }
    cur.iter().flat_map(|w| w.bits_be()).collect()
}

/// A sum the gadget leaves pending until its value is needed (`Maybe` in bellperson).
enum Maybe {
    Deferred(Vec<U32>),
    Concrete(U32),
}

impl Maybe {
    fn compute<S: Sink + ?Sized>(self, s: &mut S, eq: &mut MultiEq, others: &[U32]) -> U32 {
        match self {
            Maybe::Concrete(v) => v,
            Maybe::Deferred(mut v) => {
                v.extend_from_slice(others);
                U32::addmany(s, eq, &v)
            }
        }
    }
}

/// `sha256_compression_function`.
fn compression<S: Sink + ?Sized>(s: &mut S, input: &[Bit], h: &[U32; 8]) -> [U32; 8] {
    assert_eq!(input.len(), 512);
    let mut w: Vec<U32> = input.chunks(32).map(U32::from_bits_be).collect();
    w.reserve(48);
    let mut eq = MultiEq::new();
    for i in 16..64 {
        let s0 = w[i - 15]
            .rotr(7)
            .xor(s, &w[i - 15].rotr(18))
            .xor(s, &w[i - 15].shr(3));
        let s1 = w[i - 2]
            .rotr(17)
            .xor(s, &w[i - 2].rotr(19))
            .xor(s, &w[i - 2].shr(10));
        let t = U32::addmany(s, &mut eq, &[w[i - 16], s0, w[i - 7], s1]);
        w.push(t);
    }

    let mut a = Maybe::Concrete(h[0]);
    let (mut b, mut c, mut d) = (h[1], h[2], h[3]);
    let mut e = Maybe::Concrete(h[4]);
    let (mut f, mut g, mut hh) = (h[5], h[6], h[7]);
    for (i, wi) in w.iter().enumerate() {
        let new_e = e.compute(s, &mut eq, &[]);
        let s1 = new_e
            .rotr(6)
            .xor(s, &new_e.rotr(11))
            .xor(s, &new_e.rotr(25));
        let ch = U32::ch(s, &new_e, &f, &g);
        let temp1 = [hh, s1, ch, U32::constant(ROUND_CONSTANTS[i]), *wi];
        let new_a = a.compute(s, &mut eq, &[]);
        let s0 = new_a
            .rotr(2)
            .xor(s, &new_a.rotr(13))
            .xor(s, &new_a.rotr(22));
        let maj = U32::maj(s, &new_a, &b, &c);

        hh = g;
        g = f;
        f = new_e;
        e = Maybe::Deferred(temp1.iter().copied().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Maybe::Deferred(temp1.iter().copied().chain([s0, maj]).collect());
    }

    let h0 = a.compute(s, &mut eq, &[h[0]]);
    let h1 = U32::addmany(s, &mut eq, &[h[1], b]);
    let h2 = U32::addmany(s, &mut eq, &[h[2], c]);
    let h3 = U32::addmany(s, &mut eq, &[h[3], d]);
    let h4 = e.compute(s, &mut eq, &[h[4]]);
    let h5 = U32::addmany(s, &mut eq, &[h[5], f]);
    let h6 = U32::addmany(s, &mut eq, &[h[6], g]);
    let h7 = U32::addmany(s, &mut eq, &[h[7], hh]);
    eq.finish(s);
    [h0, h1, h2, h3, h4, h5, h6, h7]
}
