//! `bench-2kib`, `bench-synthetic`, `bench-e2e`: timings with CUDA-event phases.

use crate::common::*;

/// One GPU proof of a copy of `asg`, prepared first (that time pushed to `prep`) when asked, as
/// the engine's synthesis threads do; returns the proof and the seconds `prove` took.
fn timed_prove(
    gpu: &CudaBackend,
    srs: &Srs,
    asg: &Assignment,
    (r, s): (Scalar, Scalar),
    prep: Option<&mut Vec<f64>>,
) -> (cuzk::prover::PartitionProof, f64) {
    let mut a = synthetic::clone_assignment(asg);
    if let Some(took) = prep {
        took.push(gpu.prepare_now(&mut a).expect("preparing").as_secs_f64());
    }
    let t = Instant::now();
    let p = gpu.prove(srs, a, r, s).expect("gpu proof");
    (p, t.elapsed().as_secs_f64())
}

/// Field multiplications of a Pippenger MSM over `n` 255-bit scalars at its best window: per
/// window one XYZZ mixed addition per scalar (8M + 2S) and the bucket sums (two full XYZZ
/// additions, 12M + 2S each, per bucket). A lower bound of the work: no precomputation, no
/// signed digits, no sorting counted.
fn pippenger_fp_muls(n: f64) -> (f64, u32) {
    (10..=22u32)
        .map(|c| {
            let windows = (255 + c - 1) / c;
            (f64::from(windows) * (n * 10.0 + f64::from(1u32 << c) * 28.0), c)
        })
        .fold((f64::INFINITY, 0), |best, x| if x.0 < best.0 { x } else { best })
}

/// `ceiling`: the device's integer multiply-add, Fp and Fr multiplication and copy rates, what they
/// make the floor of a G1 MSM at 2^24 and 2^27 (compare with bench-synthetic's gpu_msm_h), and
/// sppark's NTT (`--ntt-log`, default 26) against two floors: one read + write sweep of the vector at the copy rate,
/// and its (n/2)·log n butterfly multiplications at the Fr rate; then the FP64 Fp product
/// (cuda/fp64.cuh) alone and beside sppark's, after checking it against sppark's (fails if it differs);
/// and the NTTs with their passes split evenly (cuda/ntt_split.cuh), checked against sppark's the same way.
pub(crate) fn ceiling(args: &Parsed) -> bool {
    let Some(gpu) = backend() else { return true };
    for i in 0..gpu.device_count() {
        let name = gpu.device_info(i).map(|d| d.name).unwrap_or_default();
        match gpu.ceiling(i, args.num("ntt-log", 26)) {
            Ok(c) => {
                let (imad, fp) = (c.imad, c.fp_mul);
                let floor = |log: u32| {
                    let (muls, c) = pippenger_fp_muls(f64::from(1u32 << log));
                    serde_json::json!({ "log_n": log, "window_bits": c, "fp_muls": muls, "floor_s": muls / fp })
                };
                let lg = c.ntt_lg;
                let n = f64::from(1u32 << lg);
                let sweep_s = 2.0 * n * 32.0 / c.copy_bytes;
                let mul_s = n / 2.0 * f64::from(lg) / c.fr_mul;
                println!(
                    "device {i} ({name}): {:.3e} IMAD/s, {:.3e} Fp mul/s ({:.0} IMAD per Fp mul at those rates), {:.3e} Fr mul/s, copy {:.0} GB/s",
                    imad,
                    fp,
                    imad / fp,
                    c.fr_mul,
                    c.copy_bytes / 1e9
                );
                println!(
                    "fp64 Fp products: {:.3e}/s alone ({:.2}x sppark's), {:.3e}/s half sppark's and half FP64 at once ({:.2}x); {} threads' FP64 chains differed from sppark's{}",
                    c.fp64_mul,
                    c.fp64_mul / fp,
                    c.mixed_mul,
                    c.mixed_mul / fp,
                    c.fp64_mismatches,
                    if c.fp64_mismatches == 0 { "" } else { " (FAIL: the FP64 product is wrong)" }
                );
                let forms = ["inverse NR", "coset forward RN", "coset inverse NR"];
                for ((form, s), even) in forms.iter().zip(c.ntt_s).zip(c.ntt_even_s) {
                    println!(
                        "ntt 2^{lg} {form}: {:.2} ms = {:.1} read+write sweeps ({:.2} ms each), {:.1}x its butterfly multiplications ({:.2} ms); passes split evenly {:.2} ms ({:.3}x)",
                        s * 1e3,
                        s / sweep_s,
                        sweep_s * 1e3,
                        s / mul_s,
                        mul_s * 1e3,
                        even * 1e3,
                        even / s
                    );
                }
                println!(
                    "ntt 2^{lg} split evenly: {} elements differ from sppark's after the three forms{}",
                    c.ntt_even_mismatches,
                    if c.ntt_even_mismatches == 0 { "" } else { " (FAIL)" }
                );
                println!(
                    "{}",
                    serde_json::json!({ "bench": "ceiling", "device": i, "name": name, "imad_per_s": imad, "fp_mul_per_s": fp,
                        "fr_mul_per_s": c.fr_mul, "copy_bytes_per_s": c.copy_bytes, "ntt_log": lg, "ntt_s": c.ntt_s,
                        "ntt_sweep_s": sweep_s, "ntt_mul_s": mul_s, "msm_floor": [floor(24), floor(27)],
                        "fp64_mul_per_s": c.fp64_mul, "mixed_mul_per_s": c.mixed_mul, "fp64_mismatches": c.fp64_mismatches,
                        "ntt_even_s": c.ntt_even_s, "ntt_even_mismatches": c.ntt_even_mismatches })
                );
                if c.fp64_mismatches != 0 || c.ntt_even_mismatches != 0 {
                    return false;
                }
            }
            Err(e) => {
                println!("FAIL: device {i}: {e}");
                return false;
            }
        }
    }
    true
}

/// `ones-bench --log 20,27 [--chunk-log C]`: the sums of ones by affine rounds (cuda/sum_ones.cuh)
/// against sppark's batch addition, over the bases (2^16 distinct random ones repeated) whose bit
/// is set in a pseudo-random bitmap of 2^log bits; our passes of at most 2^C entries if given.
/// Both times and whether the sums agree.
pub(crate) fn ones_bench(args: &Parsed) -> bool {
    let Some(gpu) = backend() else { return true };
    let logs = args.nums::<u32>("log", "20,24,27");
    let chunk = if args.has("chunk-log") { 1usize << args.num::<u32>("chunk-log", 0) } else { 0 };
    let points = cuzk::prover::cuda_synthetic::g1_points(1 << 16, 9);
    let mut ok = true;
    for log in logs {
        match gpu.ones_bench(0, &points, 1 << log, chunk, 0x0e5 + u64::from(log)) {
            Ok(((ours, ours_ms), (peer, peer_ms))) => {
                let same = group::Curve::to_affine(&ours) == group::Curve::to_affine(&peer);
                ok &= same;
                println!(
                    "ones 2^{log}: sppark's batch addition {peer_ms:.2} ms, affine rounds {ours_ms:.2} ms ({:.3}x), {}",
                    ours_ms / peer_ms,
                    if same { "same sum" } else { "FAIL: sums differ" }
                );
                println!(
                    "{}",
                    serde_json::json!({ "bench": "ones", "log_n": log, "max_chunk": chunk, "sppark_ms": peer_ms, "ours_ms": ours_ms, "same": same })
                );
            }
            Err(e) => {
                println!("FAIL: ones 2^{log}: {e}");
                ok = false;
            }
        }
    }
    ok
}

/// `msm-bench --log 24,27 --windows 20,21,22`: the one-pass big-MSM (cuda/msm_big.cuh) against
/// sppark's Pippenger on the same input (2^16 distinct random bases repeated, device-made
/// scalars), per size: both times and whether the sums agree. A window given as c + 100·flags:
/// flag 8 sums the buckets by affine rounds (ΣH's path: 822 = c 22 so), a plain c by XYZZ
/// additions alone (the big-MSM's fallback where the device cannot lend the rounds' buffers);
/// flag 64 keeps the scalars in Montgomery form, reduced in every window's digits (7222 = 822
/// so); without it each run sums a copy taken as spent, out of Montgomery form once, as proofs
/// do. The variants that lost (buckets in natural order, other block shapes, other K) are gone:
/// their numbers are in BENCHMARKS.md and cuda/HISTORY.md.
pub(crate) fn msm_bench(args: &Parsed) -> bool {
    let Some(gpu) = backend() else { return true };
    let (logs, windows) = (args.nums::<u32>("log", "20,24,27"), args.nums::<u32>("windows", "16,20,21,22"));
    let points = cuzk::prover::cuda_synthetic::g1_points(1 << 16, 7);
    let mut ok = true;
    for log in logs {
        let n = 1usize << log;
        match gpu.msm_bench(0, &points, n, &windows, 0x5eed + u64::from(log)) {
            Ok(((peer, peer_ms), ours)) => {
                for (&c, (sum, ms, events)) in windows.iter().zip(&ours) {
                    let same = group::Curve::to_affine(sum) == group::Curve::to_affine(&peer);
                    ok &= same;
                    println!(
                        "msm 2^{log}: sppark {peer_ms:.1} ms, one-pass window {c} {ms:.1} ms ({:.3}x; CUDA events {:.1} ms: first sort {:.1}, sorts {:.1}, bucket sums {:.1}; host {:.1} before, {:.1} after), {}",
                        ms / peer_ms,
                        events[0],
                        events[1],
                        events[2],
                        events[3],
                        events[4],
                        events[5],
                        if same { "same sum" } else { "FAIL: sums differ" }
                    );
                    println!(
                        "{}",
                        serde_json::json!({ "bench": "msm", "log_n": log, "window": c, "sppark_ms": peer_ms, "ours_ms": ms,
                            "ours_event_ms": events[0], "first_sort_ms": events[1], "sorts_ms": events[2], "sums_ms": events[3],
                            "host_before_ms": events[4], "host_after_ms": events[5], "same": same })
                    );
                }
            }
            Err(e) => {
                println!("FAIL: msm 2^{log}: {e}");
                ok = false;
            }
        }
    }
    ok
}

pub(crate) fn bench_e2e(args: &Parsed) -> bool {
    let runs: usize = args.num("runs", 5);
    let jobs: usize = args.num("jobs", 16);
    let workers: usize = args.num("synthesis-workers", 0);
    let lanes: usize = args.num("gpu-lanes", 0);
    if backend().is_none() {
        return true;
    }
    let res = (|| -> cuzk::error::Result<serde_json::Value> {
        let f = fixture()?;
        let engine = Engine::new(EngineConfig {
            backend: "cuda".into(),
            params_dir: Some(f.params_dir.clone()),
            synthesis_workers: workers,
            gpu_lanes: lanes,
            prove_queue_depth: 2,
            ..Default::default()
        })?;
        let srs = engine.srs_load(PROOF, None)?;
        println!("SRS load {:.2}s; synthesis workers {}", srs.load_time.as_secs_f64(), engine.config().synthesis_threads());
        let submit = || f.submit(&engine);
        let finish = |id| -> cuzk::error::Result<std::sync::Arc<cuzk::engine::JobResult>> {
            let snap = engine.wait(id, None)?;
            match (snap.state, snap.result) {
                (JobState::Done, Some(r)) if r.verified => Ok(r),
                _ => Err(snap.error.unwrap_or_else(|| cuzk::err!(Internal, "job ended in {:?}", snap.state))),
            }
        };
        let t = Instant::now();
        finish(submit()?)?;
        println!("first job (VRAM upload, JIT-free sm_90): {:.3}s", t.elapsed().as_secs_f64());
        let (mut wall, mut synth, mut prove) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..runs {
            let t = Instant::now();
            let r = finish(submit()?)?;
            wall.push(t.elapsed().as_secs_f64());
            synth.push(r.timings.synthesis.as_secs_f64());
            prove.push(r.timings.prove.as_secs_f64());
            println!("run {i}: {:.3}s {}", wall[i], cuzk::engine::result_json(&r));
        }
        println!(
            "e2e warm latency median {:.3}s (synthesis {:.3}s, prove {:.3}s)",
            median(&wall),
            median(&synth),
            median(&prove)
        );
        let t = Instant::now();
        let ids = (0..jobs).map(|_| submit()).collect::<cuzk::error::Result<Vec<_>>>()?;
        for id in ids {
            finish(id)?;
        }
        let stream = t.elapsed().as_secs_f64();
        println!("stream: {jobs} jobs in {stream:.2}s = {:.3}s per proof", stream / jobs as f64);
        // Each device's and each prover lane's own account of the run (busy time, partitions).
        let status: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap_or_default();
        println!("devices {}\nprover lanes {}", status["devices"], status["prover_lanes"]);
        Ok(serde_json::json!({
            "bench": "e2e-2kib-cuda", "runs": runs, "wall_s": wall, "synthesis_s": synth, "prove_s": prove,
            "median_wall_s": median(&wall), "median_prove_s": median(&prove),
            "stream_jobs": jobs, "stream_s": stream, "stream_per_proof_s": stream / jobs as f64,
            "synthesis_workers": engine.config().synthesis_threads(), "gpu_lanes": lanes,
            "devices": status["devices"], "prover_lanes": status["prover_lanes"],
        }))
    })();
    match res {
        Ok(v) => {
            println!("{v}");
            true
        }
        Err(e) => {
            println!("FAIL bench-e2e: {e}");
            false
        }
    }
}

pub(crate) fn bench_2kib(args: &Parsed) -> bool {
    let runs: usize = args.num("runs", 5);
    let cpu_runs: usize = args.num("cpu-runs", 2);
    let Some(gpu) = backend() else { return true };
    let Some((_f, srs, asg, synth_s)) = fixture_2kib("") else { return false };
    println!("SRS load {:.2}s, synthesis {synth_s:.2}s", srs.load_time.as_secs_f64());
    print_stats(&asg);
    let (r, s) = rs(3);
    let t = Instant::now();
    let first = gpu.prove(&srs, synthetic::clone_assignment(&asg), r, s).expect("gpu proof");
    println!(
        "gpu first (SRS upload to VRAM included): {:.3}s  {}",
        t.elapsed().as_secs_f64(),
        phases_ms(&first.phases)
    );
    let (mut inline_s, mut gpu_s, mut prep_s) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = PhaseTimings::default();
    // (classified beforehand as the engine's synthesis threads do, samples); the engine's path
    // last: it is `gpu_s` and what `last` shows.
    let modes = [(false, &mut inline_s), (true, &mut gpu_s)];
    for (prep, out) in modes {
        for i in 0..runs {
            let (p, wall) = timed_prove(&gpu, &srs, &asg, (r, s), prep.then_some(&mut prep_s));
            assert_eq!(bytes(&p.proof), bytes(&first.proof), "GPU proofs with equal r, s differ");
            println!(
                "gpu run {i} ({}): {wall:.3}s  {}",
                if prep { "prepared" } else { "unprepared" },
                phases_ms(&p.phases)
            );
            out.push(wall);
            last = p.phases;
        }
    }
    let mut cpu_s = Vec::new();
    let mut identical = true;
    for i in 0..cpu_runs {
        let a = synthetic::clone_assignment(&asg);
        let t = Instant::now();
        let p = CpuBackend::default().prove(&srs, a, r, s).expect("cpu proof");
        let wall = t.elapsed().as_secs_f64();
        identical &= bytes(&p.proof) == bytes(&first.proof);
        println!("cpu run {i}: {wall:.3}s  {}", phases_ms(&p.phases));
        cpu_s.push(wall);
    }
    let verified = verify_proof(&srs.pvk, &first.proof, &asg.input[1..]).unwrap_or(false);
    let (mg, mc) = (median(&gpu_s), median(&cpu_s));
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let dev = gpu.device_info(0).map(|d| d.name).unwrap_or_default();
    println!(
        "2 KiB partition prove (warm, synthesized witness in memory): gpu median {mg:.3}s prepared (as in \
         the engine: classified beforehand, {:.3}s); unprepared {:.3}s; \
         cpu median {mc:.3}s, speedup {:.1}x, identical {identical}, verified {verified}",
        median(&prep_s),
        median(&inline_s),
        mc / mg
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "gpu-2kib", "device": dev, "cores": cores, "runs": runs,
            "gpu_s": gpu_s, "prepare_s": prep_s, "gpu_unprepared_s": inline_s, "gpu_unprepared_median_s": median(&inline_s),
            "cpu_s": cpu_s, "gpu_median_s": mg, "cpu_median_s": mc,
            "synthesis_s": synth_s, "identical": identical, "verified": verified,
            "gpu_phases_ms_last": phases_json(&last),
        })
    );
    identical && verified
}

/// The scalar mix of a PoRep-like synthetic witness: shares measured on the 2 KiB PoRep
/// partition (cuzk-gpu stats-2kib; see cuda/NOTES.md), each overridable.
fn witness_mix(args: &Parsed) -> WitnessMix {
    WitnessMix {
        zero: args.num("zero", 0.51),
        one: args.num("one", 0.47),
        a_density: args.num("a-density", 0.996),
        b_density: args.num("b-density", 0.255),
    }
}

/// `classify-bench`: the witness classification the engine's synthesis threads run before a
/// partition reaches the GPU (`prepare`), on a PoRep-like witness of 2^N aux scalars, on this
/// host's threads (no device needed). Two builds side by side give a same-run ratio.
pub(crate) fn classify_bench(args: &Parsed) -> bool {
    let log: u32 = args.num("log", 24);
    let runs: usize = args.num("runs", 5);
    let t = Instant::now();
    let asg = synthetic::porep_like_assignment(1, 328, 1 << log, witness_mix(args), 42);
    println!("witness 2^{log} aux scalars in {:.1}s on {} threads", t.elapsed().as_secs_f64(), rayon::current_num_threads());
    print_stats(&asg);
    let (mut took, mut seen) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        match cuzk::prover::classify_time(&asg) {
            Ok((first, after)) => {
                took.push(first.as_secs_f64());
                seen.push(after.as_secs_f64());
            }
            Err(e) => {
                println!("FAIL classify: {e}");
                return false;
            }
        }
    }
    let (med, med_seen) = (median(&took), median(&seen));
    let list = |v: &[f64]| v.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(" ");
    println!("classify 2^{log}: median {med:.3}s ({}); with the counts seen {med_seen:.3}s ({})", list(&took), list(&seen));
    println!(
        "{}",
        serde_json::json!({"bench": "classify", "log": log, "threads": rayon::current_num_threads(), "runs_s": took, "median_s": med,
                           "seen_runs_s": seen, "seen_median_s": med_seen})
    );
    true
}

pub(crate) fn bench_synthetic(args: &Parsed) -> bool {
    let log: u32 = args.num("log", 20);
    let constraints: usize = args.num("constraints", 1usize << log);
    let runs: usize = args.num("runs", 3);
    let budget_mib: u64 = args.num("vram-budget-mib", 0);
    let Some(gpu) = backend_within(budget_mib) else { return true };
    let mix = witness_mix(args);
    let aux = args.num("aux", constraints);
    let t = Instant::now();
    let asg = synthetic::porep_like_assignment(constraints, 18, aux, mix, 42);
    let t_asg = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let distinct: usize = args.num("distinct", usize::MAX);
    let srs = Srs::from_parameters(PROOF, synthetic::random_params_tiled(Shape::of(&asg), 43, distinct));
    let t_srs = t.elapsed().as_secs_f64();
    println!(
        "synthetic 2^{log}: {constraints} constraints, assignment {t_asg:.1}s, SRS points {t_srs:.1}s{}",
        if distinct < constraints { format!(" (each vector repeats {distinct} distinct points)") } else { String::new() }
    );
    print_stats(&asg);
    let (r, s) = rs(9);
    let t = Instant::now();
    let first = gpu.prove(&srs, synthetic::clone_assignment(&asg), r, s).expect("gpu proof");
    println!("first (SRS upload included): {:.3}s  {}", t.elapsed().as_secs_f64(), phases_ms(&first.phases));
    let first_bytes = bytes(&first.proof);
    // Modes: (name, classified beforehand as the engine's synthesis threads do, runs). The
    // last, the engine's path, is the headline.
    let late_runs: usize = args.num("late-sparse-runs", 0);
    // The sparse work but ΣH after stage H instead of beside it (the same proof bytes).
    let modes = [
        ("unprepared", false, runs, false),
        ("prepared_late_sparse", true, late_runs, true),
        ("prepared", true, runs, false),
    ];
    let mut results = serde_json::Map::new();
    let mut summary = Vec::new();
    let mut last = PhaseTimings::default();
    let (mut wall_s, mut events_ms, mut gpu_ms) = (Vec::new(), Vec::new(), Vec::new());
    for (name, prep, n, late_sparse) in modes {
        gpu.set_sparse_beside_h(!late_sparse);
        (wall_s, events_ms, gpu_ms) = (Vec::new(), Vec::new(), Vec::new());
        let mut prep_s = Vec::new();
        for i in 0..n {
            let (p, wall) = timed_prove(&gpu, &srs, &asg, (r, s), prep.then_some(&mut prep_s));
            assert_eq!(bytes(&p.proof), first_bytes, "GPU proofs with equal r, s differ");
            println!("run {i} ({name}): {wall:.3}s  {}", phases_ms(&p.phases));
            wall_s.push(wall);
            events_ms.push(phase_ms(&p.phases, "gpu_events_total"));
            gpu_ms.push(phase_ms(&p.phases, "gpu_wall"));
            last = p.phases;
        }
        if n > 0 {
            summary.push(format!(
                "{name}: wall {:.3}s, CUDA events {:.1} ms{}",
                median(&wall_s),
                median(&events_ms),
                if prep { format!(" (prepared in {:.3}s)", median(&prep_s)) } else { String::new() }
            ));
        }
        results.insert(
            name.into(),
            serde_json::json!({"wall_s": wall_s, "gpu_events_ms": events_ms, "gpu_wall_ms": gpu_ms, "prepare_s": prep_s}),
        );
    }
    let (mw, mg, me) = (median(&wall_s), median(&gpu_ms), median(&events_ms));
    let mc = constraints as f64 / 1e6;
    println!(
        "2^{log} ({constraints} constraints), prepared: backend wall median {mw:.3}s ({:.1} ms per \
         million constraints); GPU section wall {mg:.1} ms, CUDA events {me:.1} ms ({:.2} ms per million \
         constraints). By mode: {}",
        mw * 1e3 / mc,
        me / mc,
        summary.join("; ")
    );
    println!(
        "{}",
        serde_json::json!({
            "bench": "gpu-synthetic", "log": log, "constraints": constraints, "runs": runs, "vram_budget_mib": budget_mib,
            "device": gpu.device_info(0).map(|d| d.name).unwrap_or_default(),
            "modes": results, "median_wall_s": mw, "median_gpu_events_ms": me,
            "phases_ms_last": phases_json(&last),
            "mix": [mix.zero, mix.one, mix.a_density, mix.b_density],
        })
    );
    // The same workload for the peer (benches/supraseal: `supraseal-c2-bench raw`).
    let export = |flag: &str, what: &dyn Fn(&std::path::Path) -> std::io::Result<()>| {
        if let Some(p) = args.text(flag.trim_start_matches("--")) {
            let t = Instant::now();
            match what(std::path::Path::new(&p)) {
                Ok(()) => println!("exported {flag} {p} in {:.1}s", t.elapsed().as_secs_f64()),
                Err(e) => {
                    println!("FAIL {flag} {p}: {e}");
                    return false;
                }
            }
        }
        true
    };
    let exported = export("--export-witness", &|dir| synthetic::write_assignment(&asg, dir))
        && export("--export-params", &|path| synthetic::write_params(&srs.params, path));
    let k: usize = args.num("stream", 0);
    if k > 0 {
        // With --late-sparse-runs also the stream with the sparse work after stage H, first.
        if late_runs > 0 {
            gpu.set_sparse_beside_h(false);
            stream(&gpu, &srs, &asg, (r, s), k, &first_bytes, &format!("2^{log}, sparse work after stage H"));
        }
        gpu.set_sparse_beside_h(true);
        stream(&gpu, &srs, &asg, (r, s), k, &first_bytes, &format!("2^{log}"));
    }
    // The devices' counters over every proof above: PCIe bytes, riders, the plan's budget.
    for d in gpu.devices() {
        println!(
            "device {}: {} proofs, {} shared passes; PCIe {:.1} GB host → device, {:.1} GB back, copies moving data {:.2} s; budget {} MiB, page-locked {} MiB",
            d.index,
            d.proofs,
            d.shared_passes,
            d.h2d_bytes as f64 / 1e9,
            d.d2h_bytes as f64 / 1e9,
            d.pcie_busy.as_secs_f64(),
            d.budget_bytes.unwrap_or(0) >> 20,
            d.pinned_host_bytes.unwrap_or(0) >> 20
        );
    }
    exported
}

/// `--stream K`: K classified copies of the partition proved by two threads at once, as the
/// engine's two GPU lanes do (one partition's upload and NTTs under the other's MSMs; the MSMs
/// take turns at the device's gate). The copies are made and classified before the clock
/// starts; wall / K is the throughput per partition, pipeline fill included.
fn stream(gpu: &CudaBackend, srs: &Srs, asg: &Assignment, (r, s): (Scalar, Scalar), k: usize, expect: &[u8], what: &str) {
    let t = Instant::now();
    let mut queue: Vec<Assignment> = (0..k).map(|_| synthetic::clone_assignment(asg)).collect();
    for a in &mut queue {
        gpu.prepare_now(a).expect("preparing");
    }
    println!("stream: {k} classified copies in {:.1}s", t.elapsed().as_secs_f64());
    let queue = std::sync::Mutex::new(queue);
    let t = Instant::now();
    // Each proof's spent buffers are kept until the clock stops (the engine frees them on its
    // deallocation thread, off the prover's path).
    // Each proof: (start on the stream's clock, its wall, its phases), for the timeline below.
    let (each, spent): (Vec<(f64, f64, String)>, Vec<_>) = std::thread::scope(|sc| {
        let prover = || {
            let mut took = Vec::new();
            loop {
                let next = queue.lock().unwrap().pop(); // the lock is not held while proving
                let Some(a) = next else { return took };
                let from = t.elapsed().as_secs_f64();
                let p = gpu.prove(srs, a, r, s).expect("gpu proof");
                let wall = t.elapsed().as_secs_f64() - from;
                took.push(((from, wall, phases_ms(&p.phases)), p.garbage));
                assert_eq!(bytes(&p.proof), expect, "GPU proofs with equal r, s differ");
            }
        };
        let threads = [sc.spawn(prover), sc.spawn(prover)];
        threads.into_iter().flat_map(|h| h.join().expect("prover thread")).unzip()
    });
    let wall = t.elapsed().as_secs_f64();
    drop(spent);
    let mut order: Vec<_> = each.iter().collect();
    order.sort_by(|x, y| x.0.total_cmp(&y.0));
    for (from, took, phases) in order {
        println!("stream proof at {from:.3}s for {took:.3}s: {phases}");
    }
    let each: Vec<f64> = each.iter().map(|e| e.1).collect();
    println!(
        "stream {what}: {k} partitions on two threads in {wall:.3}s = {:.3}s per partition (each proof's own wall: {})",
        wall / k as f64,
        each.iter().map(|w| format!("{w:.3}")).collect::<Vec<_>>().join(" ")
    );
    println!(
        "{}",
        serde_json::json!({"bench": "gpu-synthetic-stream", "what": what, "partitions": k, "wall_s": wall,
                           "per_partition_s": wall / k as f64, "proof_wall_s": each})
    );
}
