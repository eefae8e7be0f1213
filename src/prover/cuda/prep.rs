//! Host-side preparation of the sparse MSMs (L, A, B): the witness is walked once per query,
//! in parallel, and split into a bitmap of the bases whose scalar is one (summed on the GPU with
//! plain additions) and a list of (base index, scalar) for the rest ("significant", Pippenger).
//! Zeros are dropped. Base indices count the variables a query's density selects, the layout of
//! the A / B points in the SRS (inputs first, then aux).

use bitvec::prelude::{BitSlice, Lsb0};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

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

/// A run of variables and which of them the query selects (`None`: all).
pub type Segment<'a> = (&'a [Scalar], Option<&'a BitSlice<usize, Lsb0>>);

const CHUNK: usize = 1 << 14;

/// Classify the selected scalars of `segments` (concatenated in order).
pub fn classify(segments: &[Segment<'_>]) -> Result<SparseScalars> {
    // Chunks of each segment, with the base index each one starts at.
    let mut chunks = Vec::new();
    let mut npoints = 0usize;
    for (si, (exps, density)) in segments.iter().enumerate() {
        if let Some(d) = density {
            if d.len() != exps.len() {
                return Err(err!(Prover, "density has {} bits for {} scalars", d.len(), exps.len()));
            }
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
            let (exps, density) = segments[si];
            let mut sig = Vec::new();
            let (mut zeros, mut ones) = (0usize, 0usize);
            let mut j = 0usize;
            for i in i0..i1 {
                if let Some(d) = density {
                    if !d[i] {
                        continue;
                    }
                }
                let s = &exps[i];
                if bool::from(s.is_zero()) {
                    zeros += 1;
                } else if *s == Scalar::ONE {
                    out[j] = 1;
                    ones += 1;
                } else {
                    sig.push(((j0 + j) as u32, *s));
                }
                j += 1;
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
    use rand::{Rng, SeedableRng};

    #[test]
    fn classify_matches_a_plain_walk() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mk = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<Scalar> {
            (0..n)
                .map(|_| match rng.gen_range(0..4) {
                    0 => Scalar::ZERO,
                    1 | 2 => Scalar::ONE,
                    _ => Scalar::random(&mut *rng),
                })
                .collect()
        };
        let (a, b) = (mk(37, &mut rng), mk(70_001, &mut rng));
        let da: BitVec = (0..a.len()).map(|_| rng.gen_bool(0.5)).collect();
        let db: BitVec = (0..b.len()).map(|_| rng.gen_bool(0.3)).collect();
        let got = classify(&[(&a, Some(&da)), (&b, Some(&db))]).unwrap();

        let mut j = 0u32;
        let (mut ones, mut sig) = (Vec::new(), Vec::new());
        for (v, d) in [(&a, &da), (&b, &db)] {
            for (i, s) in v.iter().enumerate() {
                if !d[i] {
                    continue;
                }
                if *s == Scalar::ONE {
                    ones.push(j);
                } else if !bool::from(s.is_zero()) {
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
        assert_eq!(got.n_ones, ones.len());
        let gs: Vec<(u32, Scalar)> = got.sig_idx.iter().copied().zip(got.sig.iter().copied()).collect();
        assert_eq!(gs, sig);

        let all = classify(&[(&b, None)]).unwrap();
        assert_eq!(all.npoints, b.len());
        assert_eq!(all.zeros + all.n_ones + all.sig.len(), b.len());
        let empty = classify(&[]).unwrap();
        assert_eq!((empty.npoints, empty.ones.len()), (0, 0));
    }
}
