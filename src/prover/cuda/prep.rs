//! Host-side preparation of the sparse MSMs (L, A, B): every scalar of the witness is classed
//! once (zero, one, other), then each query walks its selected variables' classes in parallel
//! and splits them into a bitmap of the bases whose scalar is one (summed on the GPU with plain
//! additions) and a list of (base index, scalar) for the rest ("significant", Pippenger). Zeros
//! are dropped. Base indices count the variables a query's density selects, the layout of the
//! A / B points in the SRS (inputs first, then aux).

use bitvec::prelude::{BitSlice, Lsb0};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::stages::mont_limbs;
use crate::error::Result;

/// One query's witness, split by scalar class.
#[derive(Default, Debug)]
pub struct SparseScalars {
    /// Number of bases the query uses (selected variables).
    pub npoints: usize,
    /// Bit j set: base j has scalar one. Padded with zero words to a multiple of 32 words.
    pub ones: Vec<u32>,
    pub sig_idx: Vec<u32>,
    pub sig: Vec<Scalar>,
    pub zeros: usize,
    pub n_ones: usize,
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

/// Classify the selected scalars of `segments` (concatenated in order).
pub fn classify(segments: &[Segment<'_>]) -> Result<SparseScalars> {
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
    let parts: Vec<(Vec<(u32, Scalar)>, usize, usize)> = chunks
        .par_iter()
        .zip(slices.into_par_iter())
        .map(|(&(si, i0, i1, j0, _), out)| {
            let (exps, classes, density) = segments[si];
            let mut sig = Vec::new();
            let (mut zeros, mut ones) = (0usize, 0usize);
            // Zeros and ones without branches; significant scalars are rare (~2 %).
            let mut visit = |j: usize, i: usize| {
                let c = classes[i];
                let one = (c == ONE) as u8;
                out[j] = one;
                ones += one as usize;
                zeros += (c == ZERO) as usize;
                if c == SIG {
                    sig.push(((j0 + j) as u32, exps[i]));
                }
            };
            match density {
                None => (i0..i1).enumerate().for_each(|(j, i)| visit(j, i)),
                Some(d) => d[i0..i1].iter_ones().enumerate().for_each(|(j, k)| visit(j, i0 + k)),
            }
            (sig, zeros, ones)
        })
        .collect();

    let words = npoints.div_ceil(32).div_ceil(32) * 32;
    let mut ones_bits = vec![0u32; words];
    ones_bits.par_iter_mut().zip(flags.par_chunks(32)).for_each(|(w, f)| {
        *w = f.iter().enumerate().fold(0u32, |acc, (b, &v)| acc | ((v as u32) << b));
    });

    let nsig: usize = parts.iter().map(|p| p.0.len()).sum();
    let mut out = SparseScalars {
        npoints,
        ones: ones_bits,
        sig_idx: Vec::with_capacity(nsig),
        sig: Vec::with_capacity(nsig),
        ..Default::default()
    };
    for (sig, zeros, ones) in parts {
        out.zeros += zeros;
        out.n_ones += ones;
        for (j, s) in sig {
            out.sig_idx.push(j);
            out.sig.push(s);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitvec::vec::BitVec;
    use ff::Field;
    use rand::{Rng, SeedableRng};

    /// `classify` against a walk over the scalars themselves (no classes).
    fn check(segments: &[(&[Scalar], Option<&BitVec>)]) {
        let classed: Vec<Vec<u8>> = segments.iter().map(|(v, _)| classes(v)).collect();
        let segs: Vec<Segment<'_>> =
            segments.iter().zip(&classed).map(|((v, d), c)| (*v, c.as_slice(), d.map(|d| d.as_bitslice()))).collect();
        let got = classify(&segs).unwrap();

        let mut j = 0u32;
        let (mut ones, mut sig, mut zeros) = (Vec::new(), Vec::new(), 0);
        for (v, d) in segments {
            for (i, s) in v.iter().enumerate() {
                if d.is_some_and(|d| !d[i]) {
                    continue;
                }
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
        assert_eq!(got.ones.len() % 32, 0);
        assert!(got.ones.len() * 32 >= got.npoints);
        let bits: Vec<u32> =
            (0..got.ones.len() as u32 * 32).filter(|&k| got.ones[(k / 32) as usize] >> (k % 32) & 1 == 1).collect();
        assert_eq!(bits, ones);
        assert_eq!((got.n_ones, got.zeros), (ones.len(), zeros));
        let gs: Vec<(u32, Scalar)> = got.sig_idx.iter().copied().zip(got.sig.iter().copied()).collect();
        assert_eq!(gs, sig);
    }

    #[test]
    fn classify_matches_a_plain_walk() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mk = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<Scalar> {
            (0..n)
                .map(|_| match rng.gen_range(0..6) {
                    0 => Scalar::ZERO,
                    1 | 2 => Scalar::ONE,
                    3 => Scalar::from(1u64) + Scalar::ZERO, // one, computed
                    4 => -Scalar::ONE,                      // r − 1: significant
                    _ => Scalar::random(&mut *rng),
                })
                .collect()
        };
        let (a, b) = (mk(37, &mut rng), mk(70_001, &mut rng));
        let da: BitVec = (0..a.len()).map(|_| rng.gen_bool(0.5)).collect();
        let db: BitVec = (0..b.len()).map(|_| rng.gen_bool(0.3)).collect();
        check(&[(&a, Some(&da)), (&b, Some(&db))]);
        check(&[(&a, None), (&b, Some(&db))]);
        check(&[(&b, None)]);
        check(&[(&a, Some(&da)), (&b, None)]);
        let empty = classify(&[]).unwrap();
        assert_eq!((empty.npoints, empty.ones.len()), (0, 0));
    }

    #[test]
    fn classes_must_match_their_scalars() {
        let v = [Scalar::ONE; 3];
        assert!(classify(&[(&v, &classes(&v)[..2], None)]).is_err());
    }
}
