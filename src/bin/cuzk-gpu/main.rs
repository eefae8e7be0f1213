//! GPU checks and benchmarks of the CUDA backend, in one binary for the GPU machine.
//!
//!   cuzk-gpu probe                       devices, or the reason there are none (exit 0 either way)
//!   cuzk-gpu ceiling [--ntt-log 26]      the device's IMAD, Fp/Fr-multiplication and copy rates, the MSM floor they
//!                                        imply, sppark's NTT against its memory and multiplication floors,
//!                                        the FP64 Fp product alone and beside sppark's (checked against it)
//!   cuzk-gpu msm-bench [--log 20,24,27] [--windows 16,20,21,22]
//!                                        the one-pass big-MSM vs sppark's Pippenger, same input
//!   cuzk-gpu ones-bench [--log 20,24,27] [--chunk-log C]
//!                                        the sums of ones by affine rounds vs sppark's batch addition
//!   cuzk-gpu fixture                     make sure the 2 KiB params and sector exist (CUZK_FIXTURES_DIR)
//!   cuzk-gpu fixture-kinds               the same for the WinningPoSt / WindowPoSt / SnapDeals fixtures
//!   cuzk-gpu stats-2kib                  scalar classes of the 2 KiB witness (no GPU needed)
//!   cuzk-gpu selftest [--min-log N] [--max-log N] [--no-synthetic] [--no-fixture] [--mem-loop N]
//!                                        GPU vs CPU byte identity (synthetic sizes + 2 KiB fixture),
//!                                        part-by-part checks, verification, device-memory loop
//!   cuzk-gpu bench-2kib [--runs N] [--cpu-runs N]
//!                                        warm GPU prove time of the 2 KiB partition with CUDA-event
//!                                        phases (witness classified beforehand or not), CPU backend
//!                                        side by side
//!   cuzk-gpu bench-synthetic --log N [--constraints M] [--runs N] [--distinct D]
//!                            [--late-sparse-runs N]
//!                            [--export-witness DIR] [--export-params FILE] [--stream K]
//!                            [--vram-budget-mib B]
//!                                        a PoRep-like synthetic partition of 2^N constraints
//!                                        (random-point SRS generated here, each vector repeating
//!                                        its first D points if given; classified beforehand or
//!                                        not; the sparse work after stage H if asked); then
//!                                        writes the workload for `supraseal-c2-bench raw`; then K
//!                                        copies proved by two threads at once (throughput),
//!                                        all within B MiB of device memory if given
//!
//!   cuzk-gpu classify-bench [--log N] [--runs R]
//!                                        the witness classification of `prepare` on 2^N PoRep-like
//!                                        aux scalars, host threads only (no GPU needed)
//!
//!   cuzk-gpu bench-e2e [--runs N] [--jobs M] [--synthesis-workers W] [--gpu-lanes L]
//!                                        the whole 2 KiB C2 through the engine with backend "cuda":
//!                                        warm latency over N sequential jobs, then M jobs submitted
//!                                        at once (throughput: synthesis pool feeding the GPU)
//!
//!   cuzk-gpu bench-shaped [--proof P] [--jobs J] [--synthesis-workers W] [--gpu-lanes L,L2...]
//!                         [--vram-budget-mib B,B2...] [--inputs shaped|cc] [--srs random|test] [--recorded 0|1] [--timeline FILE]
//!                         [--sectors S] [--probe P2 --probes N]
//!                                        the engine at a real sector shape (default 32 GiB): shaped
//!                                        C1, random SRS of the exact section sizes, verification off
//!                                        (--inputs cc: a generated CC sector and a generated TEST SRS,
//!                                        verification on; with --srs random the random SRS,
//!                                        verification off); one job's latency, then J jobs at once
//!                                        (throughput, prover busy), for each VRAM budget and lane count
//!                                        listed (an engine each, same SRS and circuit); P of any
//!                                        kind with --inputs cc (S sectors for a PoSt); N jobs of
//!                                        PoSt P2 one after the other while the J jobs run
//!   cuzk-gpu soak-2kib [--jobs N]       N (default 1000) 2 KiB C2 jobs through one CUDA engine, every
//!                                        tenth cancelled: RSS, threads, fds, memory budget and device
//!                                        free memory must stay flat
//!
//! Every subcommand prints "SKIP: no CUDA device: <why>" and exits 0 where it needs a GPU and
//! none is usable. JSON summaries are printed as lines starting with '{'.

#[cfg(feature = "cuda")]
mod bench;
#[cfg(feature = "cuda")]
mod common;
#[cfg(feature = "cuda")]
mod selftest;
#[cfg(feature = "cuda")]
mod shaped;
#[cfg(feature = "cuda")]
mod soak;
#[cfg(feature = "cuda")]
use {bench::*, common::*, selftest::*, shaped::*, soak::*};

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("cuzk-gpu: this binary was built without the `cuda` feature");
    std::process::exit(2);
}

#[cfg(feature = "cuda")]
fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(cuzk::DEFAULT_LOG_FILTER)).init();
    let args = cli::parse("cuzk-gpu", SUBS);
    let ok = match args.sub {
        "probe" => probe(),
        "ceiling" => ceiling(&args),
        "msm-bench" => msm_bench(&args),
        "ones-bench" => ones_bench(&args),
        "fixture" => fixture().is_ok(),
        "fixture-kinds" => fixture_kinds(),
        "stats-2kib" => stats_2kib(),
        "selftest" => selftest(&args),
        "bench-2kib" => bench_2kib(&args),
        "bench-synthetic" => bench_synthetic(&args),
        "classify-bench" => classify_bench(&args),
        "bench-e2e" => bench_e2e(&args),
        "soak-2kib" => soak_2kib(&args),
        "bench-shaped" => bench_shaped(&args),
        other => unreachable!("subcommand {other} is declared but not dispatched"),
    };
    std::process::exit(if ok { 0 } else { 1 });
}

#[path = "../tools_cli/mod.rs"]
mod cli;

/// The witness mix of the synthetic PoRep-like assignments.
#[cfg(feature = "cuda")]
const MIX: [cli::Opt; 4] = [
    cli::real("zero", "fraction of zero scalars (default 0.51)"),
    cli::real("one", "fraction of one scalars (default 0.47)"),
    cli::real("a-density", "A's density (default 0.996)"),
    cli::real("b-density", "B's density (default 0.255)"),
];

/// Every subcommand and its options; the module doc says what each measures.
#[cfg(feature = "cuda")]
static SUBS: &[cli::Sub] = &[
    cli::sub("probe", "devices, or the reason there are none", &[]),
    cli::sub("ceiling", "the device's arithmetic and copy rates, the floors they imply", &[cli::num("ntt-log", "NTT size (default 26)")]),
    cli::sub("msm-bench", "the one-pass big-MSM vs sppark's Pippenger", &[cli::nums("log", "sizes, log2 (default 20,24,27)"), cli::nums("windows", "window sizes (default 16,20,21,22)")]),
    cli::sub("ones-bench", "the sums of ones by affine rounds vs sppark's batch addition", &[cli::nums("log", "sizes, log2 (default 20,24,27)"), cli::num("chunk-log", "chunk size, log2")]),
    cli::sub("fixture", "make sure the 2 KiB params and sector exist", &[]),
    cli::sub("fixture-kinds", "the same for the PoSt and SnapDeals fixtures", &[]),
    cli::sub("stats-2kib", "scalar classes of the 2 KiB witness", &[]),
    cli::sub("selftest", "GPU vs CPU byte identity, part-by-part checks, verification, device-memory loop", &[
        cli::num("min-log", "smallest synthetic size, log2 (default 14)"),
        cli::num("max-log", "largest synthetic size, log2 (default 20)"),
        cli::flag("no-synthetic", "skip the synthetic sizes"),
        cli::flag("no-fixture", "skip the 2 KiB fixture"),
        cli::num("mem-loop", "proofs of the device-memory loop (default 50)"),
    ]),
    cli::sub("bench-2kib", "warm GPU prove time of the 2 KiB partition, CPU backend beside it", &[
        cli::num("runs", "GPU runs (default 5)"),
        cli::num("cpu-runs", "CPU runs (default 2)"),
    ]),
    cli::sub("bench-synthetic", "a PoRep-like synthetic partition of 2^N constraints on a random-point SRS", &[
        cli::num("log", "constraints, log2 (default 20)"),
        cli::num("constraints", "constraints (default 2^log)"),
        cli::num("aux", "aux variables (default: constraints)"),
        cli::num("runs", "runs of each mode (default 3)"),
        cli::num("distinct", "distinct points per SRS vector"),
        cli::num("late-sparse-runs", "runs with the sparse work but ΣH after stage H instead of beside it (default 0)"),
        cli::text("export-witness", "directory for supraseal-c2-bench's workload"),
        cli::text("export-params", "file for supraseal-c2-bench's params"),
        cli::num("stream", "copies proved by two threads at once"),
        cli::num("vram-budget-mib", "each device's VRAM budget (0 = automatic): a smaller card's plan"),
        MIX[0],
        MIX[1],
        MIX[2],
        MIX[3],
    ]),
    cli::sub("classify-bench", "the witness classification on 2^N PoRep-like aux scalars (host threads)", &[cli::num("log", "scalars, log2 (default 24)"), cli::num("runs", "runs (default 5)"), MIX[0], MIX[1], MIX[2], MIX[3]]),
    cli::sub("bench-e2e", "the 2 KiB C2 through the engine on CUDA: latency, then throughput", &[
        cli::num("runs", "sequential jobs (default 5)"),
        cli::num("jobs", "jobs submitted at once (default 16)"),
        cli::num("synthesis-workers", "0 = automatic"),
        cli::num("gpu-lanes", "0 = automatic"),
    ]),
    cli::sub("soak-2kib", "N 2 KiB jobs, every tenth cancelled: resources flat", &[cli::num("jobs", "jobs (default 1000)")]),
    cli::sub("bench-shaped", "the engine at a real sector shape: one job's latency, then J at once, per budget and lane count", &[
        cli::text("proof", "registered proof of any kind, e.g. StackedDrg32GiBV1_1 (default), UpdateStackedDrg32GiBV1, StackedDrgWindow32GiBV1_2"),
        cli::num("jobs", "jobs at once (default 2)"),
        cli::num("sectors", "a generated PoSt's sectors (default 1)"),
        cli::text("probe", "a PoSt proof (e.g. StackedDrgWinning32GiBV1) proved --probes times, one after the other, while the jobs run"),
        cli::num("probes", "how many --probe jobs (default 0)"),
        cli::num("probe-gap-ms", "pause before each probe (default 1000)"),
        cli::num("synthesis-workers", "0 = automatic"),
        cli::nums("gpu-lanes", "lane counts, an engine each (default 0 = automatic)"),
        cli::nums("vram-budget-mib", "VRAM budgets, an engine each (0 = automatic)"),
        cli::text("inputs", "shaped | cc (default shaped)"),
        cli::text("srs", "random | test (default: test for --inputs cc, random for shaped; random turns verification off)"),
        cli::num("recorded", "1: recorded circuit, 0: full synthesis (default 1)"),
        cli::text("timeline", "file for every job's per-partition spans"),
    ]),
];
