//! The H polynomial's NTTs on AVX-512 IFMA: the same transforms, twiddles and order of
//! operations as [`crate::prover::ntt`] (see there for the cache-blocked recursion and the
//! bit-reversed intermediate order), on 8 scalars per instruction stream.
//!
//! Data lives in blocks of 8 scalars (5 registers of 52-bit limbs, Montgomery R = 2^260),
//! converted once from the synthesis' vectors and once at the end into the canonical bytes the
//! MSM takes. Butterflies at distance ≥ 8 pair whole blocks; the last three levels of a
//! 16-scalar leaf are done in registers with lane permutations. Lazy bounds (r the modulus):
//! Cooley-Tukey levels keep values below 4r (the sum input brought below 2r first),
//! Gentleman-Sande levels below 2r; every product is below 2r.

use std::arch::x86_64::*;

use blstrs::Scalar;
use rayon::prelude::*;

use super::fr::{self, Fr8, FR, LIMBS};
use super::lanes::{self, Fe};
use crate::prover::ntt::{Domain, ScalarTables};

/// 8 scalars, limb-major.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Block(pub [[u64; 8]; LIMBS]);

const ZERO_BLOCK: Block = Block([[0; 8]; LIMBS]);

/// Blocks at most this many scalars long are transformed by one thread (1.25 MiB).
const SERIAL_BLOCK: usize = 1 << 15;
/// Butterfly loops over at least this many blocks are split across threads.
const PAR_BLOCKS: usize = 1 << 11;

#[inline]
#[target_feature(enable = "avx512f")]
fn load(b: &Block) -> Fr8 {
    // SAFETY: a block is 64-byte aligned, each limb row 64 bytes.
    Fe(std::array::from_fn(|i| unsafe { _mm512_load_si512(b.0[i].as_ptr().cast()) }))
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store(b: &mut Block, v: &Fr8) {
    for i in 0..LIMBS {
        // SAFETY: as in `load`.
        unsafe { _mm512_store_si512(b.0[i].as_mut_ptr().cast(), v.0[i]) };
    }
}

/// Per-domain twiddles in block form (built once per domain, on first use).
pub struct Tables {
    tw_fwd: Vec<Block>,
    tw_inv: Vec<Block>,
    coset_fwd: (Vec<Block>, Vec<Block>),
    coset_inv: (Vec<Block>, Vec<Block>),
    z_inv: fr::Limbs,
    zn_inv: fr::Limbs,
}

/// Scalars (blstrs' Montgomery form) → blocks in ours (x·2^260); missing ones are zero.
#[target_feature(enable = "avx512f,avx512ifma")]
fn to_blocks_into(src: &[Scalar], out: &mut [Block]) {
    let k = lanes::splat(&fr::FROM_BLST);
    for (o, chunk) in out.iter_mut().zip(src.chunks(8)) {
        let l: [[u64; LIMBS]; 8] = std::array::from_fn(|i| {
            // SAFETY: Scalar is #[repr(transparent)] over blst_fr (four u64 limbs, Montgomery form).
            chunk.get(i).map_or([0; LIMBS], |s| lanes::to_limbs(&unsafe { std::mem::transmute::<Scalar, [u64; 4]>(*s) }))
        });
        store(o, &lanes::mul(&FR, &lanes::from_lanes(&l), &k));
    }
}

fn to_blocks(src: &[Scalar], n: usize) -> Vec<Block> {
    let mut out = vec![ZERO_BLOCK; n.div_ceil(8)];
    out.par_chunks_mut(1024).zip(src.par_chunks(8 * 1024)).for_each(|(o, s)| {
        // SAFETY: the caller ([`h_coefficients`]) checked that this CPU has AVX-512 F and IFMA.
        unsafe { to_blocks_into(s, o) }
    });
    out
}

impl Tables {
    pub fn build(d: &Domain, t: &ScalarTables) -> Tables {
        let one = |v: &Scalar| to_blocks(std::slice::from_ref(v), 8)[0].0.map(|l| l[0]);
        Tables {
            tw_fwd: to_blocks(&t.tw_fwd, t.tw_fwd.len()),
            tw_inv: to_blocks(&t.tw_inv, t.tw_inv.len()),
            coset_fwd: (to_blocks(&t.coset_fwd.0, t.coset_fwd.0.len()), to_blocks(&t.coset_fwd.1, t.coset_fwd.1.len())),
            coset_inv: (to_blocks(&t.coset_inv.0, t.coset_inv.0.len()), to_blocks(&t.coset_inv.1, t.coset_inv.1.len())),
            z_inv: one(&d.z_inv),
            zn_inv: one(&d.zn_inv),
        }
    }
}

/// Element `e` of a block table, in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn broadcast(t: &[Block], e: usize) -> Fr8 {
    let b = &t[e / 8];
    Fe(std::array::from_fn(|i| _mm512_set1_epi64(b.0[i][e % 8] as i64)))
}

/// Lanes of `v` permuted by `idx` (lane k ← v[idx[k]]).
#[inline]
#[target_feature(enable = "avx512f")]
fn permute(v: &Fr8, idx: __m512i) -> Fr8 {
    Fe(std::array::from_fn(|i| _mm512_permutexvar_epi64(idx, v.0[i])))
}

/// Lanes from the 16 of (a ‖ b) by `idx` (0..16).
#[inline]
#[target_feature(enable = "avx512f")]
fn permute2(a: &Fr8, idx: __m512i, b: &Fr8) -> Fr8 {
    Fe(std::array::from_fn(|i| _mm512_permutex2var_epi64(a.0[i], idx, b.0[i])))
}

#[inline]
#[target_feature(enable = "avx512f")]
fn idx(v: [i64; 8]) -> __m512i {
    _mm512_set_epi64(v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0])
}

/// Twiddles for the leaf levels: entries e0 .. e0 + 8/rep of `t`, each repeated `rep` times.
#[inline]
#[target_feature(enable = "avx512f")]
fn twiddles(t: &[Block], e0: usize, rep: usize) -> Fr8 {
    let o = (e0 % 8) as i64;
    let r = rep as i64;
    permute(&load(&t[e0 / 8]), idx(std::array::from_fn(|k| o + k as i64 / r)))
}

/// Cooley-Tukey butterfly: (a, b) → (a + w·b, a − w·b); inputs below 4r, outputs below 4r.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn ct_bf(a: &Fr8, b: &Fr8, w: &Fr8) -> (Fr8, Fr8) {
    let a = lanes::reduce_below::<LIMBS, 1>(&FR, a); // below 2r
    let v = lanes::mul(&FR, b, w); // below 2r
    (lanes::add(&a, &v), lanes::sub::<LIMBS, 1>(&FR, &a, &v))
}

/// Gentleman-Sande butterfly: (a, b) → (a + b, (a − b)·w); inputs below 2r, outputs below 2r.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn gs_bf(a: &Fr8, b: &Fr8, w: &Fr8) -> (Fr8, Fr8) {
    let s = lanes::reduce_below::<LIMBS, 1>(&FR, &lanes::add(a, b));
    (s, lanes::mul(&FR, &lanes::sub::<LIMBS, 1>(&FR, a, b), w))
}

/// The three in-register layouts of a 16-scalar leaf, for distances 4, 2, 1: indices into
/// (v0 ‖ v1) that gather the pairs' first and second halves, and their inverses.
struct Leaf {
    a: [i64; 8],
    b: [i64; 8],
    back0: [i64; 8],
    back1: [i64; 8],
}
const LEAF: [Leaf; 3] = [
    Leaf { a: [0, 1, 2, 3, 8, 9, 10, 11], b: [4, 5, 6, 7, 12, 13, 14, 15], back0: [0, 1, 2, 3, 8, 9, 10, 11], back1: [4, 5, 6, 7, 12, 13, 14, 15] },
    Leaf { a: [0, 1, 4, 5, 8, 9, 12, 13], b: [2, 3, 6, 7, 10, 11, 14, 15], back0: [0, 1, 8, 9, 2, 3, 10, 11], back1: [4, 5, 12, 13, 6, 7, 14, 15] },
    Leaf { a: [0, 2, 4, 6, 8, 10, 12, 14], b: [1, 3, 5, 7, 9, 11, 13, 15], back0: [0, 8, 1, 9, 2, 10, 3, 11], back1: [4, 12, 5, 13, 6, 14, 7, 15] },
];

/// `ct` on a 16-scalar leaf (two blocks) at level m, block index i.
#[target_feature(enable = "avx512f,avx512ifma")]
fn ct_leaf(x: &mut [Block], tw: &[Block], m: usize, i: usize) {
    let (mut v0, mut v1) = (load(&x[0]), load(&x[1]));
    (v0, v1) = ct_bf(&v0, &v1, &broadcast(tw, m + i));
    for (level, l) in LEAF.iter().enumerate() {
        let (mm, ii, rep) = (m << (level + 1), i << (level + 1), 4 >> level);
        let (a, b) = (permute2(&v0, idx(l.a), &v1), permute2(&v0, idx(l.b), &v1));
        let (a, b) = ct_bf(&a, &b, &twiddles(tw, mm + ii, rep));
        (v0, v1) = (permute2(&a, idx(l.back0), &b), permute2(&a, idx(l.back1), &b));
    }
    store(&mut x[0], &v0);
    store(&mut x[1], &v1);
}

/// `gs` on a 16-scalar leaf: the levels of `ct_leaf` in reverse.
#[target_feature(enable = "avx512f,avx512ifma")]
fn gs_leaf(x: &mut [Block], tw: &[Block], m: usize, i: usize) {
    let (mut v0, mut v1) = (load(&x[0]), load(&x[1]));
    for (level, l) in LEAF.iter().enumerate().rev() {
        let (mm, ii, rep) = (m << (level + 1), i << (level + 1), 4 >> level);
        let (a, b) = (permute2(&v0, idx(l.a), &v1), permute2(&v0, idx(l.b), &v1));
        let (a, b) = gs_bf(&a, &b, &twiddles(tw, mm + ii, rep));
        (v0, v1) = (permute2(&a, idx(l.back0), &b), permute2(&a, idx(l.back1), &b));
    }
    (v0, v1) = gs_bf(&v0, &v1, &broadcast(tw, m + i));
    store(&mut x[0], &v0);
    store(&mut x[1], &v1);
}

/// The butterflies of one level between the halves of a block range (one twiddle).
#[target_feature(enable = "avx512f,avx512ifma")]
fn level(lo: &mut [Block], hi: &mut [Block], w: &Fr8, gs: bool) {
    for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
        let (x, y) = if gs { gs_bf(&load(a), &load(b), w) } else { ct_bf(&load(a), &load(b), w) };
        store(a, &x);
        store(b, &y);
    }
}

fn level_par(x: &mut [Block], w: &Fr8, gs: bool) {
    let (lo, hi) = x.split_at_mut(x.len() / 2);
    // SAFETY (both calls): the caller checked that this CPU has AVX-512 F and IFMA.
    if lo.len() >= PAR_BLOCKS {
        lo.par_chunks_mut(PAR_BLOCKS / 4).zip(hi.par_chunks_mut(PAR_BLOCKS / 4)).for_each(|(l, h)| unsafe { level(l, h, w, gs) });
    } else {
        unsafe { level(lo, hi, w, gs) }
    }
}

/// x ← bitrev(DFT(x)) for the range `x` (in blocks) at level m, block index i.
fn ct(x: &mut [Block], tw: &[Block], m: usize, i: usize) {
    if x.len() == 2 {
        // SAFETY: checked by the caller (see `level_par`).
        return unsafe { ct_leaf(x, tw, m, i) };
    }
    // SAFETY: as above.
    let w = unsafe { broadcast(tw, m + i) };
    level_par(x, &w, false);
    let serial = 8 * x.len() <= SERIAL_BLOCK;
    let (lo, hi) = x.split_at_mut(x.len() / 2);
    if !serial {
        rayon::join(|| ct(lo, tw, 2 * m, 2 * i), || ct(hi, tw, 2 * m, 2 * i + 1));
    } else {
        ct(lo, tw, 2 * m, 2 * i);
        ct(hi, tw, 2 * m, 2 * i + 1);
    }
}

/// x ← DFT(bitrev(x)): the levels of `ct` in reverse.
fn gs(x: &mut [Block], tw: &[Block], m: usize, i: usize) {
    if x.len() == 2 {
        // SAFETY: as in `ct`.
        return unsafe { gs_leaf(x, tw, m, i) };
    }
    {
        let serial = 8 * x.len() <= SERIAL_BLOCK;
        let (lo, hi) = x.split_at_mut(x.len() / 2);
        if !serial {
            rayon::join(|| gs(lo, tw, 2 * m, 2 * i), || gs(hi, tw, 2 * m, 2 * i + 1));
        } else {
            gs(lo, tw, 2 * m, 2 * i);
            gs(hi, tw, 2 * m, 2 * i + 1);
        }
    }
    // SAFETY: as above.
    let w = unsafe { broadcast(tw, m + i) };
    level_par(x, &w, true);
}

/// x[j] *= lo[j mod L] · hi[j / L] (L = lo's length, a multiple of 8): outputs below 2r.
#[target_feature(enable = "avx512f,avx512ifma")]
fn scale_chunk(x: &mut [Block], lo: &[Block], h: &Fr8) {
    for (v, f) in x.iter_mut().zip(lo) {
        let f = lanes::mul(&FR, &load(f), h);
        store(v, &lanes::mul(&FR, &load(v), &f));
    }
}

fn scale_br(x: &mut [Block], (lo, hi): &(Vec<Block>, Vec<Block>)) {
    let per = lo.len(); // blocks per hi factor
    x.par_chunks_mut(per).enumerate().for_each(|(j, chunk)| {
        // SAFETY: as in `ct`.
        unsafe { scale_chunk(chunk, lo, &broadcast(hi, j)) }
    });
}

/// a ← a·b (inputs below 2r, output below 2r).
#[target_feature(enable = "avx512f,avx512ifma")]
fn times_chunk(a: &mut [Block], b: &[Block]) {
    for (a, b) in a.iter_mut().zip(b) {
        store(a, &lanes::mul(&FR, &load(a), &load(b)));
    }
}

/// a ← a / Z(g) − c / (n·Z(g)) (`z`, `zn` those factors; output below 2r).
#[target_feature(enable = "avx512f,avx512ifma")]
fn minus_c_chunk(a: &mut [Block], c: &[Block], z: &Fr8, zn: &Fr8) {
    for (a, c) in a.iter_mut().zip(c) {
        let x = lanes::mul(&FR, &load(a), z);
        store(a, &lanes::sub::<LIMBS, 1>(&FR, &x, &lanes::mul(&FR, &load(c), zn)));
    }
}

/// Evaluations on the domain → evaluations on the coset (as [`crate::prover::ntt`]).
fn to_coset(t: &Tables, x: &mut [Block]) {
    ct(x, &t.tw_inv, 1, 0);
    scale_br(x, &t.coset_fwd);
    gs(x, &t.tw_fwd, 1, 0);
}

/// Canonical little-endian bytes of the value in lane `k` of block `b` (below 4r).
#[target_feature(enable = "avx512f,avx512ifma")]
fn canonical_block(b: &Block, out: &mut [[u8; 32]; 8]) {
    // x·2^260 · 1 / 2^260 is below r + 1 for any input below 2^260: reduce once.
    let mut one = [0u64; LIMBS];
    one[0] = 1;
    let v = lanes::mul(&FR, &load(b), &lanes::splat(&one));
    for (k, o) in out.iter_mut().enumerate() {
        let w = lanes::canonical(&FR, &lanes::lane(&v, k));
        for (i, word) in w[..4].iter().enumerate() {
            o[8 * i..8 * i + 8].copy_from_slice(&word.to_le_bytes());
        }
    }
}

/// A pointer the threads of [`h_coefficients`] write disjoint parts through.
struct SharedOut(*mut u8);
// SAFETY: the threads write disjoint bytes (see its use).
unsafe impl Sync for SharedOut {}
impl SharedOut {
    fn at(&self, offset: usize) -> *mut u8 {
        // SAFETY: callers keep offset inside the buffer.
        unsafe { self.0.add(offset) }
    }
}

/// Buffers left for the caller to free off the critical path.
pub type Spent = [Vec<Block>; 3];

/// H's n − 1 coefficients as canonical little-endian bytes in natural order (the MSM's
/// scalars), from A, B, C's evaluations (each zero-padded to the domain size `d`). The caller
/// checked [`super::available`] and that the domain has at least 64 points (scale factor
/// tables of whole blocks).
pub fn h_coefficients(d: &Domain, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> (Vec<u8>, Spent) {
    assert!(d.n >= 64 && a.len().max(b.len()).max(c.len()) <= d.n);
    let t = d.ifma_tables();
    let (mut a, (mut b, mut c)) = rayon::join(|| to_blocks(a, d.n), || rayon::join(|| to_blocks(b, d.n), || to_blocks(c, d.n)));
    // C never goes to the coset (see crate::prover::ntt::h_bitreversed): its unscaled iNTT only.
    rayon::join(|| to_coset(t, &mut a), || rayon::join(|| to_coset(t, &mut b), || ct(&mut c, &t.tw_inv, 1, 0)));
    // SAFETY: as in `ct`.
    a.par_chunks_mut(512).zip(b.par_chunks(512)).for_each(|(a, b)| unsafe { times_chunk(a, b) });
    ct(&mut a, &t.tw_inv, 1, 0);
    scale_br(&mut a, &t.coset_inv);
    // SAFETY: as in `ct`.
    let (z, zn) = unsafe { (lanes::splat(&t.z_inv), lanes::splat(&t.zn_inv)) };
    a.par_chunks_mut(512).zip(c.par_chunks(512)).for_each(|(a, c)| unsafe { minus_c_chunk(a, c, &z, &zn) });

    // Bit-reversed blocks → natural order: coefficient i sits at bitrev(i) (a permutation, so
    // the writes of different blocks never overlap).
    let m = d.n - 1;
    let mut bytes = vec![0u8; 32 * m];
    let out = SharedOut(bytes.as_mut_ptr());
    a.par_iter().enumerate().for_each(|(blk, b)| {
        let mut canon = [[0u8; 32]; 8];
        // SAFETY: as in `ct`.
        unsafe { canonical_block(b, &mut canon) };
        for (k, c) in canon.iter().enumerate() {
            let i = crate::prover::ntt::natural_index(d, 8 * blk + k);
            if i < m {
                // SAFETY: i < m, so the 32 bytes lie inside `bytes`; each i is written once.
                unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), out.at(32 * i), 32) };
            }
        }
    });
    (bytes, [a, b, c])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand::SeedableRng;

    fn from_blocks(d: &Domain, x: &[Block]) -> Vec<Scalar> {
        let mut out = Vec::new();
        for b in x {
            let mut c = [[0u8; 32]; 8];
            unsafe { canonical_block(b, &mut c) };
            out.extend(c.iter().map(|s| Scalar::from_bytes_le(s).unwrap()));
        }
        out.truncate(d.n);
        out
    }

    #[test]
    fn transforms_equal_the_scalar_ones() {
        if !super::super::available() {
            return;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        for log_n in [4u32, 5, 6, 10] {
            let d = Domain::get(log_n);
            let st = d.scalar_tables();
            let t = d.ifma_tables();
            let x: Vec<Scalar> = (0..d.n).map(|_| Scalar::random(&mut rng)).collect();
            let mut want = x.clone();
            crate::prover::ntt::ct(&mut want, &st.tw_inv, 1, 0);
            let mut got = to_blocks(&x, d.n);
            ct(&mut got, &t.tw_inv, 1, 0);
            assert_eq!(from_blocks(&d, &got), want, "ct n={}", d.n);
            let mut want = x.clone();
            crate::prover::ntt::gs(&mut want, &st.tw_fwd, 1, 0);
            let mut got = to_blocks(&x, d.n);
            gs(&mut got, &t.tw_fwd, 1, 0);
            assert_eq!(from_blocks(&d, &got), want, "gs n={}", d.n);
        }
    }
}
