//! Benchmarks that print ratios against the named peer measured in the same run.
//!
//!   cuzk-bench p1 [--runs N]   2 KiB C2 warm latency: cuzk engine vs filecoin-proofs
//!                              `seal_commit_phase2` (interleaved), plus SRS load vs the
//!                              decode filecoin-proofs repeats on every proof (P1, P6).
//!   cuzk-bench p6 [--runs N]   SRS only (P6): filecoin-proofs' per-proof decode vs cuzk's
//!                              decode and cuzk's load from the decoded-SRS cache
//!                              (interleaved; the cache in a temp dir, written once first).
//!   cuzk-bench synth [--runs N] one 2 KiB partition's synthesis: upstream's sequential
//!                              StackedCircuit vs cuzk's challenges on all threads (interleaved).
//!   cuzk-bench synth-shaped [--proof P] [--runs N] [--modes upstream,cuzk,recorded,witness,native|both|all]
//!                              one partition of proof P's real shape (default 8 = 32 GiB PoRep,
//!                              from the shaped C1 generator; SnapDeals and PoSt proofs from the
//!                              satisfiable generators): upstream sequential vs cuzk, seconds,
//!                              constraints per core-second, peak RSS.
//!   cuzk-bench kinds [--runs N] [--c2-jobs M] [--no-upstream] [--vram-budget-mib B]  WinningPoSt, WindowPoSt,
//!                              SnapDeals at 2 KiB: cuzk (backend auto) vs filecoin-proofs'
//!                              *_with_vanilla (interleaved), and WinningPoSt latency alone vs
//!                              while M (default 4) C2 jobs fill the engine.
//!   cuzk-bench cpu-post [--proof P] [--runs N]  one PoSt partition (default a 32 GiB WinningPoSt)
//!                              proved on the CPU, the urgent prover's path while the GPU is busy:
//!                              cuzk's CPU backend by phase vs bellperson's create_proof_batch
//!                              (interleaved, same r, s, byte-identical); generated inputs, test SRS.
//!   cuzk-bench msm [--runs N] [--windows 14,16]  the CPU's ΣH over the real 2 KiB h points:
//!                              AVX-512 IFMA Pippenger vs blst's (interleaved, equal results).
//!   cuzk-bench soak [--jobs N] [--constraints K]  N proofs (default 1000) of a synthetic
//!                              K-constraint circuit (default 1024) through one engine, every
//!                              tenth cancelled: RSS, threads, open files and the memory budget
//!                              sampled every 100 jobs must stay flat.
//!
//! Fixtures come from the cache (`CUZK_FIXTURES_DIR`, default /var/tmp/cuzk-fixtures) and are
//! generated when missing. Prints a JSON summary as the last line.

use std::time::{Duration, Instant};

use bellperson::groth16::ParameterSource;
use blstrs::Bls12;
use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use cuzk::fixtures;
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::srs::{Srs, Validation};

mod cpu_post;
mod kinds;
mod msm;
#[path = "../tools_cli/mod.rs"]
mod cli;
mod sample;
mod shaped;
mod soak;

const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// What filecoin-proofs does with the SRS on every proof: map the file, then decode every
/// point of h, l, a, b_g1, b_g2 from the map (bellperson `MappedParameters`).
fn stock_decode(path: &std::path::Path) -> Duration {
    let t = Instant::now();
    let mapped = storage_proofs_core::parameter_cache::read_cached_params(path).expect("read_cached_params");
    let p: &bellperson::groth16::MappedParameters<Bls12> = &mapped;
    let n = ParameterSource::<Bls12>::get_vk(&p, 0).expect("vk").ic.len();
    let h = ParameterSource::<Bls12>::get_h(&p, 0).expect("h");
    let l = ParameterSource::<Bls12>::get_l(&p, 0).expect("l");
    let a = ParameterSource::<Bls12>::get_a(&p, n, 0).expect("a");
    let b1 = ParameterSource::<Bls12>::get_b_g1(&p, n, 0).expect("b_g1");
    let b2 = ParameterSource::<Bls12>::get_b_g2(&p, n, 0).expect("b_g2");
    let took = t.elapsed();
    drop((h, l, a, b1, b2));
    took
}

fn p1(runs: usize) {
    let root = fixtures::default_root();
    let params_dir = fixtures::params_dir(&root);
    // filecoin-proofs reads its parameter cache location from the environment, once.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
    let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED).expect("params");
    let sector = fixtures::ensure_sector(&root, PROOF, fixtures::DEFAULT_SEED).expect("sector");
    let c1 = sector.c1_json().expect("c1");
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    println!("machine: {cores} cores; fixture {}; {runs} runs each, interleaved", params.display());

    let engine = Engine::new(EngineConfig { params_dir: Some(params_dir.clone()), ..Default::default() }).expect("engine");
    let srs = engine.srs_load(PROOF, None).expect("srs load");
    let cuzk_load = srs.load_time.as_secs_f64();
    let stock_decode_s = stock_decode(&params).as_secs_f64();
    let unchecked = cuzk::srs::Srs::load(PROOF, &params, Validation::None).expect("load").load_time.as_secs_f64();
    println!(
        "SRS: cuzk load (on_curve) {cuzk_load:.2}s, cuzk load (none) {unchecked:.2}s; filecoin-proofs per-proof decode {stock_decode_s:.2}s; ratio {:.3}",
        cuzk_load / stock_decode_s
    );

    let c1_stock: filecoin_proofs_api::seal::SealCommitPhase1Output = serde_json::from_slice(&c1).expect("c1 json");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let bar = cuzk::progress::bar::steps(runs as u64, "P1: runs (cuzk, then filecoin-proofs)");
    for i in 0..runs {
        let t = Instant::now();
        let id = engine
            .submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None })
            .expect("submit");
        let snap = engine.wait(id, None).expect("wait");
        let wall = t.elapsed().as_secs_f64();
        assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
        let r = snap.result.unwrap();
        bar.suspend(|| println!("run {i}: cuzk  {wall:7.2}s  {}", cuzk::engine::result_json(&r)));
        ours.push(wall);

        let t = Instant::now();
        let out = filecoin_proofs_api::seal::seal_commit_phase2(c1_stock.clone(), sector.prover_id, sector.sector_id.into())
            .expect("stock seal_commit_phase2");
        let wall = t.elapsed().as_secs_f64();
        assert_eq!(out.proof.len(), 192);
        bar.suspend(|| println!("run {i}: stock {wall:7.2}s"));
        theirs.push(wall);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (mo, mt) = (median(&ours), median(&theirs));
    println!("P1 warm latency: cuzk median {mo:.2}s, filecoin-proofs median {mt:.2}s, ratio {:.3} (target <= 0.25)", mo / mt);
    println!(
        "{}",
        serde_json::json!({
            "bench": "p1", "cores": cores, "runs": runs,
            "cuzk_s": ours, "stock_s": theirs, "cuzk_median_s": mo, "stock_median_s": mt, "ratio": mo / mt,
            "srs_load_s": cuzk_load, "srs_load_unchecked_s": unchecked, "stock_decode_s": stock_decode_s,
            "srs_ratio": cuzk_load / stock_decode_s,
        })
    );
}

fn p6(runs: usize) {
    let root = fixtures::default_root();
    let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED).expect("params");
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("cuzk-bench-srs-cache-{}", std::process::id()));
    let first = Srs::load_with(PROOF, &params, Validation::OnCurve, Some(&dir)).expect("load");
    first.wait_cache_write().expect("cache write");
    let cache_file = cuzk::srs::cache::path_for(&dir, &params);
    let cache_bytes = std::fs::metadata(&cache_file).map(|m| m.len()).unwrap_or(0);
    println!(
        "machine: {cores} cores; {} ({} MiB); cache written ({} MiB); {runs} runs each, interleaved",
        params.display(),
        first.file_bytes >> 20,
        cache_bytes >> 20
    );
    drop(first);
    // One reference copy stays resident for the equality checks; every measured load is dropped
    // before the next (a production process holds one copy).
    let reference = Srs::load(PROOF, &params, Validation::OnCurve).expect("decode").params;
    let load = |v: Validation, cache: bool| -> f64 {
        let s = Srs::load_with(PROOF, &params, v, cache.then_some(dir.as_path())).expect("load");
        assert_eq!(s.from_cache, cache, "cache use");
        assert!(s.params == reference, "parameters differ (validation {}, cache {cache})", v.name());
        s.load_time.as_secs_f64()
    };
    let (mut stock, mut decode, mut trusted, mut cold, mut hot) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        let s = stock_decode(&params).as_secs_f64();
        let d = load(Validation::OnCurve, false);
        let n = load(Validation::None, false);
        // The cache read from disk (its pages dropped from the page cache first), then again
        // with the file in the page cache.
        drop_from_page_cache(&cache_file);
        let c = load(Validation::OnCurve, true);
        let h = load(Validation::OnCurve, true);
        println!(
            "run {i}: filecoin-proofs decode {s:.2}s, cuzk decode on_curve {d:.2}s / none {n:.2}s, cuzk cached load from disk {c:.2}s / page cache {h:.2}s"
        );
        stock.push(s);
        decode.push(d);
        trusted.push(n);
        cold.push(c);
        hot.push(h);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (ms, md, mn, mc, mh) = (median(&stock), median(&decode), median(&trusted), median(&cold), median(&hot));
    println!(
        "P6 SRS: filecoin-proofs per-proof decode {ms:.2}s; cuzk decode on_curve {md:.2}s (ratio {:.3}), none {mn:.2}s (ratio {:.3}); \
         cuzk cached load from disk {mc:.2}s (ratio {:.3}), from the page cache {mh:.2}s (ratio {:.3}; target <= 0.2)",
        md / ms,
        mn / ms,
        mc / ms,
        mh / ms
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "p6", "cores": cores, "runs": runs, "stock_decode_s": stock, "cuzk_decode_s": decode,
            "cuzk_decode_none_s": trusted, "cuzk_cached_disk_s": cold, "cuzk_cached_hot_s": hot,
            "decode_ratio": md / ms, "cached_disk_ratio": mc / ms, "cached_hot_ratio": mh / ms,
        })
    );
}

/// Ask the kernel to drop `path`'s clean pages from the page cache (the next read goes to disk).
fn drop_from_page_cache(path: &std::path::Path) {
    use std::os::unix::io::AsRawFd;
    if let Ok(f) = std::fs::File::open(path) {
        // SAFETY: advisory call on a descriptor we own.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
}

fn synth(runs: usize) {
    let root = fixtures::default_root();
    let sector = fixtures::ensure_sector(&root, PROOF, fixtures::DEFAULT_SEED).expect("sector");
    let inputs = cuzk::kinds::porep::parse_c1(&sector.c1_json().expect("c1"), &sector.prover_id, sector.sector_id).expect("c1");
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    println!("machine: {cores} cores; 2 KiB partition 0; {runs} runs each, interleaved");
    let hint = cuzk::synth::SizeHint::default();
    let (mut seq, mut par) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let t = Instant::now();
        let a = cuzk::synth::upstream::of(&*inputs.circuits).expect("upstream paths").synthesize_sequential(0, hint).expect("sequential");
        let s = t.elapsed().as_secs_f64();
        drop(a);
        let t = Instant::now();
        let b = inputs.circuits.synthesize(0, hint).expect("parallel");
        let p = t.elapsed().as_secs_f64();
        println!("run {i}: sequential {s:.3}s, challenges in parallel {p:.3}s ({} constraints)", b.num_constraints());
        drop(b);
        seq.push(s);
        par.push(p);
    }
    let (ms, mp) = (median(&seq), median(&par));
    println!("synthesis: sequential median {ms:.3}s, parallel median {mp:.3}s, ratio {:.3}", mp / ms);
    println!(
        "{}",
        serde_json::json!({"bench": "synth", "cores": cores, "runs": runs, "sequential_s": seq, "parallel_s": par, "ratio": mp / ms})
    );
}

/// The number after `name` (None when `name` is absent); a missing or unparsable value ends the
/// program with status 2 naming it (never a silent default).
const RUNS: cli::Opt = cli::num("runs", "measured runs of each side (default 3)");
static SUBS: &[cli::Sub] = &[
    cli::sub("p1", "2 KiB C2 warm latency: cuzk vs filecoin-proofs' seal_commit_phase2; SRS load", &[RUNS]),
    cli::sub("p6", "SRS only: filecoin-proofs' decode vs cuzk's decode and decoded-SRS cache", &[RUNS]),
    cli::sub("synth", "one 2 KiB partition's synthesis: upstream sequential vs cuzk", &[RUNS]),
    cli::sub("synth-shaped", "one partition of a real shape: upstream sequential vs cuzk (seconds, constraints/core-s, RSS)", &[
        cli::text("proof", "registered proof of any kind, name or seal number (default 8 = 32 GiB PoRep; e.g. UpdateStackedDrg32GiBV1, StackedDrgWindow32GiBV1_2)"),
        RUNS,
        cli::text("modes", "upstream,cuzk,recorded,witness,native | both | all (default both)"),
    ]),
    cli::sub("kinds", "WinningPoSt, WindowPoSt, SnapDeals at 2 KiB vs filecoin-proofs; WinningPoSt under C2 load", &[RUNS, cli::num("c2-jobs", "C2 jobs filling the engine (default 4)"), cli::flag("no-upstream", "skip filecoin-proofs' side"), cli::num("vram-budget-mib", "the engine's VRAM budget (default 0 = automatic): a smaller card's plan")]),
    cli::sub("cpu-post", "one PoSt partition proved on the CPU (the urgent prover's path while the GPU is busy): cuzk by phase vs bellperson, byte-identical", &[
        RUNS,
        cli::text("proof", "a PoSt proof (default StackedDrgWinning32GiBV1)"),
    ]),
    cli::sub("msm", "the CPU's ΣH over the 2 KiB h points: AVX-512 IFMA Pippenger vs blst", &[RUNS, cli::nums("windows", "window sizes to try (default: the tuned one)")]),
    cli::sub("soak", "N synthetic proofs through one engine, every tenth cancelled: resources must stay flat", &[cli::num("jobs", "proofs (default 1000)"), cli::num("constraints", "constraints per circuit (default 1024)")]),
];

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(cuzk::DEFAULT_LOG_FILTER)).init();
    let a = cli::parse("cuzk-bench", SUBS);
    let runs = a.num("runs", 3usize);
    match a.sub {
        "p1" => p1(runs),
        "p6" => p6(runs),
        "synth" => synth(runs),
        "synth-shaped" => match cuzk::kinds::CircuitId::parse(a.text("proof").unwrap_or("8")) {
            Ok(circuit) => shaped::run(circuit, runs, a.text("modes").unwrap_or("both")),
            Err(e) => {
                eprintln!("cuzk-bench synth-shaped --proof: {e}");
                std::process::exit(2);
            }
        },
        "kinds" => kinds::run(runs, a.num("c2-jobs", 4), !a.has("no-upstream"), a.num("vram-budget-mib", 0)),
        "cpu-post" => match cuzk::kinds::CircuitId::parse(a.text("proof").unwrap_or("StackedDrgWinning32GiBV1")) {
            Ok(cuzk::kinds::CircuitId::PoSt(proof)) => cpu_post::run(proof, runs),
            Ok(other) => {
                eprintln!("cuzk-bench cpu-post --proof: {} is not a PoSt proof", other.name());
                std::process::exit(2);
            }
            Err(e) => {
                eprintln!("cuzk-bench cpu-post --proof: {e}");
                std::process::exit(2);
            }
        },
        "msm" => msm::run(runs, &a.text("windows").map(|_| a.nums("windows", "")).unwrap_or_default()),
        "soak" => soak::run(a.num("jobs", 1000), a.num("constraints", 1024)),
        other => unreachable!("subcommand {other} is declared but not dispatched"),
    }
}
