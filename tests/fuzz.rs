//! A bounded mutational fuzz run of the input parsers (C1 output, params file, decoded-SRS
//! cache, engine config, and the WinningPoSt / WindowPoSt / SnapDeals vanilla proofs with the
//! verifiers' commitments) on stable Rust, as part of `make test`: each target gets its real seeds
//! mutated byte-wise and, for JSON, structurally (values swapped for huge numbers, wrong types,
//! non-canonical field elements, deep nesting, truncation) for `CUZK_FUZZ_SECS` seconds (default
//! 10). A panic fails the test and leaves the input in the temp dir. Longer runs with libFuzzer:
//! `fuzz/` (README: Fuzzing).

mod common;
mod fuzzing;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

fn budget() -> Duration {
    let secs = std::env::var("CUZK_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    Duration::from_secs(secs)
}

fn mutate_bytes(rng: &mut ChaCha8Rng, data: &mut Vec<u8>) {
    const SPECIAL: &[u8] = b"\x00\xff\"[]{},:-0123456789e.";
    for _ in 0..rng.gen_range(1..4) {
        if data.is_empty() {
            data.push(rng.gen());
            continue;
        }
        let i = rng.gen_range(0..data.len());
        match rng.gen_range(0..6) {
            0 => data[i] ^= 1 << rng.gen_range(0..8),
            1 => data[i] = SPECIAL[rng.gen_range(0..SPECIAL.len())],
            2 => data.truncate(i),
            3 => {
                let j = rng.gen_range(i..data.len().min(i + 64) + 1).min(data.len());
                data.drain(i..j);
            }
            4 => {
                let j = (i + rng.gen_range(1..32)).min(data.len());
                let chunk: Vec<u8> = data[i..j].to_vec();
                data.splice(i..i, chunk);
            }
            _ => {
                // Big-endian u32 section counts and lengths: set four bytes to an extreme.
                let v: u32 = [0, 1, u32::MAX, 0x8000_0000, rng.gen()][rng.gen_range(0..5)];
                let end = (i + 4).min(data.len());
                data[i..end].copy_from_slice(&v.to_be_bytes()[..end - i]);
            }
        }
    }
}

/// Replace a random node of a JSON document with something hostile.
fn mutate_json(rng: &mut ChaCha8Rng, v: &mut Value) {
    fn nodes(v: &mut Value) -> Vec<*mut Value> {
        let mut out = vec![v as *mut Value];
        match v {
            Value::Array(a) => a.iter_mut().for_each(|x| out.extend(nodes(x))),
            Value::Object(o) => o.values_mut().for_each(|x| out.extend(nodes(x))),
            _ => {}
        }
        out
    }
    let all = nodes(v);
    let target = all[rng.gen_range(0..all.len())];
    let hostile = match rng.gen_range(0..9) {
        0 => Value::from(u64::MAX),
        1 => Value::from(-1),
        2 => Value::from(1e300),
        3 => Value::String("x".repeat(rng.gen_range(0..100))),
        4 => Value::Array(vec![Value::from(255u8); 32]),
        5 => Value::Array(vec![]),
        6 => Value::Null,
        7 => (0..200).fold(Value::Null, |acc, _| Value::Array(vec![acc])),
        _ => {
            // Duplicate an array's entries (more challenges, parents, path levels...).
            // SAFETY: `target` points into `v`, which lives and is not otherwise borrowed here.
            match unsafe { &*target } {
                Value::Array(a) => Value::Array(a.iter().chain(a.iter()).cloned().collect()),
                other => other.clone(),
            }
        }
    };
    // SAFETY: as above; one write through the pointer, no other reference alive.
    unsafe { *target = hostile };
}

fn run(name: &str, seeds: Vec<Vec<u8>>, json: bool, target: fn(&[u8])) {
    let mut rng = ChaCha8Rng::seed_from_u64(name.len() as u64 * 7919);
    let parsed: Vec<Option<Value>> = seeds.iter().map(|s| if json { serde_json::from_slice(s).ok() } else { None }).collect();
    // CUZK_FUZZ_SEEDS=DIR: also write the seeds to DIR/<target>/ (a libFuzzer corpus for fuzz/).
    if let Some(dir) = std::env::var_os("CUZK_FUZZ_SEEDS") {
        let d = std::path::Path::new(&dir).join(name);
        std::fs::create_dir_all(&d).unwrap();
        for (i, s) in seeds.iter().enumerate() {
            std::fs::write(d.join(format!("seed-{i}")), s).unwrap();
        }
    }
    let (start, mut runs) = (Instant::now(), 0u64);
    for s in &seeds {
        target(s); // the seeds themselves
    }
    while start.elapsed() < budget() {
        let k = rng.gen_range(0..seeds.len());
        let input = match &parsed[k] {
            Some(v) if rng.gen_bool(0.6) => {
                let mut v = v.clone();
                for _ in 0..rng.gen_range(1..3) {
                    mutate_json(&mut rng, &mut v);
                }
                serde_json::to_vec(&v).unwrap()
            }
            _ => {
                let mut d = seeds[k].clone();
                mutate_bytes(&mut rng, &mut d);
                d
            }
        };
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let at = std::env::temp_dir().join(format!("cuzk-fuzz-crash-{name}"));
            std::fs::write(&at, &input).unwrap();
            panic!("fuzz target {name} panicked after {runs} runs; input saved to {}", at.display());
        }
        runs += 1;
    }
    eprintln!("fuzz {name}: {runs} inputs in {:?}, no panic", start.elapsed());
    assert!(runs > 0);
}

#[test]
fn fuzz_config() {
    let seeds = [
        "{}",
        r#"{"backend": "cpu", "synthesis_workers": 4, "prove_queue_depth": 2, "memory_budget_mib": 4096}"#,
        r#"{"verify": false, "params_dir": "/p", "srs_validation": "full", "srs_cache_dir": "/c", "job_ttl_secs": 60, "drain_on_free": true}"#,
        r#"{"max_queued_jobs": 3, "max_queued_input_mib": 1, "vram_budget_mib": 16384, "devices": [0], "backend": "auto"}"#,
    ];
    run("config", seeds.iter().map(|s| s.as_bytes().to_vec()).collect(), true, fuzzing::config);
}

#[test]
fn fuzz_params() {
    run("params", vec![fuzzing::tiny_params_bytes()], false, fuzzing::params);
}

#[test]
fn fuzz_cache() {
    run("cache", vec![fuzzing::tiny_cache_bytes()], false, fuzzing::cache);
}

#[test]
fn fuzz_c1() {
    // The real 2 KiB C1 output (sealing needs no params) and a second sector's.
    let root = cuzk::fixtures::default_root();
    let s = cuzk::fixtures::ensure_sector(&root, common::PROOF, cuzk::fixtures::DEFAULT_SEED).unwrap();
    let (_, other) = common::other_sector();
    run("c1", vec![s.c1_json().unwrap(), other], true, fuzzing::c1);
}

/// Strangers' vanilla proofs, seeded with the real 2 KiB ones: every mutation is an error or a
/// proof, never a panic (which the C ABI would report as PANIC).
#[test]
fn fuzz_vanilla_winning() {
    run("vanilla_winning", fuzzing::kinds().winning.vanilla_proofs.clone(), false, fuzzing::vanilla_winning);
}

#[test]
fn fuzz_vanilla_window() {
    run("vanilla_window", fuzzing::kinds().window.vanilla_proofs.clone(), false, fuzzing::vanilla_window);
}

#[test]
fn fuzz_vanilla_update() {
    run("vanilla_update", fuzzing::kinds().update.vanilla_proofs.clone(), false, fuzzing::vanilla_update);
}
