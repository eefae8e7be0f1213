//! `selftest`: GPU vs CPU byte identity, part-by-part checks, verification, device-memory loop.

use std::sync::Arc;

use crate::common::*;

/// GPU parts vs CPU, then GPU proof vs CPU proof bytes (fixed r, s), then verification.
pub(crate) fn compare(gpu: &CudaBackend, name: &str, srs: &Srs, asg: Assignment, verify: bool, seed: u64) -> bool {
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
    let cpu = CpuBackend::default().prove(srs, synthetic::clone_assignment(&asg), r, s);
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

pub(crate) fn toy_case(gpu: &CudaBackend, name: &str, toy: Toy, real_params: bool, seed: u64) -> bool {
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

pub(crate) fn selftest(args: &Parsed) -> bool {
    let Some(gpu) = backend() else { return true };
    let max_log: u32 = args.num("max-log", 20);
    let min_log: u32 = args.num("min-log", 14);
    let mem_loop: usize = args.num("mem-loop", 50);
    let mut ok = true;
    if args.has("no-synthetic") {
        return selftest_rest(&gpu, args, mem_loop, ok);
    }
    println!("== synthetic circuits (real params up to 2^10 and verified; random-point SRS above)");
    let small = [
        ("single constraint", Toy { constraints: 1, inputs: 0, mode: 2 }),
        ("300 all-zero", Toy { constraints: 300, inputs: 0, mode: 0 }),
        ("300 all-one b", Toy { constraints: 300, inputs: 2, mode: 1 }),
        ("1000 mixed, 3 inputs", Toy { constraints: 1000, inputs: 3, mode: 2 }),
        ("2^10 mixed", Toy { constraints: (1 << 10) - 2, inputs: 1, mode: 2 }),
        ("1000 sparse, 3 inputs", Toy { constraints: 1000, inputs: 3, mode: 3 }),
    ];
    for (i, (name, toy)) in small.into_iter().enumerate() {
        ok &= toy_case(&gpu, name, toy, true, 100 + i as u64);
    }
    let mut big = vec![
        ("2^12+17 mixed".to_string(), Toy { constraints: (1 << 12) + 17, inputs: 2, mode: 2 }),
        ("2^13 all-zero".to_string(), Toy { constraints: (1 << 13) - 1, inputs: 0, mode: 0 }),
        ("2^13 ones".to_string(), Toy { constraints: (1 << 13) - 3, inputs: 2, mode: 1 }),
    ];
    // "mixed" witnesses are mostly field elements (dense queries on the GPU), "sparse" ones mostly
    // zeros and ones (bitmaps and gathered bases).
    for lg in (min_log.max(14)..=max_log).step_by(2) {
        big.push((format!("2^{lg} mixed"), Toy { constraints: (1 << lg) - 2, inputs: 1, mode: 2 }));
        big.push((format!("2^{lg} sparse"), Toy { constraints: (1 << lg) - 2, inputs: 1, mode: 3 }));
    }
    if max_log >= 19 && min_log <= 18 {
        big.push((
            "2^18+5 mixed (domain 2^19)".to_string(),
            Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 2 },
        ));
    }
    for (i, (name, toy)) in big.into_iter().enumerate() {
        ok &= toy_case(&gpu, &name, toy, false, 200 + i as u64);
    }

    selftest_rest(&gpu, args, mem_loop, ok)
}

pub(crate) fn selftest_rest(gpu: &CudaBackend, args: &Parsed, mem_loop: usize, mut ok: bool) -> bool {
    if !args.has("no-fixture") {
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

pub(crate) fn selftest_2kib(gpu: &CudaBackend) -> bool {
    let Some((f, srs, asg, synth_s)) = fixture_2kib("FAIL ") else { return false };
    println!("2 KiB partition synthesized in {synth_s:.2}s");
    print_stats(&asg);
    let full = synthetic::clone_assignment(&asg);
    let mut ok = compare(gpu, "2 KiB partition 0", &srs, asg, true, 7);
    ok &= recorded_2kib(gpu, &f, &srs, full);
    drop(srs);
    gpu.evict_srs();

    // Through the engine with backend "cuda" (it verifies every proof).
    let cfg = EngineConfig { backend: "cuda".into(), params_dir: Some(f.params_dir.clone()), ..Default::default() };
    let res = (|| -> cuzk::error::Result<String> {
        let engine = Engine::new(cfg)?;
        engine.srs_load(PROOF, None)?;
        let prove = || -> cuzk::error::Result<String> {
            let snap = engine.wait(f.submit(&engine)?, None)?;
            if snap.state != JobState::Done {
                return Err(snap.error.unwrap_or_else(|| cuzk::err!(Internal, "job ended in {:?}", snap.state)));
            }
            Ok(cuzk::engine::result_json(&snap.result.expect("result")).to_string())
        };
        let first = prove()?;
        // The engine records the circuit at the first job; later jobs evaluate a, b, c on the GPU.
        let t = Instant::now();
        while !engine.status_json().contains("\"state\":\"ready\"") {
            if t.elapsed().as_secs() > 120 {
                return Err(cuzk::err!(Internal, "the 2 KiB circuit was not recorded in 120 s: {}", engine.status_json()));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let second = prove()?;
        if !(second.contains("synthesis_witness") && second.contains("gpu_spmv") && !second.contains("synthesis_abc")) {
            return Err(cuzk::err!(Internal, "the second job did not go through the recorded circuit: {second}"));
        }
        Ok(format!("{first}\n  recorded: {second}"))
    })();
    match res {
        Ok(json) if json.matches("\"verified\":true").count() == 2 && json.contains("cuda") => {
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

/// The recorded path: the 2 KiB circuit recorded once, partition 0's witness alone on the host,
/// a, b, c evaluated on the GPU from the recorded matrices — byte-identical to the CPU proof of
/// the fully synthesized partition (fixed r, s), and verified.
fn recorded_2kib(gpu: &CudaBackend, f: &Fixture, srs: &Srs, full: Assignment) -> bool {
    let res = (|| -> cuzk::error::Result<(bool, bool, String)> {
        let t = Instant::now();
        let r1cs = Arc::new(cuzk::synth::R1cs::record(PROOF, srs.size_hint(), &|| false)?);
        let record_s = t.elapsed().as_secs_f64();
        let inputs = cuzk::kinds::porep::parse_c1(&f.c1, &f.sector.prover_id, f.sector.sector_id)?;
        let t = Instant::now();
        let deferred = r1cs.defer(inputs.circuits.witness(0, srs.size_hint())?)?;
        let witness_s = t.elapsed().as_secs_f64();
        let public: Vec<Scalar> = deferred.input[1..].to_vec();
        let (r, s) = rs(11);
        let cpu = CpuBackend::default().prove(srs, full, r, s)?;
        let mut deferred = deferred;
        gpu.prepare_now(&mut deferred)?;
        let again = synthetic::clone_assignment(&deferred);
        let parked_input = synthetic::clone_assignment(&deferred);
        let g = gpu.prove(srs, deferred, r, s)?;
        let same = bytes(&cpu.proof) == bytes(&g.proof);
        let verified = verify_proof(&srs.pvk, &g.proof, &public).unwrap_or(false);
        // The same proof with the circuit streamed from host memory in tiles of rows (a budget
        // that holds the streamed mode with its tiles but not with the circuit on the device).
        use cuzk::prover::vram::{plan, AbcAt, Footprint, Plan};
        let fp = Footprint::of_srs(srs, Some(&r1cs));
        let budget = fp.streamed(0, AbcAt::CircuitTiles);
        let tiled = matches!(plan(&fp, budget, 1), Plan::Streamed(p) if p.abc == AbcAt::CircuitTiles);
        let other = CudaBackend::with_budget(Some(&[0]), 1, Some(budget))?.prove(srs, again, r, s)?;
        let same_other = tiled && bytes(&cpu.proof) == bytes(&other.proof);
        // And with C and A parked in host memory (the lean stage H of 32 GiB on a 12 GiB card).
        let parking = CudaBackend::with_budget(Some(&[0]), 1, Some(budget))?;
        parking.set_park_always(true);
        let parked = parking.prove(srs, parked_input, r, s)?;
        let same_parked = bytes(&cpu.proof) == bytes(&parked.proof);
        let spmv = |p: &cuzk::prover::PartitionProof| phase_ms(&p.phases, "gpu_spmv");
        let note = format!(
            "recorded in {record_s:.2}s ({:?}), witness {witness_s:.2}s, gpu_spmv {:.2} ms; streamed in tiles \
             ({} MiB budget, planned {tiled}): identical {same_other}, stage H {:.2} ms; parked: identical {same_parked}, \
             stage H {:.2} ms; gpu phases: {}",
            r1cs.stats(),
            spmv(&g),
            budget >> 20,
            phase_ms(&other.phases, "gpu_stage_h"),
            phase_ms(&parked.phases, "gpu_stage_h"),
            phases_ms(&g.phases)
        );
        Ok((same && same_other && same_parked, verified, note))
    })();
    match res {
        Ok((same, verified, note)) => {
            let ok = same && verified;
            println!("{} 2 KiB recorded circuit on the GPU: identical {same} verified {verified}; {note}", if ok { "PASS" } else { "FAIL" });
            ok
        }
        Err(e) => {
            println!("FAIL 2 KiB recorded circuit on the GPU: {e}");
            false
        }
    }
}

pub(crate) fn memory_loop(gpu: &CudaBackend, n: usize) -> bool {
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
