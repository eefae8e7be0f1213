//! Generates (or finds) test fixtures: `cuzk-fixture [--root DIR] [--seed N] [--sector-only] [PROOF ...]`.
//! PROOF is a registered seal proof name or filecoin-ffi number (default StackedDrg2KiBV1_1).
//! Prints one JSON line per proof with the params path and the sealed sector.
//! `cuzk-fixture --kinds` instead makes the WinningPoSt / WindowPoSt / SnapDeals fixtures (2 KiB
//! sectors, vanilla proofs, each kind's params) and prints them as one JSON line.
//! `cuzk-fixture --shape PROOF ...` instead counts each proof's partition circuit (constraints and
//! the params section sizes, from the blank circuit; no params or sector needed); PROOF may also
//! name a PoSt or update proof there (`StackedDrgWindow32GiBV1_2`, `UpdateStackedDrg32GiBV1`).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let mut root = cuzk::fixtures::default_root();
    let mut seed = cuzk::fixtures::DEFAULT_SEED;
    let mut proofs = Vec::new();
    let mut with_params = true;
    let mut shape = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--root" => root = PathBuf::from(args.next().unwrap_or_default()),
            "--sector-only" => with_params = false,
            "--shape" => shape = true,
            "--kinds" => return kinds(&root, seed),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(seed),
            "-h" | "--help" => {
                println!("usage: cuzk-fixture [--root DIR] [--seed N] [--sector-only | --shape] [PROOF ...]");
                return ExitCode::SUCCESS;
            }
            p => proofs.push(p.to_string()),
        }
    }
    if proofs.is_empty() {
        proofs.push("StackedDrg2KiBV1_1".into());
    }
    for p in proofs {
        let run = || -> cuzk::error::Result<String> {
            if shape {
                let circuit = cuzk::kinds::CircuitId::parse(&p)?;
                let t = std::time::Instant::now();
                let c = cuzk::synth::shape::count_circuit(circuit)?;
                return Ok(serde_json::json!({
                    "proof": circuit.name(),
                    "constraints": c.constraints,
                    "sections": { "ic": c.ic, "h": c.h, "l": c.l, "a": c.a, "b_g1": c.b, "b_g2": c.b },
                    "count_seconds": t.elapsed().as_secs_f64(),
                })
                .to_string());
            }
            let proof = cuzk::registry::parse(&p)?;
            let params = if with_params { Some(cuzk::fixtures::ensure_params(&root, proof, seed)?) } else { None };
            let sector = cuzk::fixtures::ensure_sector(&root, proof, seed)?;
            Ok(serde_json::json!({ "params": params, "params_dir": cuzk::fixtures::params_dir(&root), "sector": sector }).to_string())
        };
        match run() {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("cuzk-fixture: {p}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn kinds(root: &std::path::Path, seed: u64) -> ExitCode {
    let run = || -> cuzk::error::Result<String> {
        let k = cuzk::fixtures::ensure_kind_fixtures_and_params(root, seed)?;
        let mut v = serde_json::to_value(&k).map_err(|e| cuzk::err!(Internal, "{e}"))?;
        v["params_dir"] = serde_json::json!(cuzk::fixtures::params_dir(root));
        Ok(v.to_string())
    };
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cuzk-fixture --kinds: {e}");
            ExitCode::FAILURE
        }
    }
}
