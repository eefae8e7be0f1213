//! `cuzk-bench msm`: the CPU's ΣH — one dense G1 MSM over the real 2 KiB SRS's h points
//! (4,194,303) with random canonical scalars — on the AVX-512 IFMA Pippenger vs blst's,
//! interleaved, results asserted equal. Window widths to try with `--windows 14,15,16`.

use std::time::Instant;

use blstrs::Scalar;
use cuzk::fixtures;
use cuzk::prover::{ifma, msm};
use cuzk::srs::{Srs, Validation};
use ff::Field;
use group::Curve;
use rand::SeedableRng;

use super::{median, PROOF};

pub fn run(runs: usize, windows: &[usize]) {
    let root = fixtures::default_root();
    let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED).expect("params");
    let srs = Srs::load(PROOF, &params, Validation::None).expect("load");
    let bases = &srs.params.h;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    let mut scalars = vec![0u8; 32 * bases.len()];
    for s in scalars.chunks_exact_mut(32) {
        s.copy_from_slice(&Scalar::random(&mut rng).to_bytes_le());
    }
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    if !ifma::available() {
        println!("this CPU has no AVX-512 IFMA: the CPU backend uses blst's Pippenger; nothing to compare");
        return;
    }
    let windows: Vec<Option<usize>> = if windows.is_empty() { vec![None] } else { windows.iter().map(|&c| Some(c)).collect() };
    println!("machine: {cores} cores; ΣH over {} h points of {}; {runs} runs, interleaved", bases.len(), params.display());
    let mut ours: Vec<Vec<f64>> = vec![Vec::new(); windows.len()];
    let mut blst = Vec::new();
    for i in 0..runs {
        let t = Instant::now();
        let expect = msm::blst_g1(bases, &scalars).to_affine();
        blst.push(t.elapsed().as_secs_f64());
        for (k, &c) in windows.iter().enumerate() {
            let t = Instant::now();
            let got = ifma::msm_g1(bases, &scalars, c).expect("ifma").to_affine();
            ours[k].push(t.elapsed().as_secs_f64());
            assert_eq!(got, expect, "IFMA ΣH differs from blst's (window {c:?})");
            println!("run {i}: blst {:.3}s, ifma (window {}) {:.3}s", blst[i], c.map_or("auto".into(), |c| c.to_string()), ours[k][i]);
        }
    }
    let mb = median(&blst);
    let mut summary = Vec::new();
    for (k, c) in windows.iter().enumerate() {
        let mo = median(&ours[k]);
        let c = c.unwrap_or_else(|| ifma::window_bits(bases.len()));
        println!("ΣH: ifma (window {c}) median {mo:.3}s, blst median {mb:.3}s, ratio {:.3}", mo / mb);
        summary.push(serde_json::json!({"window": c, "ifma_s": ours[k], "ifma_median_s": mo, "ratio": mo / mb}));
    }
    println!("{}", serde_json::json!({"bench": "msm", "cores": cores, "points": bases.len(), "blst_s": blst, "blst_median_s": mb, "ifma": summary}));
}
