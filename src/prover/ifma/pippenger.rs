//! Pippenger's bucket method over the 8-lane point code, for big G1 MSMs (ΣH).
//!
//! Per window of c bits (signed digits: buckets 1..2^(c−1), a negative digit adds −P):
//! the points are counting-sorted by bucket, then eight lanes each sum one bucket's points at a
//! time (mixed XYZZ additions, bases gathered from a table converted once per MSM), and the
//! buckets are folded into Σ j·B_j with eight running sums over eight bucket ranges. Windows run
//! in parallel. Sums that met an equal or opposite point (ZZ ≡ 0, see [`super::point`]) are
//! recomputed with blst, so the result is exact for any input.

use std::arch::x86_64::*;

use blst::{blst_p1, blst_p1_affine};
use rayon::prelude::*;

use super::fp::{self, Limbs};
use super::point::{self, Row, Xyzz8};

/// Σ scalars[i]·bases[i]: scalars 32-byte little-endian, below 2^255 (canonical field
/// elements). The caller checked [`super::available`].
pub fn msm(bases: &[blst_p1_affine], scalars: &[u8], c: usize) -> blst_p1 {
    assert_eq!(scalars.len(), 32 * bases.len(), "one 32-byte scalar per base");
    assert!(scalars.chunks_exact(32).all(|s| s[31] < 0x80), "scalars below 2^255");
    let rows = table(bases);
    let windows = 256usize.div_ceil(c);
    let sums: Vec<blst_p1> = (0..windows)
        .into_par_iter()
        .map(|w| {
            // SAFETY: the caller checked that this CPU has AVX-512 F and IFMA.
            unsafe { window_sum(bases, &rows, scalars, c, w) }
        })
        .collect();
    let mut acc = blst_p1::default();
    for (w, s) in sums.iter().enumerate().rev() {
        if w + 1 != windows {
            for _ in 0..c {
                // SAFETY: blst point operations on valid points (in place is allowed).
                unsafe { blst::blst_p1_double(&mut acc, &acc) };
            }
        }
        unsafe { blst::blst_p1_add_or_double(&mut acc, &acc, s) };
    }
    acc
}

/// The bases in the 52-bit form, converted on all threads; the point at infinity (blst's
/// all-zero affine encoding) is never gathered (its digits are skipped).
fn table(bases: &[blst_p1_affine]) -> Vec<Row> {
    let mut rows = vec![Row { x: [0; fp::LIMBS], y: [0; fp::LIMBS] }; bases.len()];
    rows.par_chunks_mut(1 << 12).zip(bases.par_chunks(1 << 12)).for_each(|(out, src)| {
        for (o, s) in out.chunks_mut(8).zip(src.chunks(8)) {
            // SAFETY: as in `msm`.
            unsafe { point::rows_from_blst(s, o) };
        }
    });
    rows
}

fn is_infinity(p: &blst_p1_affine) -> bool {
    p.x.l.iter().chain(p.y.l.iter()).all(|&w| w == 0)
}

/// Window `w`'s signed (Booth) digit: the c bits from c·w, plus bit c·w − 1 (what the lower
/// window borrowed), minus 2^c when the window's own top bit is set (it lends that to the next
/// window). Digits lie in [−2^(c−1), 2^(c−1)]; returns magnitude and sign. Scalars below 2^255
/// leave the top window positive, so no carry leaves it.
#[inline]
fn digit(s: &[u8], c: usize, w: usize) -> (u32, bool) {
    let bits = |at: usize, n: usize| -> u64 {
        if at >= 256 {
            return 0;
        }
        // n ≤ 17 bits from `at`: read the 8 bytes around them.
        let byte = (at / 8).min(24);
        let word = u64::from_le_bytes(s[byte..byte + 8].try_into().unwrap());
        (word >> (at - 8 * byte)) & ((1u64 << n) - 1)
    };
    let lo = c * w;
    let v = bits(lo, c.min(256 - lo)) + if lo == 0 { 0 } else { bits(lo - 1, 1) };
    if bits(lo + c - 1, 1) == 1 {
        (((1u64 << c) - v) as u32, true)
    } else {
        (v as u32, false)
    }
}

/// Σ_j j·B_j for window `w`, as a blst point.
#[target_feature(enable = "avx512f,avx512ifma")]
fn window_sum(bases: &[blst_p1_affine], rows: &[Row], scalars: &[u8], c: usize, w: usize) -> blst_p1 {
    let m = 1usize << (c - 1); // buckets 1..=m
    let n = bases.len();

    // Counting sort of the points by bucket; entry = index | sign << 31.
    let mut digits = vec![0u32; n];
    let mut start = vec![0u32; m + 2];
    for (i, s) in scalars.chunks_exact(32).enumerate() {
        let (d, neg) = if is_infinity(&bases[i]) { (0, false) } else { digit(s, c, w) };
        digits[i] = d | (neg as u32) << 31;
        start[d as usize + 1] += 1;
    }
    for j in 1..m + 2 {
        start[j] += start[j - 1];
    }
    let mut entries = vec![0u32; n];
    let mut fill = start.clone();
    for (i, &d) in digits.iter().enumerate() {
        let b = (d & 0x7fff_ffff) as usize;
        if b != 0 {
            entries[fill[b] as usize] = i as u32 | (d & 0x8000_0000);
            fill[b] += 1;
        }
    }
    drop(digits);
    drop(fill);

    let mut buckets = vec![[[0u64; fp::LIMBS]; 4]; m + 1];
    let mut state = vec![Bucket::Empty; m + 1];
    accumulate(rows, &entries, &start, &mut buckets, &mut state);

    // Sums that met an equal or opposite point: redo them with blst.
    for j in 1..=m {
        if state[j] == Bucket::Degenerate {
            let (s, e) = (start[j] as usize, start[j + 1] as usize);
            state[j] = match blst_sum(bases, &entries[s..e]) {
                Some(p) => {
                    buckets[j] = point::xyzz_from_blst(&p);
                    Bucket::Sum
                }
                None => Bucket::Empty,
            };
        }
    }
    let filled: Vec<bool> = state.iter().map(|&b| b == Bucket::Sum).collect();
    reduce(&buckets, &filled, m)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bucket {
    Empty,
    Sum,
    /// The lane's formulas met P = 0 (ZZ ≡ 0): to be redone.
    Degenerate,
}

/// Σ ±bases[e] over `entries` with blst's complete formulas; None at infinity.
fn blst_sum(bases: &[blst_p1_affine], entries: &[u32]) -> Option<blst_p1> {
    let mut acc = blst_p1::default();
    for &e in entries {
        let mut p = blst_p1::default();
        // SAFETY: blst point operations on valid points.
        unsafe {
            blst::blst_p1_from_affine(&mut p, &bases[(e & 0x7fff_ffff) as usize]);
            if e >> 31 == 1 {
                blst::blst_p1_cneg(&mut p, true);
            }
            blst::blst_p1_add_or_double(&mut acc, &acc, &p);
        }
    }
    // SAFETY: as above.
    (!unsafe { blst::blst_p1_is_inf(&acc) }).then_some(acc)
}

/// Sums each non-empty bucket's points into `buckets[j]` (`filled[j]` set), eight buckets at a
/// time, one per lane; a lane that finishes its bucket takes the next one.
#[target_feature(enable = "avx512f,avx512ifma")]
fn accumulate(rows: &[Row], entries: &[u32], start: &[u32], buckets: &mut [[Limbs; 4]], state: &mut [Bucket]) {
    const AHEAD: usize = 6; // prefetch distance, in points per lane
    let m = buckets.len() - 1;
    let one = fp::splat(&fp::ONE);
    let mut next = 1usize; // next bucket to hand out
    let mut bucket = [0usize; 8];
    let mut pos = [0usize; 8];
    let mut end = [0usize; 8];
    let mut active: u8 = 0;
    let mut fresh: u8 = 0;
    let mut take = |lane: usize, bucket: &mut [usize; 8], pos: &mut [usize; 8], end: &mut [usize; 8]| -> bool {
        while next <= m && start[next] == start[next + 1] {
            next += 1;
        }
        if next > m {
            return false;
        }
        bucket[lane] = next;
        pos[lane] = start[next] as usize;
        end[lane] = start[next + 1] as usize;
        next += 1;
        true
    };
    for lane in 0..8 {
        if take(lane, &mut bucket, &mut pos, &mut end) {
            active |= 1 << lane;
            fresh |= 1 << lane;
        }
    }
    let zero = fp::zero();
    let mut acc = Xyzz8 { x: zero, y: zero, zz: one, zzz: one };
    while active != 0 {
        let mut idx = [0u32; 8];
        let mut neg: u8 = 0;
        for lane in 0..8 {
            if active & (1 << lane) != 0 {
                let e = entries[pos[lane]];
                idx[lane] = e & 0x7fff_ffff;
                neg |= ((e >> 31) as u8) << lane;
                if let Some(&ahead) = entries.get(pos[lane] + AHEAD) {
                    let row = &rows[(ahead & 0x7fff_ffff) as usize] as *const Row as *const i8;
                    // SAFETY: prefetches of a valid row (two cache lines) have no effect on memory.
                    unsafe {
                        _mm_prefetch::<_MM_HINT_T0>(row);
                        _mm_prefetch::<_MM_HINT_T0>(row.add(64));
                    }
                }
            }
        }
        let (x, y) = point::gather(rows, &idx, neg);
        let sum = point::add_affine(&acc, &x, &y);
        acc = point::select(fresh, &sum, &Xyzz8 { x, y, zz: one, zzz: one });
        fresh = 0;
        let mut done: u8 = 0;
        for lane in 0..8 {
            if active & (1 << lane) != 0 {
                pos[lane] += 1;
                done |= ((pos[lane] == end[lane]) as u8) << lane;
            }
        }
        if done == 0 {
            continue;
        }
        let degenerate = fp::is_zero_mod_p(&acc.zz);
        for lane in 0..8 {
            if done & (1 << lane) != 0 {
                buckets[bucket[lane]] = point::lane(&acc, lane);
                state[bucket[lane]] = if degenerate & (1 << lane) != 0 { Bucket::Degenerate } else { Bucket::Sum };
                if take(lane, &mut bucket, &mut pos, &mut end) {
                    fresh |= 1 << lane;
                } else {
                    active &= !(1 << lane);
                }
            }
        }
    }
}

/// Σ_j j·B_j: lane k runs the running sums over buckets k·L+1 ..= (k+1)·L (L = m/8) from the
/// top, giving S_k = Σ (j − k·L)·B_j and T_k = Σ B_j; then Σ_k S_k + k·L·T_k with blst.
#[target_feature(enable = "avx512f,avx512ifma")]
fn reduce(buckets: &[[Limbs; 4]], filled: &[bool], m: usize) -> blst_p1 {
    let l = m / 8;
    let one = fp::splat(&fp::ONE);
    let zero = fp::zero();
    let mut t = Xyzz8 { x: zero, y: zero, zz: one, zzz: one };
    let mut s = t;
    let (mut inf_t, mut inf_s): (u8, u8) = (0xff, 0xff);
    for step in 0..l {
        let mut idx = [0u32; 8];
        let mut empty: u8 = 0;
        for k in 0..8 {
            let j = (k + 1) * l - step;
            idx[k] = j as u32;
            empty |= (!filled[j] as u8) << k;
        }
        let b = point::gather_xyzz(buckets, &idx);
        // T += B (lanes where T is at infinity take B; where B is empty keep T).
        let sum = point::add(&t, &b);
        let keep = point::select(inf_t, &sum, &b);
        t = point::select(empty, &keep, &t);
        inf_t &= empty;
        // S += T.
        let sum = point::add(&s, &t);
        let next = point::select(inf_s, &sum, &t);
        s = point::select(inf_t, &next, &s);
        inf_s &= inf_t;
    }
    let degenerate = (fp::is_zero_mod_p(&t.zz) & !inf_t) | (fp::is_zero_mod_p(&s.zz) & !inf_s);
    if degenerate != 0 {
        return reduce_blst(buckets, filled, m);
    }
    let mut total = blst_p1::default();
    for k in 0..8 {
        if inf_s & (1 << k) == 0 {
            let sk = point::xyzz_to_blst(&point::lane(&s, k));
            // SAFETY: blst point operations on valid points.
            unsafe { blst::blst_p1_add_or_double(&mut total, &total, &sk) };
        }
        if k > 0 && inf_t & (1 << k) == 0 {
            let tk = point::xyzz_to_blst(&point::lane(&t, k));
            let scalar = ((k * l) as u64).to_le_bytes();
            let mut prod = blst_p1::default();
            // SAFETY: as above; the scalar is 64 bits long.
            unsafe {
                blst::blst_p1_mult(&mut prod, &tk, scalar.as_ptr(), 64);
                blst::blst_p1_add_or_double(&mut total, &total, &prod);
            }
        }
    }
    total
}

/// [`reduce`] with blst's complete formulas (the rare case where a running sum met an equal or
/// opposite point).
#[target_feature(enable = "avx512f,avx512ifma")]
fn reduce_blst(buckets: &[[Limbs; 4]], filled: &[bool], m: usize) -> blst_p1 {
    let (mut t, mut s) = (blst_p1::default(), blst_p1::default());
    for j in (1..=m).rev() {
        if filled[j] {
            let b = point::xyzz_to_blst(&buckets[j]);
            // SAFETY: blst point operations on valid points.
            unsafe { blst::blst_p1_add_or_double(&mut t, &t, &b) };
        }
        unsafe { blst::blst_p1_add_or_double(&mut s, &s, &t) };
    }
    s
}
