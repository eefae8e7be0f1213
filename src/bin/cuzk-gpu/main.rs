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
//!   cuzk-gpu bench-2kib [--runs N] [--cpu-runs N] [--cpu-b-g2-runs N]
//!                                        warm GPU prove time of the 2 KiB partition with CUDA-event
//!                                        phases (witness classified beforehand or not; B_G2 on CPU threads if
//!                                        asked), CPU backend side by side
//!   cuzk-gpu bench-synthetic --log N [--constraints M] [--runs N] [--cpu-b-g2-runs N] [--distinct D]
//!                            [--sppark-h-runs N] [--xyzz-h-runs N] [--late-sparse-runs N]
//!                            [--export-witness DIR] [--export-params FILE] [--stream K]
//!                                        a PoRep-like synthetic partition of 2^N constraints
//!                                        (random-point SRS generated here, each vector repeating
//!                                        its first D points if given; both B_G2 placements; ΣH
//!                                        also by sppark's MSM or XYZZ bucket sums if asked); then
//!                                        writes the workload for `supraseal-c2-bench raw`; then K
//!                                        copies proved by two threads at once (throughput)
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
//!                         [--vram-budget-mib B,B2...] [--inputs shaped|cc] [--recorded 0|1] [--timeline FILE]
//!                                        the engine at a real sector shape (default 32 GiB): shaped
//!                                        C1, random SRS of the exact section sizes, verification off
//!                                        (--inputs cc: a generated CC sector and a generated TEST SRS,
//!                                        verification on); one job's latency, then J jobs at once
//!                                        (throughput, prover busy), for each VRAM budget and lane count
//!                                        listed (an engine each, same SRS and circuit)
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ok = match args.first().map(String::as_str) {
        Some("probe") => probe(),
        Some("ceiling") => ceiling(&args),
        Some("msm-bench") => msm_bench(&args),
        Some("ones-bench") => ones_bench(&args),
        Some("fixture") => fixture().is_ok(),
        Some("fixture-kinds") => fixture_kinds(),
        Some("stats-2kib") => stats_2kib(),
        Some("selftest") => selftest(&args),
        Some("bench-2kib") => bench_2kib(&args),
        Some("bench-synthetic") => bench_synthetic(&args),
        Some("classify-bench") => classify_bench(&args),
        Some("bench-e2e") => bench_e2e(&args),
        Some("soak-2kib") => soak_2kib(&args),
        Some("bench-shaped") => bench_shaped(&args),
        _ => {
            // The module doc lists every subcommand with its options.
            eprintln!(
                "usage: cuzk-gpu SUBCOMMAND [OPTIONS]\n  subcommands: probe, ceiling, msm-bench, ones-bench, fixture, fixture-kinds, \
                 stats-2kib, selftest, bench-2kib, bench-synthetic, classify-bench, bench-e2e, soak-2kib, bench-shaped\n  \
                 (options: see src/bin/cuzk-gpu/main.rs)"
            );
            std::process::exit(2);
        }
    };
    std::process::exit(if ok { 0 } else { 1 });
}
