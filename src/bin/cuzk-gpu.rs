//! GPU checks and benchmarks of the CUDA backend, in one binary for the GPU machine.
//!
//!   cuzk-gpu probe                       devices, or the reason there are none (exit 0 either way)
//!   cuzk-gpu fixture                     make sure the 2 KiB params and sector exist (CUZK_FIXTURES_DIR)
//!   cuzk-gpu stats-2kib                  scalar classes of the 2 KiB witness (no GPU needed)
//!   cuzk-gpu selftest [--max-log N] [--no-synthetic] [--no-fixture] [--mem-loop N]
//!                                        GPU vs CPU byte identity (synthetic sizes + 2 KiB fixture),
//!                                        part-by-part checks, verification, device-memory loop
//!   cuzk-gpu bench-2kib [--runs N] [--cpu-runs N] [--cpu-b-g2-runs N]
//!                                        warm GPU prove time of the 2 KiB partition with CUDA-event
//!                                        phases (witness classified beforehand or not; B_G2 on CPU threads if
//!                                        asked), CPU backend side by side
//!   cuzk-gpu bench-synthetic --log N [--constraints M] [--runs N] [--cpu-b-g2-runs N] [--distinct D]
//!                            [--export-witness DIR] [--export-params FILE]
//!                                        a PoRep-like synthetic partition of 2^N constraints
//!                                        (random-point SRS generated here, each vector repeating
//!                                        its first D points if given; both B_G2 placements); then
//!                                        writes the workload for `supraseal-c2-bench raw`
//!
//!   cuzk-gpu bench-e2e [--runs N] [--jobs M] [--synthesis-workers W]
//!                                        the whole 2 KiB C2 through the engine with backend "cuda":
//!                                        warm latency over N sequential jobs, then M jobs submitted
//!                                        at once (throughput: synthesis pool feeding the GPU)
//!
//! Every subcommand prints "SKIP: no CUDA device: <why>" and exits 0 where it needs a GPU and
//! none is usable. JSON summaries are printed as lines starting with '{'.

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("cuzk-gpu: this binary was built without the `cuda` feature");
    std::process::exit(2);
}

#[cfg(feature = "cuda")]
fn main() {
    gpu::main()
}

#[cfg(feature = "cuda")]
mod gpu {
    use std::time::{Duration, Instant};

    use bellperson::groth16::{generate_random_parameters, verify_proof, Proof};
    use blstrs::{Bls12, Scalar};
    use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
    use cuzk::fixtures;
    use cuzk::prover::cuda_synthetic::{self as synthetic, Shape, Toy, WitnessMix};
    use cuzk::prover::{Backend, CpuBackend, CudaBackend, PhaseTimings};
    use cuzk::registry::RegisteredSealProof;
    use cuzk::srs::{Srs, Validation};
    use cuzk::synth::{Assignment, SizeHint};
    use ff::Field;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

    fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    }

    fn flag(args: &[String], name: &str) -> bool {
        args.iter().any(|a| a == name)
    }

    fn backend() -> Option<CudaBackend> {
        match CudaBackend::new() {
            Ok(b) => Some(b),
            Err(e) => {
                println!("SKIP: {}", e.message);
                None
            }
        }
    }

    fn median(v: &[f64]) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(|a, b| a.partial_cmp(b).unwrap());
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    fn phases_ms(t: &PhaseTimings) -> String {
        t.0.iter().map(|(n, d)| format!("{n}={:.2}", d.as_secs_f64() * 1e3)).collect::<Vec<_>>().join(" ")
    }

    fn phases_json(t: &PhaseTimings) -> serde_json::Value {
        serde_json::Value::Object(
            t.0.iter().map(|(n, d)| (n.to_string(), serde_json::json!(d.as_secs_f64() * 1e3))).collect(),
        )
    }

    fn bytes(p: &Proof<Bls12>) -> Vec<u8> {
        let mut v = Vec::new();
        p.write(&mut v).expect("proof bytes");
        v
    }

    fn rs(seed: u64) -> (Scalar, Scalar) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        (Scalar::random(&mut rng), Scalar::random(&mut rng))
    }

    pub fn main() {
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
        let args: Vec<String> = std::env::args().skip(1).collect();
        let ok = match args.first().map(String::as_str) {
            Some("probe") => probe(),
            Some("fixture") => fixture().is_ok(),
            Some("stats-2kib") => stats_2kib(),
            Some("selftest") => selftest(&args),
            Some("bench-2kib") => bench_2kib(&args),
            Some("bench-synthetic") => bench_synthetic(&args),
            Some("bench-e2e") => bench_e2e(&args),
            _ => {
                eprintln!(
                    "usage: cuzk-gpu probe | fixture | stats-2kib | selftest [--max-log N] [--no-fixture] [--mem-loop N] \
                     | bench-2kib [--runs N] [--cpu-runs N] | bench-synthetic --log N [--constraints M] [--runs N]"
                );
                std::process::exit(2);
            }
        };
        std::process::exit(if ok { 0 } else { 1 });
    }

    fn probe() -> bool {
        let Some(gpu) = backend() else { return true };
        for i in 0..gpu.device_count() {
            match gpu.device_info(i) {
                Ok(d) => {
                    println!("device {i}: {} free {} MiB of {} MiB", d.name, d.free_bytes >> 20, d.total_bytes >> 20)
                }
                Err(e) => println!("device {i}: {e}"),
            }
        }
        true
    }

    struct Fixture {
        params: std::path::PathBuf,
        params_dir: std::path::PathBuf,
        sector: fixtures::SectorFixture,
        c1: Vec<u8>,
    }

    fn fixture() -> cuzk::error::Result<Fixture> {
        let root = fixtures::default_root();
        let params_dir = fixtures::params_dir(&root);
        let t = Instant::now();
        let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED)?;
        let sector = fixtures::ensure_sector(&root, PROOF, fixtures::DEFAULT_SEED)?;
        let c1 = sector.c1_json()?;
        println!("fixture: {} ready in {:.1}s", params.display(), t.elapsed().as_secs_f64());
        Ok(Fixture { params, params_dir, sector, c1 })
    }

    /// The 2 KiB SRS and the synthesized partition 0.
    fn load_2kib(f: &Fixture) -> cuzk::error::Result<(Srs, Assignment, f64)> {
        let srs = Srs::load(PROOF, &f.params, Validation::None)?;
        let inputs = cuzk::synth::parse_c1(&f.c1, &f.sector.prover_id, f.sector.sector_id)?;
        let t = Instant::now();
        let asg = inputs.circuits.synthesize(0, srs.size_hint())?;
        Ok((srs, asg, t.elapsed().as_secs_f64()))
    }

    /// The fixture, then `load_2kib`; a failure is printed after `fail` ("" or "FAIL ").
    fn fixture_2kib(fail: &str) -> Option<(Fixture, Srs, Assignment, f64)> {
        let loaded = fixture().map_err(|e| format!("fixture: {e}")).and_then(|f| {
            let (srs, asg, synth_s) = load_2kib(&f).map_err(|e| format!("2 KiB: {e}"))?;
            Ok((f, srs, asg, synth_s))
        });
        loaded.map_err(|e| println!("{fail}{e}")).ok()
    }

    fn stats_2kib() -> bool {
        let Some((_f, _srs, asg, synth_s)) = fixture_2kib("") else { return false };
        print_stats(&asg);
        println!("synthesis {synth_s:.2}s");
        true
    }

    fn print_stats(asg: &Assignment) {
        let st = cuzk::prover::witness_stats(asg).expect("stats");
        println!("constraints {} inputs {} aux {}", asg.a.len(), asg.input.len(), asg.aux.len());
        for (name, (n, z, o, s)) in ["l", "a", "b"].iter().zip(st) {
            let pct = |x: usize| 100.0 * x as f64 / n.max(1) as f64;
            println!(
                "  {name}: {n} bases: zero {z} ({:.1}%), one {o} ({:.1}%), other {s} ({:.1}%)",
                pct(z),
                pct(o),
                pct(s)
            );
        }
    }

    /// GPU parts vs CPU, then GPU proof vs CPU proof bytes (fixed r, s), then verification.
    fn compare(gpu: &CudaBackend, name: &str, srs: &Srs, asg: Assignment, verify: bool, seed: u64) -> bool {
        let public: Vec<Scalar> = asg.input[1..].to_vec();
        let parts = match gpu.check_parts(srs, &asg) {
            Ok(p) => p,
            Err(e) => {
                println!("FAIL {name}: check_parts: {e}");
                return false;
            }
        };
        let bad: Vec<&str> = parts.iter().filter(|(_, ok)| !ok).map(|(n, _)| *n).collect();
        let (r, s) = rs(seed);
        let t = Instant::now();
        let cpu = CpuBackend.prove(srs, synthetic::clone_assignment(&asg), r, s);
        let cpu_s = t.elapsed().as_secs_f64();
        // The parts above classified the witness inline; the whole proof takes the engine's
        // path (classified beforehand, by `prepare`).
        let mut asg = asg;
        let prepared = match gpu.prepare_now(&mut asg) {
            Ok(_) => true,
            Err(e) => {
                println!("  note {name}: prepare failed ({e}); classified inline");
                false
            }
        };
        let t = Instant::now();
        let g = gpu.prove(srs, asg, r, s);
        let gpu_s = t.elapsed().as_secs_f64();
        let (cpu, g) = match (cpu, g) {
            (Ok(c), Ok(g)) => (c, g),
            (c, g) => {
                println!("FAIL {name}: cpu {:?} gpu {:?}", c.err(), g.err());
                return false;
            }
        };
        let same = bytes(&cpu.proof) == bytes(&g.proof);
        let verified = if verify { Some(verify_proof(&srs.pvk, &g.proof, &public).unwrap_or(false)) } else { None };
        let ok = bad.is_empty() && same && verified != Some(false);
        println!(
            "{} {name}: parts {} identical {same} (prepared {prepared}) verified {} cpu {:.3}s gpu {:.3}s",
            if ok { "PASS" } else { "FAIL" },
            if bad.is_empty() { "all ok".to_string() } else { format!("MISMATCH {bad:?}") },
            verified.map_or("n/a".into(), |v| v.to_string()),
            cpu_s,
            gpu_s
        );
        if !ok {
            println!("  gpu phases: {}", phases_ms(&g.phases));
        }
        ok
    }

    fn toy_case(gpu: &CudaBackend, name: &str, toy: Toy, real_params: bool, seed: u64) -> bool {
        let t = Instant::now();
        let asg = match Assignment::synthesize(toy.clone(), SizeHint::default()) {
            Ok(a) => a,
            Err(e) => {
                println!("FAIL {name}: synthesis: {e}");
                return false;
            }
        };
        let params = if real_params {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            generate_random_parameters::<Bls12, _, _>(toy, &mut rng).expect("params")
        } else {
            synthetic::random_params(Shape::of(&asg), seed)
        };
        let srs = Srs::from_parameters(PROOF, params);
        log::info!("{name}: setup {:.2}s", t.elapsed().as_secs_f64());
        compare(gpu, name, &srs, asg, real_params, seed)
    }

    fn selftest(args: &[String]) -> bool {
        let Some(gpu) = backend() else { return true };
        let max_log: u32 = arg(args, "--max-log", 20);
        let mem_loop: usize = arg(args, "--mem-loop", 50);
        let mut ok = true;
        if flag(args, "--no-synthetic") {
            return selftest_rest(&gpu, args, mem_loop, ok);
        }
        println!("== synthetic circuits (real params up to 2^10 and verified; random-point SRS above)");
        let small = [
            ("single constraint", Toy { constraints: 1, inputs: 0, mode: 2 }),
            ("300 all-zero", Toy { constraints: 300, inputs: 0, mode: 0 }),
            ("300 all-one b", Toy { constraints: 300, inputs: 2, mode: 1 }),
            ("1000 mixed, 3 inputs", Toy { constraints: 1000, inputs: 3, mode: 2 }),
            ("2^10 mixed", Toy { constraints: (1 << 10) - 2, inputs: 1, mode: 2 }),
        ];
        for (i, (name, toy)) in small.into_iter().enumerate() {
            ok &= toy_case(&gpu, name, toy, true, 100 + i as u64);
        }
        let mut big = vec![
            ("2^12+17 mixed".to_string(), Toy { constraints: (1 << 12) + 17, inputs: 2, mode: 2 }),
            ("2^13 all-zero".to_string(), Toy { constraints: (1 << 13) - 1, inputs: 0, mode: 0 }),
            ("2^13 ones".to_string(), Toy { constraints: (1 << 13) - 3, inputs: 2, mode: 1 }),
        ];
        for lg in (14..=max_log).step_by(2) {
            big.push((format!("2^{lg} mixed"), Toy { constraints: (1 << lg) - 2, inputs: 1, mode: 2 }));
        }
        if max_log >= 19 {
            big.push((
                "2^18+5 mixed (domain 2^19)".to_string(),
                Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 2 },
            ));
        }
        for (i, (name, toy)) in big.into_iter().enumerate() {
            ok &= toy_case(&gpu, &name, toy, false, 200 + i as u64);
        }
        gpu.set_b_g2_on_gpu(false);
        ok &= toy_case(
            &gpu,
            "2^14 mixed, B_G2 on CPU threads",
            Toy { constraints: (1 << 14) - 2, inputs: 1, mode: 2 },
            false,
            300,
        );
        gpu.set_b_g2_on_gpu(true);

        selftest_rest(&gpu, args, mem_loop, ok)
    }

    fn selftest_rest(gpu: &CudaBackend, args: &[String], mem_loop: usize, mut ok: bool) -> bool {
        if !flag(args, "--no-fixture") {
            println!("== 2 KiB fixture");
            ok &= selftest_2kib(gpu);
        }
        if mem_loop > 0 {
            println!("== device memory over {mem_loop} proofs");
            ok &= memory_loop(gpu, mem_loop);
        }
        println!("SELFTEST {}", if ok { "PASS" } else { "FAIL" });
        ok
    }

    fn selftest_2kib(gpu: &CudaBackend) -> bool {
        let Some((f, srs, asg, synth_s)) = fixture_2kib("FAIL ") else { return false };
        println!("2 KiB partition synthesized in {synth_s:.2}s");
        print_stats(&asg);
        let mut ok = compare(gpu, "2 KiB partition 0", &srs, asg, true, 7);
        drop(srs);
        gpu.evict_srs();

        // Through the engine with backend "cuda" (it verifies every proof).
        let cfg = EngineConfig { backend: "cuda".into(), params_dir: Some(f.params_dir.clone()), ..Default::default() };
        let res = (|| -> cuzk::error::Result<String> {
            let engine = Engine::new(cfg)?;
            engine.srs_load(PROOF, None)?;
            let id = engine.submit(SubmitRequest {
                c1_json: &f.c1,
                sector_id: f.sector.sector_id,
                prover_id: f.sector.prover_id,
                priority: 0,
                request_id: None,
            })?;
            let snap = engine.wait(id, None)?;
            if snap.state != JobState::Done {
                return Err(snap.error.unwrap_or_else(|| cuzk::err!(Internal, "job ended in {:?}", snap.state)));
            }
            Ok(cuzk::engine::result_json(&snap.result.expect("result")).to_string())
        })();
        match res {
            Ok(json) if json.contains("\"verified\":true") && json.contains("cuda") => {
                println!("PASS engine backend cuda, 2 KiB: {json}")
            }
            Ok(json) => {
                println!("FAIL engine backend cuda, 2 KiB: {json}");
                ok = false;
            }
            Err(e) => {
                println!("FAIL engine backend cuda, 2 KiB: {e}");
                ok = false;
            }
        }
        gpu.evict_srs();
        ok
    }

    fn bench_e2e(args: &[String]) -> bool {
        let runs: usize = arg(args, "--runs", 5);
        let jobs: usize = arg(args, "--jobs", 16);
        let workers: usize = arg(args, "--synthesis-workers", 0);
        if backend().is_none() {
            return true;
        }
        let res = (|| -> cuzk::error::Result<serde_json::Value> {
            let f = fixture()?;
            let engine = Engine::new(EngineConfig {
                backend: "cuda".into(),
                params_dir: Some(f.params_dir.clone()),
                synthesis_workers: workers,
                prove_queue_depth: 2,
                ..Default::default()
            })?;
            let srs = engine.srs_load(PROOF, None)?;
            println!("SRS load {:.2}s; synthesis workers {}", srs.load_time.as_secs_f64(), engine.config().synthesis_threads());
            let submit = || {
                engine.submit(SubmitRequest {
                    c1_json: &f.c1,
                    sector_id: f.sector.sector_id,
                    prover_id: f.sector.prover_id,
                    priority: 0,
                    request_id: None,
                })
            };
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
            Ok(serde_json::json!({
                "bench": "e2e-2kib-cuda", "runs": runs, "wall_s": wall, "synthesis_s": synth, "prove_s": prove,
                "median_wall_s": median(&wall), "median_prove_s": median(&prove),
                "stream_jobs": jobs, "stream_s": stream, "stream_per_proof_s": stream / jobs as f64,
                "synthesis_workers": engine.config().synthesis_threads(),
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

    fn memory_loop(gpu: &CudaBackend, n: usize) -> bool {
        let toy = Toy { constraints: (1 << 16) - 2, inputs: 1, mode: 2 };
        let asg = Assignment::synthesize(toy, SizeHint::default()).expect("synthesis");
        let srs = Srs::from_parameters(PROOF, synthetic::random_params(Shape::of(&asg), 5));
        let free = || gpu.device_info(0).map(|d| d.free_bytes).unwrap_or(0);
        let (r, s) = rs(1);
        let first = gpu.prove(&srs, synthetic::clone_assignment(&asg), r, s).expect("proof").proof;
        let baseline = free();
        let mut same = true;
        for _ in 1..n {
            let mut a = synthetic::clone_assignment(&asg);
            gpu.prepare_now(&mut a).expect("preparing");
            let p = gpu.prove(&srs, a, r, s).expect("proof").proof;
            same &= bytes(&p) == bytes(&first);
        }
        let after = free();
        drop(srs);
        gpu.evict_srs();
        let released = free();
        let delta = baseline as i64 - after as i64;
        let ok = same && delta.abs() <= 1 << 20;
        println!(
            "{} memory loop: {n} proofs, free after first {} MiB, after last {} MiB (delta {} bytes), after SRS evict {} MiB, \
             workspace {} MiB, proofs identical {same}",
            if ok { "PASS" } else { "FAIL" },
            baseline >> 20,
            after >> 20,
            delta,
            released >> 20,
            gpu.workspace_bytes() >> 20
        );
        ok
    }

    fn bench_2kib(args: &[String]) -> bool {
        let runs: usize = arg(args, "--runs", 5);
        let cpu_runs: usize = arg(args, "--cpu-runs", 2);
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
        let cpu_b_g2_runs: usize = arg(args, "--cpu-b-g2-runs", 0);
        let (mut gpu_cpu_b_g2_s, mut inline_s, mut gpu_s, mut prep_s) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut last = PhaseTimings::default();
        // (B_G2 on the GPU, classified beforehand as the engine's synthesis threads do, runs,
        // samples); the engine's path last: it is `gpu_s` and what `last` shows.
        let modes = [
            (false, false, cpu_b_g2_runs, &mut gpu_cpu_b_g2_s),
            (true, false, runs, &mut inline_s),
            (true, true, runs, &mut gpu_s),
        ];
        for (on_gpu, prep, n, out) in modes {
            gpu.set_b_g2_on_gpu(on_gpu);
            for i in 0..n {
                let mut a = synthetic::clone_assignment(&asg);
                if prep {
                    prep_s.push(gpu.prepare_now(&mut a).expect("preparing").as_secs_f64());
                }
                let t = Instant::now();
                let p = gpu.prove(&srs, a, r, s).expect("gpu proof");
                let wall = t.elapsed().as_secs_f64();
                assert_eq!(bytes(&p.proof), bytes(&first.proof), "GPU proofs with equal r, s differ");
                println!(
                    "gpu run {i} (B_G2 on {}, {}): {wall:.3}s  {}",
                    if on_gpu { "GPU" } else { "CPU" },
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
            let p = CpuBackend.prove(&srs, a, r, s).expect("cpu proof");
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
             the engine: classified beforehand, {:.3}s); unprepared {:.3}s; B_G2 on CPU threads {:.3}s; \
             cpu median {mc:.3}s, speedup {:.1}x, identical {identical}, verified {verified}",
            median(&prep_s),
            median(&inline_s),
            median(&gpu_cpu_b_g2_s),
            mc / mg
        );
        println!(
            "{}",
            serde_json::json!({
                "bench": "gpu-2kib", "device": dev, "cores": cores, "runs": runs,
                "gpu_s": gpu_s, "prepare_s": prep_s, "gpu_unprepared_s": inline_s, "gpu_unprepared_median_s": median(&inline_s),
                "gpu_b_g2_on_cpu_s": gpu_cpu_b_g2_s, "cpu_s": cpu_s, "gpu_median_s": mg, "cpu_median_s": mc,
                "synthesis_s": synth_s, "identical": identical, "verified": verified,
                "gpu_phases_ms_last": phases_json(&last),
            })
        );
        identical && verified
    }

    fn bench_synthetic(args: &[String]) -> bool {
        let log: u32 = arg(args, "--log", 20);
        let constraints: usize = arg(args, "--constraints", 1usize << log);
        let runs: usize = arg(args, "--runs", 3);
        let Some(gpu) = backend() else { return true };
        // Shares measured on the 2 KiB PoRep partition (cuzk-gpu stats-2kib); see cuda/NOTES.md.
        let mix = WitnessMix {
            zero: arg(args, "--zero", 0.51),
            one: arg(args, "--one", 0.47),
            a_density: arg(args, "--a-density", 0.996),
            b_density: arg(args, "--b-density", 0.255),
        };
        let aux = arg(args, "--aux", constraints);
        let t = Instant::now();
        let asg = synthetic::porep_like_assignment(constraints, 18, aux, mix, 42);
        let t_asg = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let distinct: usize = arg(args, "--distinct", usize::MAX);
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
        let cpu_b_g2_runs: usize = arg(args, "--cpu-b-g2-runs", runs);
        // Modes: (name, B_G2 on the GPU, classified beforehand as the engine's synthesis
        // threads do, runs). The last, the engine's path, is the headline.
        let modes = [
            ("b_g2_on_cpu", false, false, cpu_b_g2_runs),
            ("unprepared", true, false, runs),
            ("prepared", true, true, runs),
        ];
        let mut results = serde_json::Map::new();
        let mut summary = Vec::new();
        let mut last = PhaseTimings::default();
        let (mut wall_s, mut events_ms, mut gpu_ms) = (Vec::new(), Vec::new(), Vec::new());
        for (name, on_gpu, prep, n) in modes {
            gpu.set_b_g2_on_gpu(on_gpu);
            (wall_s, events_ms, gpu_ms) = (Vec::new(), Vec::new(), Vec::new());
            let mut prep_s = Vec::new();
            for i in 0..n {
                let mut a = synthetic::clone_assignment(&asg);
                if prep {
                    prep_s.push(gpu.prepare_now(&mut a).expect("preparing").as_secs_f64());
                }
                let t = Instant::now();
                let p = gpu.prove(&srs, a, r, s).expect("gpu proof");
                let wall = t.elapsed().as_secs_f64();
                assert_eq!(bytes(&p.proof), first_bytes, "GPU proofs with equal r, s differ");
                let get =
                    |n: &str| p.phases.0.iter().find(|(x, _)| *x == n).map_or(0.0, |(_, d)| d.as_secs_f64() * 1e3);
                println!("run {i} ({name}): {wall:.3}s  {}", phases_ms(&p.phases));
                wall_s.push(wall);
                events_ms.push(get("gpu_events_total"));
                gpu_ms.push(get("gpu_wall"));
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
                "bench": "gpu-synthetic", "log": log, "constraints": constraints, "runs": runs,
                "device": gpu.device_info(0).map(|d| d.name).unwrap_or_default(),
                "modes": results, "median_wall_s": mw, "median_gpu_events_ms": me,
                "phases_ms_last": phases_json(&last),
                "mix": [mix.zero, mix.one, mix.a_density, mix.b_density],
            })
        );
        let _ = Duration::ZERO;
        // The same workload for the peer (benches/supraseal: `supraseal-c2-bench raw`).
        let export = |flag: &str, what: &dyn Fn(&std::path::Path) -> std::io::Result<()>| {
            if let Some(p) = args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)) {
                let t = Instant::now();
                match what(std::path::Path::new(p)) {
                    Ok(()) => println!("exported {flag} {p} in {:.1}s", t.elapsed().as_secs_f64()),
                    Err(e) => {
                        println!("FAIL {flag} {p}: {e}");
                        return false;
                    }
                }
            }
            true
        };
        export("--export-witness", &|dir| synthetic::write_assignment(&asg, dir))
            && export("--export-params", &|path| synthetic::write_params(&srs.params, path))
    }
}
