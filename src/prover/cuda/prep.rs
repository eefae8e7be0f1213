//! Host-side preparation of the sparse MSMs (L, A, B): every scalar of the witness is classed
//! once (zero, one, other), then each query walks its selected variables' classes in parallel
//! and splits them into a bitmap of the bases whose scalar is one (summed on the GPU with plain
//! additions) and a list of (base index, scalar) for the rest ("significant", Pippenger). Zeros
//! are dropped. Base indices count the variables a query's density selects, the layout of the
//! A / B points in the SRS (inputs first, then aux). A query whose significant scalars are a
//! large share of its points ([`dense_query`]: a PoSt witness, Poseidon's field elements, is
//! ~99 % significant) keeps its selected scalars as they are instead: gathering nearly every base
//! by index would copy the SRS section once more on the device.

use bitvec::prelude::{BitSlice, Lsb0};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::stages::mont_limbs;
use crate::error::Result;
pub use crate::prover::vram::dense_query;

/// One query's witness, split by scalar class.
#[derive(Default, Debug)]
pub struct SparseScalars {
    /// Number of bases the query uses (selected variables).
    pub npoints: usize,
    /// Bit j set: base j has scalar one. Padded with zero words to a multiple of 32 words.
    pub ones: Vec<u32>,
    pub sig_idx: Vec<u32>,
    pub sig: Vec<Scalar>,
    /// Significant scalars counted (`sig.len()`, also when dense).
    pub n_sig: usize,
    /// A dense query ([`dense_query`]): all `npoints` selected scalars, and no bitmap or list
    /// (`ones`, `sig_idx`, `sig` empty). Else empty.
    pub dense: Vec<Scalar>,
}

impl SparseScalars {
    pub fn is_dense(&self) -> bool {
        !self.dense.is_empty()
    }

    /// (zeros, ones, significant scalars) among its `npoints` (statistics and tests).
    #[cfg(any(test, feature = "tools"))]
    pub fn class_counts(&self) -> (usize, usize, usize) {
        let ones = if self.is_dense() {
            self.dense.iter().filter(|s| **s == Scalar::ONE).count()
        } else {
            self.ones.iter().map(|w| w.count_ones() as usize).sum()
        };
        (self.npoints - ones - self.n_sig, ones, self.n_sig)
    }

    /// Host bytes it holds.
    pub fn bytes(&self) -> u64 {
        (4 * (self.ones.capacity() + self.sig_idx.capacity()) + 32 * (self.sig.capacity() + self.dense.capacity())) as u64
    }
}

/// A run of variables, their [`classes`], and which of them the query selects (`None`: all).
pub type Segment<'a> = (&'a [Scalar], &'a [u8], Option<&'a BitSlice<usize, Lsb0>>);

const CHUNK: usize = 1 << 14;

const ZERO: u8 = 0;
const ONE: u8 = 1;
const SIG: u8 = 2;

/// Each scalar's class (zero, one, other) from its Montgomery limbs (blstrs keeps scalars
/// reduced, so each value has one representation). The three queries read these bytes instead
/// of the 32-byte scalars: one pass over the witness instead of three. Branch-free: a PoRep
/// witness is about half zeros and half ones in no predictable order.
pub fn classes(v: &[Scalar]) -> Vec<u8> {
    let one = mont_limbs(Scalar::ONE);
    let mut out = vec![ZERO; v.len()];
    out.par_chunks_mut(CHUNK).zip(v.par_chunks(CHUNK)).for_each(|(out, v)| {
        for (c, s) in out.iter_mut().zip(v) {
            let l = mont_limbs(*s);
            let nonzero = (l[0] | l[1] | l[2] | l[3] != 0) as u8;
            let not_one = ((l[0] ^ one[0]) | (l[1] ^ one[1]) | (l[2] ^ one[2]) | (l[3] ^ one[3]) != 0) as u8;
            *c = nonzero + (nonzero & not_one); // ZERO, ONE or SIG
        }
    });
    out
}

/// Classify the selected scalars of `segments` (concatenated in order). `seen`: the most
/// significant scalars a witness of the circuit held in this query (`R1cs::significant_seen`);
/// where that makes it dense the selected scalars are copied as they are and only counted, no
/// bitmap or list made first (at 32 GiB WindowPoSt's L ~5 GB of list, thrown away).
pub fn classify(segments: &[Segment<'_>], seen: Option<u64>) -> Result<SparseScalars> {
    // Chunks of each segment, with the base index each one starts at.
    let mut chunks = Vec::new();
    let mut npoints = 0usize;
    for (si, (exps, classes, density)) in segments.iter().enumerate() {
        if let Some(d) = density {
            if d.len() != exps.len() {
                return Err(err!(Prover, "density has {} bits for {} scalars", d.len(), exps.len()));
            }
        }
        if classes.len() != exps.len() {
            return Err(err!(Internal, "{} classes for {} scalars", classes.len(), exps.len()));
        }
        for i0 in (0..exps.len()).step_by(CHUNK) {
            let i1 = (i0 + CHUNK).min(exps.len());
            let count = density.map_or(i1 - i0, |d| d[i0..i1].count_ones());
            chunks.push((si, i0, i1, npoints, count));
            npoints += count;
        }
    }
    if npoints >= 1 << 31 {
        return Err(err!(Prover, "{npoints} bases are more than the GPU MSM supports"));
    }
    if seen.is_some_and(|s| dense_query(s, npoints as u64)) {
        return Ok(dense_form(segments, &chunks, npoints, counted(segments, &chunks)));
    }

    // One flag byte per base (1 = scalar one), written by disjoint chunks.
    let mut flags = vec![0u8; npoints];
    let mut slices = Vec::with_capacity(chunks.len());
    {
        let mut rest: &mut [u8] = &mut flags;
        for c in &chunks {
            let (head, tail) = rest.split_at_mut(c.4);
            slices.push(head);
            rest = tail;
        }
    }
    let parts: Vec<Vec<(u32, Scalar)>> = chunks
        .par_iter()
        .zip(slices.into_par_iter())
        .map(|(&(si, i0, i1, j0, _), out)| {
            let (exps, classes, density) = segments[si];
            let mut sig = Vec::new();
            // Ones without branches; significant scalars are rare (~2 %).
            let mut visit = |j: usize, i: usize| {
                let c = classes[i];
                out[j] = (c == ONE) as u8;
                if c == SIG {
                    sig.push(((j0 + j) as u32, exps[i]));
                }
            };
            match density {
                None => (i0..i1).enumerate().for_each(|(j, i)| visit(j, i)),
                Some(d) => d[i0..i1].iter_ones().enumerate().for_each(|(j, k)| visit(j, i0 + k)),
            }
            sig
        })
        .collect();

    let words = npoints.div_ceil(32).div_ceil(32) * 32;
    let mut ones_bits = vec![0u32; words];
    ones_bits.par_iter_mut().zip(flags.par_chunks(32)).for_each(|(w, f)| {
        *w = f.iter().enumerate().fold(0u32, |acc, (b, &v)| acc | ((v as u32) << b));
    });

    let nsig: usize = parts.iter().map(Vec::len).sum();
    if dense_query(nsig as u64, npoints as u64) {
        drop((parts, ones_bits));
        return Ok(dense_form(segments, &chunks, npoints, nsig));
    }
    let mut out = SparseScalars {
        npoints,
        ones: ones_bits,
        sig_idx: Vec::with_capacity(nsig),
        sig: Vec::with_capacity(nsig),
        n_sig: nsig,
        ..Default::default()
    };
    for sig in parts {
        for (j, s) in sig {
            out.sig_idx.push(j);
            out.sig.push(s);
        }
    }
    Ok(out)
}

/// A dense query: the selected scalars as they are, with their significant count.
fn dense_form(segments: &[Segment<'_>], chunks: &[Chunk], npoints: usize, n_sig: usize) -> SparseScalars {
    SparseScalars { npoints, n_sig, dense: selected(segments, chunks, npoints), ..Default::default() }
}

/// A run of one segment's scalars: (segment, first, end, base index of the first selected,
/// selected count).
type Chunk = (usize, usize, usize, usize, usize);

/// The significant scalars `segments` select, chunk by chunk.
fn counted(segments: &[Segment<'_>], chunks: &[Chunk]) -> usize {
    chunks
        .par_iter()
        .map(|&(si, i0, i1, _, _)| {
            let (_, classes, density) = segments[si];
            match density {
                None => classes[i0..i1].iter().filter(|&&c| c == SIG).count(),
                Some(d) => d[i0..i1].iter_ones().filter(|&k| classes[i0 + k] == SIG).count(),
            }
        })
        .sum()
}

/// The selected scalars of `segments` in order, each chunk copied by its own task.
fn selected(segments: &[Segment<'_>], chunks: &[Chunk], npoints: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; npoints];
    let mut slices = Vec::with_capacity(chunks.len());
    let mut rest: &mut [Scalar] = &mut out;
    for c in chunks {
        let (head, tail) = rest.split_at_mut(c.4);
        slices.push(head);
        rest = tail;
    }
    chunks.par_iter().zip(slices.into_par_iter()).for_each(|(&(si, i0, i1, _, _), out)| {
        let (exps, _, density) = segments[si];
        match density {
            None => out.copy_from_slice(&exps[i0..i1]),
            Some(d) => out.iter_mut().zip(d[i0..i1].iter_ones()).for_each(|(o, k)| *o = exps[i0 + k]),
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitvec::vec::BitVec;
    use ff::Field;
    use rand::{Rng, SeedableRng};

    /// `classify` against a walk over the scalars themselves (no classes); whether it came out
    /// dense. Also with a circuit seen dense before (`seen`): dense whatever this witness holds.
    fn check(segments: &[(&[Scalar], Option<&BitVec>)]) -> bool {
        let (dense, n) = check_seen(segments, None);
        assert_eq!(check_seen(segments, Some(u64::MAX / 8)).0, n >= 1024, "seen dense: dense from 1,024 points");
        assert_eq!(check_seen(segments, Some(0)).0, dense, "seen sparse: as this witness is");
        dense
    }

    /// Whether it came out dense, and its points.
    fn check_seen(segments: &[(&[Scalar], Option<&BitVec>)], seen: Option<u64>) -> (bool, usize) {
        let classed: Vec<Vec<u8>> = segments.iter().map(|(v, _)| classes(v)).collect();
        let segs: Vec<Segment<'_>> =
            segments.iter().zip(&classed).map(|((v, d), c)| (*v, c.as_slice(), d.map(|d| d.as_bitslice()))).collect();
        let got = classify(&segs, seen).unwrap();

        let mut j = 0u32;
        let (mut ones, mut sig, mut zeros, mut all) = (Vec::new(), Vec::new(), 0, Vec::new());
        for (v, d) in segments {
            for (i, s) in v.iter().enumerate() {
                if d.is_some_and(|d| !d[i]) {
                    continue;
                }
                all.push(*s);
                if *s == Scalar::ONE {
                    ones.push(j);
                } else if bool::from(s.is_zero()) {
                    zeros += 1;
                } else {
                    sig.push((j, *s));
                }
                j += 1;
            }
        }
        assert_eq!(got.npoints, j as usize);
        assert_eq!(got.class_counts(), (zeros, ones.len(), sig.len()));
        assert_eq!(got.is_dense(), dense_query(sig.len() as u64, j as u64) || dense_query(seen.unwrap_or(0), j as u64));
        if got.is_dense() {
            assert_eq!(got.dense, all);
            assert!(got.ones.is_empty() && got.sig_idx.is_empty() && got.sig.is_empty());
            return (true, got.npoints);
        }
        assert_eq!(got.ones.len() % 32, 0);
        assert!(got.ones.len() * 32 >= got.npoints);
        let bits: Vec<u32> =
            (0..got.ones.len() as u32 * 32).filter(|&k| got.ones[(k / 32) as usize] >> (k % 32) & 1 == 1).collect();
        assert_eq!(bits, ones);
        let gs: Vec<(u32, Scalar)> = got.sig_idx.iter().copied().zip(got.sig.iter().copied()).collect();
        assert_eq!(gs, sig);
        (false, got.npoints)
    }

    #[test]
    fn classify_matches_a_plain_walk() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        // Significant one time in `every` (the rest zeros and ones): 1 in 12 is a PoRep-like
        // sparse witness, 1 in 2 a dense one (a PoSt witness is 99 % significant).
        let mk = |n: usize, every: u32, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<Scalar> {
            (0..n)
                .map(|_| match (rng.gen_range(0..every), rng.gen_range(0..4)) {
                    (0, 0) => -Scalar::ONE, // r − 1: significant
                    (0, _) => Scalar::random(&mut *rng),
                    (_, 0) => Scalar::ZERO,
                    (_, 1) => Scalar::from(1u64) + Scalar::ZERO, // one, computed
                    _ => Scalar::ONE,
                })
                .collect()
        };
        for (every, dense) in [(12, false), (2, true)] {
            let (a, b) = (mk(37, every, &mut rng), mk(70_001, every, &mut rng));
            let da: BitVec = (0..a.len()).map(|_| rng.gen_bool(0.5)).collect();
            let db: BitVec = (0..b.len()).map(|_| rng.gen_bool(0.3)).collect();
            assert_eq!(check(&[(&a, Some(&da)), (&b, Some(&db))]), dense);
            assert_eq!(check(&[(&a, None), (&b, Some(&db))]), dense);
            assert_eq!(check(&[(&b, None)]), dense);
            assert_eq!(check(&[(&a, Some(&da)), (&b, None)]), dense);
        }
        let empty = classify(&[], None).unwrap();
        assert_eq!((empty.npoints, empty.ones.len()), (0, 0));
    }

    /// The toy circuit's modes are what its docs say: 1 and 2 dense (mostly field elements, like
    /// a PoSt witness), 3 and up sparse (like a PoRep's), so the GPU tests on toys run both
    /// forms of the sparse stage.
    #[test]
    fn toy_witnesses_dense_or_sparse_by_mode() {
        use crate::synth::{Assignment, SizeHint, Toy};
        for (mode, dense) in [(1, true), (2, true), (3, false), (4, false)] {
            let a = Assignment::synthesize(Toy { constraints: 1 << 12, inputs: 2, mode }, SizeHint::default()).unwrap();
            let q = super::super::witness::classify_parts(&a.input, &a.aux, &a.a_aux_density, &a.b_input_density, &a.b_aux_density, None).unwrap();
            let shares = q.each_ref().map(|q| q.n_sig as f64 / q.npoints as f64);
            assert_eq!(q.each_ref().map(|q| q.is_dense()), [dense; 3], "mode {mode}: significant shares {shares:?}");
            if !dense {
                assert!(shares.iter().all(|&x| x > 0.02 && x < 0.2), "mode {mode}: {shares:?}");
            }
        }
    }

    #[test]
    fn classes_must_match_their_scalars() {
        let v = [Scalar::ONE; 3];
        assert!(classify(&[(&v, &classes(&v)[..2], None)], None).is_err());
    }
}
