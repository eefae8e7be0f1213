//! Generates (or finds) test fixtures: `cuzk-fixture [--root DIR] [--seed N] [--sector-only] [PROOF ...]`.
//! PROOF is a registered seal proof name or filecoin-ffi number (default StackedDrg2KiBV1_1).
//! Prints one JSON line per proof with the params path and the sealed sector.
//! `cuzk-fixture --kinds` instead makes the WinningPoSt / WindowPoSt / SnapDeals fixtures (2 KiB
//! sectors, vanilla proofs, each kind's params) and prints them as one JSON line.
//! `cuzk-fixture cc-sector --proof PROOF [--seed N] --out DIR [--verify]` instead writes a
//! committed-capacity sector's C1 output without sealing (any size; seconds at 32 GiB) as
//! `DIR/c1.json` and `DIR/sector.json` (the sealed fixtures' format); `--verify` then runs
//! filecoin-proofs' vanilla verification over it and prints the times.
//! `cuzk-fixture cc-update --proof UPDATE-PROOF [--seed N] --out DIR [--verify]` writes a
//! SnapDeals update of a committed sector (every partition's vanilla proof and the commitments;
//! any size, about a second at 32 GiB) as `DIR/update.json`; PROOF names an update proof
//! (`UpdateStackedDrg32GiBV1`). `--verify` runs filecoin-proofs' `verify_partition_proofs` over it.
//! `cuzk-fixture srs --proof PROOF [--seed N] --out DIR` writes a generated TEST SRS for PROOF's
//! recorded circuit (seeded toxic waste: anyone who knows the seed can forge proofs under it —
//! never for production) as filecoin-proofs' params and vk files in
//! `DIR/test-srs-seed-N-NOT-FOR-PRODUCTION/`, a params directory the engine loads like any.
//! `cuzk-fixture --shape PROOF ...` instead counts each proof's partition circuit (constraints and
//! the params section sizes, from the blank circuit; no params or sector needed); PROOF may also
//! name a PoSt or update proof there (`StackedDrgWindow32GiBV1_2`, `UpdateStackedDrg32GiBV1`).

use std::path::PathBuf;
use std::process::ExitCode;

#[path = "tools_cli/mod.rs"]
mod cli;

static SUBS: &[cli::Sub] = &[
    cli::Sub {
        name: "",
        help: "the params and a sealed sector of each PROOF (name or number; default StackedDrg2KiBV1_1), one JSON line each",
        opts: &[
            cli::text("root", "fixtures directory (default CUZK_FIXTURES_DIR or /var/tmp/cuzk-fixtures)"),
            cli::num("seed", "seed of the params and the sector"),
            cli::flag("sector-only", "no params"),
            cli::flag("shape", "count each proof's partition circuit instead (PoSt and update proofs too)"),
            cli::flag("kinds", "the WinningPoSt / WindowPoSt / SnapDeals fixtures instead"),
        ],
        positional: Some("[PROOF ...]"),
    },
    cli::sub("cc-sector", "a committed-capacity sector's C1 output without sealing, as DIR/c1.json and DIR/sector.json", &[
        cli::text("proof", "registered seal proof (required)"),
        cli::num("seed", "seed"),
        cli::text("out", "output directory (required)"),
        cli::flag("verify", "then run filecoin-proofs' vanilla verification over it"),
    ]),
    cli::sub("cc-update", "a SnapDeals update of a committed sector without encoding one (its partition vanilla proofs and commitments), as DIR/update.json", &[
        cli::text("proof", "registered update proof, e.g. UpdateStackedDrg32GiBV1 (required)"),
        cli::num("seed", "seed"),
        cli::text("out", "output directory (required)"),
        cli::flag("verify", "then run filecoin-proofs' verify_partition_proofs over it"),
    ]),
    cli::sub("srs", "a generated TEST SRS (seeded toxic waste: never for production) for PROOF's circuit", &[cli::text("proof", "registered seal proof (required)"), cli::num("seed", "seed"), cli::text("out", "output directory (required)")]),
];

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let a = cli::parse("cuzk-fixture", SUBS);
    match a.sub {
        "cc-sector" => return cc_sector(&a),
        "cc-update" => return cc_update(&a),
        "srs" => return test_srs(&a),
        _ => {}
    }
    let root = a.text("root").map_or_else(cuzk::fixtures::default_root, PathBuf::from);
    let seed = a.num("seed", cuzk::fixtures::DEFAULT_SEED);
    let (with_params, shape) = (!a.has("sector-only"), a.has("shape"));
    if a.has("kinds") {
        return kinds(&root, seed);
    }
    let mut proofs = a.positional.clone();
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
            let proof = cuzk::kinds::registry::parse_seal(&p)?;
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

/// `cuzk-fixture cc-sector --proof PROOF [--seed N] --out DIR [--verify]`.
fn cc_sector(a: &cli::Parsed) -> ExitCode {
    let Some(GenArgs { proof, seed, out, verify }) = gen_args(a) else { return ExitCode::from(2) };
    let run = || -> cuzk::error::Result<serde_json::Value> {
        let proof = cuzk::kinds::registry::parse_seal(&proof)?;
        let t = std::time::Instant::now();
        let (c1, mut sector) = cuzk::fixtures::cc_sector_c1(proof, seed)?;
        sector.c1_path = out.join("c1.json");
        let made = t.elapsed().as_secs_f64();
        write_into(&out, "c1.json", &c1)?;
        write_into(&out, "sector.json", &serde_json::to_vec_pretty(&sector).map_err(|e| cuzk::err!(Internal, "{e}"))?)?;
        let mut report = serde_json::json!({ "proof": sector.registered_proof, "seed": seed, "out": out, "c1_bytes": c1.len(), "generate_s": made });
        if verify {
            upstream_check(&mut report, "vanilla proofs", || cuzk::fixtures::verify_c1(&c1, &sector))?;
        }
        Ok(report)
    };
    report("cc-sector", run())
}

/// `cuzk-fixture cc-update --proof UPDATE-PROOF [--seed N] --out DIR [--verify]`.
fn cc_update(a: &cli::Parsed) -> ExitCode {
    let Some(GenArgs { proof, seed, out, verify }) = gen_args(a) else { return ExitCode::from(2) };
    let run = || -> cuzk::error::Result<serde_json::Value> {
        let cuzk::kinds::CircuitId::Update(proof) = cuzk::kinds::CircuitId::parse(&proof)? else {
            return Err(cuzk::err!(InvalidArgument, "{proof} is not an update proof (e.g. UpdateStackedDrg32GiBV1)"));
        };
        let t = std::time::Instant::now();
        let update = cuzk::fixtures::cc_update(proof, seed)?;
        let made = t.elapsed().as_secs_f64();
        write_into(&out, "update.json", &serde_json::to_vec(&update).map_err(|e| cuzk::err!(Internal, "{e}"))?)?;
        let mut report = serde_json::json!({
            "proof": cuzk::kinds::CircuitId::Update(proof).name(), "seed": seed, "out": out,
            "partitions": update.vanilla_proofs.len(), "vanilla_bytes": update.vanilla_proofs.iter().map(Vec::len).sum::<usize>(), "generate_s": made,
        });
        if verify {
            upstream_check(&mut report, "partition proofs", || cuzk::fixtures::verify_update(&update))?;
        }
        Ok(report)
    };
    report("cc-update", run())
}

/// `cuzk-fixture srs --proof PROOF [--seed N] --out DIR`.
fn test_srs(a: &cli::Parsed) -> ExitCode {
    let Some(GenArgs { proof, seed, out, .. }) = gen_args(a) else { return ExitCode::from(2) };
    let run = || -> cuzk::error::Result<serde_json::Value> {
        let proof = cuzk::kinds::registry::parse_seal(&proof)?;
        let sections = cuzk::srs::expected_sections(proof).ok_or_else(|| cuzk::err!(Unsupported, "no section sizes for {proof:?}"))?;
        let hint = cuzk::synth::SizeHint { constraints: sections[1] + 1, inputs: sections[0], aux: sections[2] };
        let t = std::time::Instant::now();
        let r1cs = cuzk::synth::R1cs::record(proof, hint, &|| false)?;
        let recorded = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let params = cuzk::fixtures::test_srs(&r1cs, seed)?;
        let generated = t.elapsed().as_secs_f64();
        let dir = out.join(format!("test-srs-seed-{seed}-NOT-FOR-PRODUCTION"));
        std::fs::create_dir_all(&dir).map_err(|e| cuzk::err!(Internal, "creating {}: {e}", dir.display()))?;
        let file = |name: String| std::fs::File::create(dir.join(&name)).map(std::io::BufWriter::new).map_err(|e| cuzk::err!(Internal, "creating {name}: {e}"));
        let mut f = file(cuzk::kinds::CircuitId::Seal(proof).params_file_name()?)?;
        params.write(&mut f).and_then(|_| std::io::Write::flush(&mut f)).map_err(|e| cuzk::err!(Internal, "writing the params: {e}"))?;
        let mut f = file(cuzk::kinds::CircuitId::Seal(proof).vk_file_name()?)?;
        params.vk.write(&mut f).and_then(|_| std::io::Write::flush(&mut f)).map_err(|e| cuzk::err!(Internal, "writing the vk: {e}"))?;
        std::fs::write(
            dir.join("TEST-SRS-NOT-FOR-PRODUCTION.txt"),
            format!("A test SRS for {proof:?}: its toxic waste comes from seed {seed}. Anyone who knows the seed can forge proofs under it. Never use it in production.\n"),
        )
        .map_err(|e| cuzk::err!(Internal, "writing the notice: {e}"))?;
        Ok(serde_json::json!({
            "warning": "TEST SRS: seeded toxic waste, anyone can forge proofs under it; never for production",
            "proof": cuzk::kinds::registry::seal_name(proof), "seed": seed, "params_dir": dir,
            "record_s": recorded, "generate_s": generated,
        }))
    };
    report("srs", run())
}

/// The options of the generating subcommands (`--proof` and `--out` required). None: the
/// problem was printed.
struct GenArgs {
    proof: String,
    seed: u64,
    out: PathBuf,
    verify: bool,
}

fn gen_args(a: &cli::Parsed) -> Option<GenArgs> {
    match (a.text("proof"), a.text("out")) {
        (Some(proof), Some(out)) => Some(GenArgs {
            proof: proof.to_string(),
            seed: a.num("seed", cuzk::fixtures::DEFAULT_SEED),
            out: PathBuf::from(out),
            verify: a.has("verify"),
        }),
        _ => {
            eprintln!("cuzk-fixture {}: --proof and --out are required\n{}", a.sub, cli::usage("cuzk-fixture", SUBS));
            None
        }
    }
}

/// `bytes` as `dir/name`, the directory made first.
fn write_into(dir: &std::path::Path, name: &str, bytes: &[u8]) -> cuzk::error::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| cuzk::err!(Internal, "creating {}: {e}", dir.display()))?;
    std::fs::write(dir.join(name), bytes).map_err(|e| cuzk::err!(Internal, "writing {}: {e}", dir.join(name).display()))
}

/// `--verify`: filecoin-proofs' vanilla check of the generated `what`, its verdict and time in
/// `report`; a rejection is an error carrying the report.
fn upstream_check(report: &mut serde_json::Value, what: &str, check: impl FnOnce() -> cuzk::error::Result<bool>) -> cuzk::error::Result<()> {
    let t = std::time::Instant::now();
    let ok = check()?;
    report["vanilla_verified"] = ok.into();
    report["verify_s"] = t.elapsed().as_secs_f64().into();
    if !ok {
        return Err(cuzk::err!(Verification, "filecoin-proofs rejects the generated {what}: {report}"));
    }
    Ok(())
}

/// Prints a generating subcommand's JSON report, or its error.
fn report(cmd: &str, res: cuzk::error::Result<serde_json::Value>) -> ExitCode {
    match res {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cuzk-fixture {cmd}: {e}");
            ExitCode::FAILURE
        }
    }
}
