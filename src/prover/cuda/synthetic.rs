//! Synthetic circuits, witnesses and SRSes for the GPU checks and benchmarks (tests/gpu_*.rs,
//! `cuzk-gpu`). The SRS points are correct curve points (random multiples of the generator,
//! stepped by random points within a chunk, computed in parallel) but come from no real setup:
//! proofs against them are for comparing backends and timing, not for verifying.

use std::sync::Arc;

use bellperson::groth16::{Parameters, VerifyingKey};
use bitvec::vec::BitVec;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::synth::Assignment;

pub use super::synthetic_export::{write_assignment, write_params};
pub use crate::synth::Toy;

/// How many points of each kind an SRS for an assignment needs.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub h: usize,
    pub inputs: usize,
    pub aux: usize,
    pub a: usize,
    pub b: usize,
}

impl Shape {
    pub fn of(asg: &Assignment) -> Shape {
        let n = asg.a.len().next_power_of_two();
        Shape {
            h: n - 1,
            inputs: asg.input.len(),
            aux: asg.aux.len(),
            a: asg.input.len() + asg.a_aux_density.get_total_density(),
            b: asg.b_input_density.get_total_density() + asg.b_aux_density.get_total_density(),
        }
    }
}

const CHUNK: usize = 1 << 12;

fn chunk_rng(seed: u64, k: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// `n` distinct-looking G1 points: per chunk, s·G + i·Q for random s and Q.
pub fn g1_points(n: usize, seed: u64) -> Vec<G1Affine> {
    let mut out = vec![G1Affine::identity(); n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(k, chunk)| {
        let mut rng = chunk_rng(seed, k);
        let mut acc = G1Projective::generator() * Scalar::random(&mut rng);
        let step = (G1Projective::generator() * Scalar::random(&mut rng)).to_affine();
        let mut proj = Vec::with_capacity(chunk.len());
        for _ in 0..chunk.len() {
            proj.push(acc);
            acc += step;
        }
        G1Projective::batch_normalize(&proj, chunk);
    });
    out
}

pub fn g2_points(n: usize, seed: u64) -> Vec<G2Affine> {
    let mut out = vec![G2Affine::identity(); n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(k, chunk)| {
        let mut rng = chunk_rng(seed, k);
        let mut acc = G2Projective::generator() * Scalar::random(&mut rng);
        let step = (G2Projective::generator() * Scalar::random(&mut rng)).to_affine();
        let mut proj = Vec::with_capacity(chunk.len());
        for _ in 0..chunk.len() {
            proj.push(acc);
            acc += step;
        }
        G2Projective::batch_normalize(&proj, chunk);
    });
    out
}

/// `base` repeated to length `n` (copied in parallel).
fn tile<T: Copy + Send + Sync>(mut base: Vec<T>, n: usize) -> Vec<T> {
    if base.len() >= n || base.is_empty() {
        base.truncate(n);
        return base;
    }
    let mut out = Vec::with_capacity(n);
    out.spare_capacity_mut()[..n].par_chunks_mut(base.len()).for_each(|c| {
        for (d, s) in c.iter_mut().zip(&base) {
            d.write(*s);
        }
    });
    // SAFETY: the loop above initialized all n elements.
    unsafe { out.set_len(n) };
    out
}

/// Parameters of the given shape with random points (see the module doc).
pub fn random_params(shape: Shape, seed: u64) -> Parameters<Bls12> {
    random_params_tiled(shape, seed, usize::MAX)
}

/// Like [`random_params`], but each vector repeats its first `distinct` points: for benchmarks
/// of partition-sized circuits, where generating ~400 M distinct points would take minutes and
/// MSM cost does not depend on which curve points the bases are.
pub fn random_params_tiled(shape: Shape, seed: u64, distinct: usize) -> Parameters<Bls12> {
    let g1n = |n: usize, seed: u64| tile(g1_points(n.min(distinct), seed), n);
    let g2n = |n: usize, seed: u64| tile(g2_points(n.min(distinct), seed), n);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g1 = |rng: &mut ChaCha8Rng| (G1Projective::generator() * Scalar::random(rng)).to_affine();
    let g2 = |rng: &mut ChaCha8Rng| (G2Projective::generator() * Scalar::random(rng)).to_affine();
    let vk = VerifyingKey::<Bls12> {
        alpha_g1: g1(&mut rng),
        beta_g1: g1(&mut rng),
        beta_g2: g2(&mut rng),
        gamma_g2: g2(&mut rng),
        delta_g1: g1(&mut rng),
        delta_g2: g2(&mut rng),
        ic: (0..shape.inputs).map(|_| g1(&mut rng)).collect(),
    };
    Parameters {
        vk,
        h: Arc::new(g1n(shape.h, seed ^ 1)),
        l: Arc::new(g1n(shape.aux, seed ^ 2)),
        a: Arc::new(g1n(shape.a, seed ^ 3)),
        b_g1: Arc::new(g1n(shape.b, seed ^ 4)),
        b_g2: Arc::new(g2n(shape.b, seed ^ 5)),
    }
}

/// Fractions of a PoRep-like witness: aux scalars zero / one (the rest random), and the share
/// of aux variables that appear in A and in B.
#[derive(Clone, Copy, Debug)]
pub struct WitnessMix {
    pub zero: f64,
    pub one: f64,
    pub a_density: f64,
    pub b_density: f64,
}

fn bits(n: usize, p: f64, seed: u64) -> BitVec {
    let words: Vec<Vec<bool>> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|k| {
            let mut rng = chunk_rng(seed, k);
            let len = CHUNK.min(n - k * CHUNK);
            (0..len).map(|_| rng.gen_bool(p)).collect()
        })
        .collect();
    words.into_iter().flatten().collect()
}

/// An assignment with `constraints` random constraint evaluations (c = a·b, so the H
/// polynomial is exact) and `aux` witness scalars drawn from `mix`. Not the witness of any
/// circuit; its shape and scalar mix are what the prover's speed depends on.
pub fn porep_like_assignment(constraints: usize, inputs: usize, aux: usize, mix: WitnessMix, seed: u64) -> Assignment {
    let rand_vec = |n: usize, seed: u64, f: &(dyn Fn(&mut ChaCha8Rng) -> Scalar + Sync)| -> Vec<Scalar> {
        let mut v = vec![Scalar::ZERO; n];
        v.par_chunks_mut(CHUNK).enumerate().for_each(|(k, c)| {
            let mut rng = chunk_rng(seed, k);
            c.iter_mut().for_each(|x| *x = f(&mut rng));
        });
        v
    };
    let small = |rng: &mut ChaCha8Rng| Scalar::from(rng.gen::<u64>());
    let a = rand_vec(constraints, seed ^ 11, &small);
    let b = rand_vec(constraints, seed ^ 12, &small);
    let c: Vec<Scalar> = a.par_iter().zip(b.par_iter()).map(|(x, y)| x * y).collect();
    let mut input = vec![Scalar::ONE];
    input.extend((1..inputs.max(1)).map(|i| Scalar::from(i as u64 * 77 + 5)));
    let aux = rand_vec(aux, seed ^ 13, &|rng: &mut ChaCha8Rng| {
        let u: f64 = rng.gen();
        if u < mix.zero {
            Scalar::ZERO
        } else if u < mix.zero + mix.one {
            Scalar::ONE
        } else {
            Scalar::random(&mut *rng)
        }
    });
    let tracker = |bv: BitVec| {
        let total_density = bv.count_ones();
        DensityTracker { bv, total_density }
    };
    let mut b_in: BitVec = BitVec::repeat(false, input.len());
    b_in.set(0, true);
    Assignment {
        prepared: None,
        deferred: None,
        a_aux_density: tracker(bits(aux.len(), mix.a_density, seed ^ 14)),
        b_input_density: tracker(b_in),
        b_aux_density: tracker(bits(aux.len(), mix.b_density, seed ^ 15)),
        a,
        b,
        c,
        input,
        aux,
    }
}

/// A field-by-field copy (`Assignment` is consumed by `prove`).
pub fn clone_assignment(x: &Assignment) -> Assignment {
    // On all threads: a 2^26 copy is ~8 GB, one thread took ~6 s per copy of `--stream`'s setup.
    let copy = |v: &Vec<Scalar>| -> Vec<Scalar> { v.par_iter().copied().collect() };
    Assignment {
        prepared: None,
        deferred: x.deferred.clone(),
        a: copy(&x.a),
        b: copy(&x.b),
        c: copy(&x.c),
        input: x.input.clone(),
        aux: copy(&x.aux),
        a_aux_density: x.a_aux_density.clone(),
        b_input_density: x.b_input_density.clone(),
        b_aux_density: x.b_aux_density.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_repeats_the_base_to_length() {
        assert_eq!(tile(vec![1u8, 2, 3], 7), [1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(tile(vec![1u8, 2, 3], 2), [1, 2]);
        let p = random_params_tiled(Shape { h: 5, inputs: 1, aux: 3, a: 4, b: 2 }, 1, 2);
        assert_eq!(p.h.len(), 5);
        assert_eq!((p.h[0], p.h[1]), (p.h[2], p.h[3]));
        assert_ne!(p.h[0], p.h[1]);
        assert_eq!(p.b_g2[..], g2_points(2, 1 ^ 5)[..]);
    }
}
