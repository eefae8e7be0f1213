//! `bench-shaped`: the whole engine path at a real sector shape on the GPU — submit, synthesis on
//! all cores, memory budget, CUDA prover, finish. Two kinds of input:
//! - `--inputs shaped` (default, PoRep only): a shaped C1 (no sealing; fixtures::shaped_c1)
//!   against a random-point SRS of exactly that proof's section sizes (tiled: seconds to make).
//!   The circuits are not satisfiable, so verification is off: this times, it proves nothing.
//! - `--inputs cc` (every kind): generated satisfiable inputs — a committed-capacity sector's C1
//!   (fixtures::cc_sector_c1), a SnapDeals update (fixtures::cc_update) or a PoSt over `--sectors`
//!   generated sectors (fixtures::cc_post) — against a generated test SRS for the recorded
//!   circuit (fixtures::test_srs: genuine, seeded toxic waste — a test SRS, never for
//!   production), verification on: every proof is checked by the engine against that SRS's
//!   verifying key, and the verify time is reported. `--srs random`: the random-point SRS
//!   instead, verification off — where making the test SRS would take longer than the run (a
//!   32 GiB WindowPoSt partition: its A has 862 M terms), it times the generated inputs.
//!
//! `--probe P --probes N`: while the J jobs run, N jobs of the PoSt proof P (e.g.
//! `StackedDrgWinning32GiBV1`, generated inputs, its own test SRS), one after the other at
//! their kind's default priority, `--probe-gap-ms` apart: the latency a WinningPoSt sees on a
//! saturated engine.

use std::sync::Arc;
use std::time::Duration;

use cuzk::engine::Submission;
use cuzk::kinds::{CircuitId, ProofRequest};

use crate::common::*;

/// The prover id and sector number the shaped C1 is made for (and parsed with).
const PROVER: [u8; 32] = [9; 32];
const SECTOR: u64 = 3;

fn sections(circuit: CircuitId) -> cuzk::error::Result<synthetic::Shape> {
    let [ic, h, l, a, b, _] = cuzk::srs::expected_shape(circuit)?;
    Ok(synthetic::Shape { h, inputs: ic, aux: l, a, b })
}

/// What each job proves.
enum Work {
    /// A PoRep C1 output of (prover id, sector id): shaped or a generated CC sector's.
    C1 { c1: Arc<Vec<u8>>, sector: ([u8; 32], u64), cc: bool },
    /// A generated SnapDeals update.
    Update(fixtures::UpdateFixture),
    /// A generated PoSt (a WindowPoSt's one partition, or a WinningPoSt).
    PoSt(fixtures::PoStFixture),
}

impl Work {
    fn make(circuit: CircuitId, cc: bool, sectors: usize) -> cuzk::error::Result<Work> {
        let t = Instant::now();
        let work = match circuit {
            CircuitId::Seal(proof) if cc => {
                let (c1, s) = cuzk::fixtures::cc_sector_c1(proof, 21)?;
                Work::C1 { c1: Arc::new(c1), sector: (s.prover_id, s.sector_id), cc }
            }
            CircuitId::Seal(proof) => Work::C1 { c1: Arc::new(cuzk::fixtures::shaped_c1(proof, 21, PROVER, SECTOR)?), sector: (PROVER, SECTOR), cc },
            _ if !cc => return Err(cuzk::err!(InvalidArgument, "{}: only PoRep has shaped inputs; use --inputs cc", circuit.name())),
            CircuitId::Update(proof) => Work::Update(cuzk::fixtures::cc_update(proof, 21)?),
            CircuitId::PoSt(proof) => Work::PoSt(cuzk::fixtures::cc_post(proof, sectors, 21)?),
        };
        println!("{}: {} inputs, {} MB, in {:.1}s", circuit.name(), if cc { "generated satisfiable" } else { "shaped" }, work.bytes() >> 20, t.elapsed().as_secs_f64());
        Ok(work)
    }

    fn bytes(&self) -> usize {
        match self {
            Work::C1 { c1, .. } => c1.len(),
            Work::Update(f) => f.vanilla_proofs.iter().map(Vec::len).sum(),
            Work::PoSt(f) => f.vanilla_proofs.iter().map(Vec::len).sum(),
        }
    }

    fn request(&self) -> ProofRequest<'_> {
        match self {
            Work::C1 { c1, sector, .. } => ProofRequest::PoRep { c1_json: c1, sector_id: sector.1, prover_id: sector.0 },
            Work::Update(f) => ProofRequest::SnapDeals(f.request()),
            Work::PoSt(f) => f.proof_request(None),
        }
    }

    /// The circuit recorded from partition 0 (its sub-circuits on all threads, as the engine
    /// records at a proof type's first job).
    fn record(&self, circuit: CircuitId) -> cuzk::error::Result<cuzk::synth::R1cs> {
        self.request().parse()?.circuits.record(0, cuzk::srs::expected_size_hint(circuit)?, &|| false)
    }

    /// Queued on `engine` as a node submits it, with the moment the engine got it: shaped C1s
    /// are parsed here first (not timed) and go through `submit_circuits` against `srs`,
    /// bypassing the parse checks' SRS lookup.
    fn submit(&self, engine: &Engine, srs: &Arc<Srs>) -> cuzk::error::Result<(u64, Instant)> {
        match self {
            Work::C1 { c1, sector, cc: false, .. } => {
                let t = Instant::now();
                let inputs = cuzk::kinds::porep::parse_c1(c1, &sector.0, sector.1)?;
                println!("  parse+validate {:.2}s", t.elapsed().as_secs_f64());
                let at = Instant::now();
                Ok((engine.submit_circuits(cuzk::kinds::seal_inputs(inputs, sector.0, sector.1), srs.clone(), 0)?, at))
            }
            _ => {
                let at = Instant::now();
                Ok((engine.submit_proof(Submission { request: self.request(), priority: None, request_id: None })?, at))
            }
        }
    }
}

/// The test SRS of `r1cs` (seeded toxic waste: never for production).
fn test_srs(circuit: CircuitId, r1cs: &cuzk::synth::R1cs) -> cuzk::error::Result<Arc<Srs>> {
    let t = Instant::now();
    let s = Srs::from_parameters(circuit, cuzk::fixtures::test_srs(r1cs, 21)?);
    println!(
        "{}: TEST SRS (seeded toxic waste: never for production; {} MiB resident) generated in {:.1}s",
        circuit.name(),
        s.resident_bytes >> 20,
        t.elapsed().as_secs_f64()
    );
    Ok(Arc::new(s))
}

/// The `--probe` jobs: their inputs, recorded circuit and test SRS.
struct Probe {
    circuit: CircuitId,
    work: Work,
    r1cs: Arc<cuzk::synth::R1cs>,
    srs: Arc<Srs>,
    count: usize,
    gap: Duration,
}

pub(crate) fn bench_shaped(args: &Parsed) -> bool {
    let circuit = args.text("proof").map_or(Ok(CircuitId::Seal(RegisteredSealProof::StackedDrg32GiBV1_1)), CircuitId::parse);
    let jobs: usize = args.num("jobs", 2);
    // 1: partitions through the proof type's recorded circuit (recorded before timing, as a
    // long-running node has it); 0: full synthesis.
    let recorded = args.num("recorded", 1usize) != 0;
    let workers: usize = args.num("synthesis-workers", 0);
    // A generated PoSt's sectors (a 32 GiB WindowPoSt partition has 2,349).
    let sectors: usize = args.num("sectors", 1);
    let cc = match args.text("inputs") {
        None | Some("shaped") => false,
        Some("cc") => true,
        Some(other) => {
            println!("FAIL bench-shaped: --inputs {other}: expected shaped or cc");
            return false;
        }
    };
    // The random-point SRS (no proof verifies under it), or a test SRS for generated inputs.
    let random_srs = match args.text("srs") {
        None => !cc,
        Some("random") => true,
        Some("test") if cc => false,
        Some(other) => {
            println!("FAIL bench-shaped: --srs {other}: expected random, or test with --inputs cc");
            return false;
        }
    };
    let probe = args.text("probe").map(CircuitId::parse);
    let probes: usize = args.num("probes", 0);
    // Between probes, so that they sample the whole run, not its first seconds.
    let probe_gap = Duration::from_millis(args.num("probe-gap-ms", 1000));
    // Where to write every job's per-partition spans (for `cuzk-timeline`).
    let timeline = args.text("timeline").map(String::from);
    // GPU lanes per engine, one engine after the other on the same SRS and circuit (e.g. "2,1").
    let lane_counts: Vec<usize> = args.nums("gpu-lanes", "0");
    // VRAM budgets (MiB; 0 = automatic), one engine each after the lane counts' (e.g.
    // "24576,16384,12288": the streamed mode where the resident one does not fit).
    let budgets: Vec<u64> = args.nums("vram-budget-mib", "0");
    if backend().is_none() {
        return true;
    }
    let res = (|| -> cuzk::error::Result<serde_json::Value> {
        let circuit = circuit?;
        let work = Arc::new(Work::make(circuit, cc, sectors)?);
        let recorded = recorded || !random_srs; // the test SRS is made from the recorded circuit
        let t = Instant::now();
        // The circuit is recorded while the SRS is made.
        let recording = recorded.then(|| {
            let work = work.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                work.record(circuit).map(|r| (r, t.elapsed().as_secs_f64()))
            })
        });
        let mut srs = None;
        if random_srs {
            let s = Srs::from_parameters(circuit, synthetic::random_params_tiled(sections(circuit)?, 5, 1 << 20));
            println!("{}: random SRS ({} MiB resident) in {:.1}s", circuit.name(), s.resident_bytes >> 20, t.elapsed().as_secs_f64());
            srs = Some(Arc::new(s));
        }
        let r1cs = match recording {
            Some(h) => {
                let (r, took) = h.join().map_err(|_| cuzk::err!(Internal, "recording panicked"))??;
                println!("recorded circuit (partition 0, sub-circuits on all threads): {:.1}s, {:?} (ready {:.1}s after start)", took, r.stats(), t.elapsed().as_secs_f64());
                Some(Arc::new(r))
            }
            None => None,
        };
        let srs = match srs {
            Some(s) => s,
            None => test_srs(circuit, r1cs.as_ref().ok_or_else(|| cuzk::err!(Internal, "no recorded circuit for the test SRS"))?)?,
        };
        let probe = match probe {
            Some(p) if probes > 0 => {
                let p = p?;
                let work = Work::make(p, true, 1)?;
                let r1cs = Arc::new(work.record(p)?);
                let srs = test_srs(p, &r1cs)?;
                Some(Probe { circuit: p, work, r1cs, srs, count: probes, gap: probe_gap })
            }
            _ => None,
        };
        let mut summaries = Vec::new();
        let runs = budgets.iter().flat_map(|&b| lane_counts.iter().map(move |&l| (b, l)));
        for (run, (vram_budget_mib, lanes)) in runs.enumerate() {
            let mut tag = if lane_counts.len() > 1 { format!("-lanes{lanes}") } else { String::new() };
            if budgets.len() > 1 {
                tag += &format!("-vram{vram_budget_mib}");
            }
            let path = timeline.as_ref().map(|p| p.replace(".json", &format!("{tag}.json")));
            println!("== gpu_lanes {lanes}, vram_budget_mib {vram_budget_mib} (run {run})");
            if vram_budget_mib > 0 {
                // The plan the backend makes for this budget (the same function), and what it moves.
                use cuzk::prover::vram::{plan, sec, Footprint, Plan};
                let f = Footprint::of_srs(&srs, r1cs.as_deref());
                match plan(&f, vram_budget_mib << 20, 2) {
                    Plan::Streamed(p) => println!(
                        "plan: streamed, kept {}; a, b, c {}; {}; tiles of {} bases, ~{} MiB planned; {:.1} GB over PCIe per partition",
                        sec::names(p.resident),
                        p.abc.name(),
                        p.sigma_h(),
                        p.tile,
                        p.need >> 20,
                        f.streamed_pcie_bytes(p.resident, p.abc) as f64 / 1e9
                    ),
                    p => println!("plan: {p:?}"),
                }
            }
            let setup = Setup { jobs, workers, recorded, lanes, vram_budget_mib, timeline: path, cc, verify: cc && !random_srs };
            summaries.push(run_engine(circuit, &work, &srs, r1cs.clone(), probe.as_ref(), setup)?);
        }
        Ok(serde_json::json!({"bench": "shaped-e2e-cuda", "proof": circuit.name(), "runs": summaries}))
    })();
    match res {
        Ok(v) => {
            println!("{v}");
            true
        }
        Err(e) => {
            println!("FAIL bench-shaped: {e}");
            false
        }
    }
}

struct Setup {
    jobs: usize,
    workers: usize,
    recorded: bool,
    lanes: usize,
    vram_budget_mib: u64,
    timeline: Option<String>,
    /// Generated satisfiable inputs, submitted as a node submits them.
    cc: bool,
    /// Every proof verified (generated inputs under their test SRS).
    verify: bool,
}

/// One engine (its own CUDA backend: the SRS and circuit go to VRAM again) with `lanes` GPU
/// lanes: one job's latency, then `jobs` jobs at once.
fn run_engine(
    circuit: CircuitId,
    work: &Work,
    srs: &Arc<Srs>,
    r1cs: Option<Arc<cuzk::synth::R1cs>>,
    probe: Option<&Probe>,
    setup: Setup,
) -> cuzk::error::Result<serde_json::Value> {
    let Setup { jobs, workers, recorded, lanes, vram_budget_mib, timeline, cc, verify } = setup;
    let proof = circuit.name();
    {
        // Started after the SRS exists, so the automatic memory budget leaves room for it.
        let engine = Engine::new(EngineConfig {
            backend: "cuda".into(),
            verify,
            synthesis_workers: workers,
            prove_queue_depth: 2,
            record_circuits: recorded,
            gpu_lanes: lanes,
            vram_budget_mib,
            ..Default::default()
        })?;
        let adopted = r1cs.is_some();
        if let Some(r) = r1cs {
            engine.adopt_circuit(r);
        }
        // As srs_load does: the SRS (and the recorded circuit, as when its recording ends) goes
        // to VRAM before the first job, not during it.
        let t_up = Instant::now();
        engine.preload(srs);
        println!(
            "SRS{} preloaded to the GPU in {:.1}s",
            if adopted { " and recorded circuit" } else { "" },
            t_up.elapsed().as_secs_f64()
        );
        let status: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap_or_default();
        println!(
            "engine: {} synthesis workers, memory budget {} GiB, partition footprint {} GiB",
            engine.config().synthesis_threads(),
            status["memory"]["budget_bytes"].as_u64().unwrap_or(0) >> 30,
            srs.partition_bytes() >> 30
        );
        if cc {
            engine.adopt_srs(srs.clone())?;
        }
        if let Some(p) = probe {
            engine.adopt_circuit(p.r1cs.clone());
            engine.adopt_srs(p.srs.clone())?;
        }
        // As a node submits (generated inputs: checked, proved and verified by the engine).
        let submit = || work.submit(&engine, srs);
        let finish = |id| -> cuzk::error::Result<Arc<cuzk::engine::JobResult>> {
            let snap = engine.wait(id, Some(Duration::from_secs(3000)))?;
            match (snap.state, snap.result) {
                (JobState::Done, Some(r)) => Ok(r),
                _ => Err(snap.error.unwrap_or_else(|| cuzk::err!(Internal, "job ended in {:?}", snap.state))),
            }
        };
        let t = Instant::now();
        let (id, one_at) = submit()?;
        let one = finish(id)?;
        let latency = t.elapsed().as_secs_f64();
        println!("one job: {latency:.2}s {}", cuzk::engine::result_json(&one));
        if verify && !one.verified {
            return Err(cuzk::err!(Verification, "the engine did not verify the proof of the generated sector"));
        }
        if let Some(p) = probe {
            // Once alone, so the probe's own first job (its kind's setup) is not in the figures.
            let r = finish(p.work.submit(&engine, &p.srs)?.0)?;
            println!("probe {} alone: {:.3}s (verified {}; {})", p.circuit.name(), r.timings.total.as_secs_f64(), r.verified, breakdown(&r));
        }
        let t = Instant::now();
        let ids = (0..jobs).map(|_| submit()).collect::<cuzk::error::Result<Vec<_>>>()?;
        // The probes, one after the other while the jobs run.
        let probed: Vec<f64> = match probe {
            Some(p) => (0..p.count)
                .map(|i| {
                    std::thread::sleep(p.gap);
                    let t = Instant::now();
                    let r = finish(p.work.submit(&engine, &p.srs)?.0)?;
                    let took = t.elapsed().as_secs_f64();
                    let busy = ids.iter().filter(|&&(id, _)| engine.poll(id).map_or(false, |s| !s.state.is_final())).count();
                    println!("probe {i}: {took:.3}s (verified {}; {}), {busy} of {jobs} jobs unfinished", r.verified, breakdown(&r));
                    Ok(took)
                })
                .collect::<cuzk::error::Result<_>>()?,
            None => Vec::new(),
        };
        let results = ids.iter().map(|&(id, _)| finish(id)).collect::<cuzk::error::Result<Vec<_>>>()?;
        let stream = t.elapsed().as_secs_f64();
        if !probed.is_empty() {
            let worst = probed.iter().copied().fold(0.0, f64::max);
            println!("probes while {jobs} {proof} jobs ran: median {:.3}s, worst {worst:.3}s of {}", median(&probed), probed.len());
        }
        if verify {
            let verified = results.iter().filter(|r| r.verified).count();
            let verify: Vec<String> = results.iter().map(|r| format!("{:.2}", r.timings.verify.as_secs_f64())).collect();
            println!("verified {verified} of {jobs} proofs of the generated sector against the test SRS's vk (verify s: {}; one job {:.2})", verify.join(" "), one.timings.verify.as_secs_f64());
            if verified != jobs {
                return Err(cuzk::err!(Verification, "{} of {jobs} proofs not verified", jobs - verified));
            }
        }
        if let Some(path) = &timeline {
            let job = |r: &cuzk::engine::JobResult, at: Instant, t0: Instant| {
                serde_json::json!({"submitted_s": at.duration_since(t0).as_secs_f64(), "timings": cuzk::engine::timings_json(&r.timings)})
            };
            let runs = serde_json::json!({
                "proof": proof,
                "runs": [
                    {"name": format!("{proof}: one job ({latency:.1} s)"), "jobs": [job(&one, one_at, one_at)]},
                    {"name": format!("{proof}: {jobs} jobs submitted at once ({:.1} s per proof)", stream / jobs as f64),
                     "jobs": results.iter().zip(&ids).map(|(r, &(_, at))| job(r, at, ids[0].1)).collect::<Vec<_>>()},
                ],
            });
            std::fs::write(path, runs.to_string()).map_err(|e| cuzk::err!(Internal, "writing {path}: {e}"))?;
        }
        let prove: f64 = results.iter().map(|r| r.timings.prove.as_secs_f64()).sum();
        let synth: f64 = results.iter().map(|r| r.timings.synthesis.as_secs_f64()).sum();
        let partitions = results.iter().map(|r| r.partitions).sum::<usize>();
        // The device is busy while any partition is in the prover (with two lanes they overlap).
        let t0 = ids[0].1;
        let mut busy: Vec<(f64, f64)> = results
            .iter()
            .zip(&ids)
            .flat_map(|(r, &(_, at))| {
                let off = at.duration_since(t0).as_secs_f64();
                r.timings.spans.iter().filter(|s| s.stage == cuzk::engine::Stage::Prove).map(move |s| (off + s.start.as_secs_f64(), off + s.end.as_secs_f64()))
            })
            .collect();
        let busy = union_seconds(&mut busy);
        println!(
            "stream: {jobs} jobs in {stream:.1}s = {:.2}s per proof; prover busy {:.0}% (union of prove spans {busy:.1}s; sum {prove:.1}s over {lanes} lane(s)); synthesis {:.2}s per partition",
            stream / jobs as f64,
            100.0 * busy / stream,
            synth / partitions as f64
        );
        Ok(serde_json::json!({
            "gpu_lanes": lanes, "vram_budget_mib": vram_budget_mib, "inputs": match (cc, verify) { (true, true) => "cc (verified)", (true, false) => "cc, random SRS", _ => "shaped" }, "recorded": recorded, "latency_s": latency,
            "one_job": cuzk::engine::result_json(&one), "stream_jobs": jobs, "stream_s": stream,
            "stream_per_proof_s": stream / jobs as f64, "prover_busy": busy / stream, "prove_sum_s": prove,
            "synthesis_per_partition_s": synth / partitions as f64, "prove_per_partition_s": prove / partitions as f64, "probes_s": probed,
            "synthesis_workers": engine.config().synthesis_threads(), "status": serde_json::from_str::<serde_json::Value>(&engine.status_json()).unwrap_or_default(),
        }))
    }
}

/// Where a probe's time went: the engine's own timers, and where it was proved.
fn breakdown(r: &cuzk::engine::JobResult) -> String {
    let t = &r.timings;
    let on_cpu = t.phases.0.iter().any(|(name, _)| *name == "urgent_on_cpu");
    let phase = |name: &str| t.phases.0.iter().filter(|(n, _)| *n == name).map(|(_, d)| d.as_secs_f64()).sum::<f64>();
    format!(
        "queue {:.3}, witness gate {:.3}, memory {:.3}, synthesis {:.3}, prepare {:.3}, waiting for a prover {:.3}, prove {:.3} on the {}, verify {:.3}",
        t.queue.as_secs_f64(),
        phase("witness_gate_wait"),
        phase("memory_wait"),
        t.synthesis.as_secs_f64(),
        phase("prover_prepare"),
        t.prove_queue.as_secs_f64(),
        t.prove.as_secs_f64(),
        if on_cpu { "CPU" } else { "GPU" },
        t.verify.as_secs_f64()
    )
}

/// Seconds covered by the union of `spans` (start, end).
fn union_seconds(spans: &mut [(f64, f64)]) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut total, mut end) = (0.0, f64::NEG_INFINITY);
    for &(s, e) in spans.iter() {
        if e > end {
            total += e - s.max(end);
            end = e;
        }
    }
    total
}
