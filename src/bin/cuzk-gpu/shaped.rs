//! `bench-shaped`: the whole engine path at a real sector shape on the GPU — submit, synthesis on
//! all cores, memory budget, CUDA prover, finish. Two kinds of input:
//! - `--inputs shaped` (default): a shaped C1 (no sealing; fixtures::shaped_c1) against a
//!   random-point SRS of exactly that proof's section sizes (tiled: seconds to make). The
//!   circuits are not satisfiable, so verification is off: this times, it proves nothing.
//! - `--inputs cc`: a generated committed-capacity sector (fixtures::cc_sector_c1: satisfiable)
//!   against a generated test SRS for the recorded circuit (fixtures::test_srs: genuine, seeded
//!   toxic waste — a test SRS, never for production), verification on: every proof is checked
//!   by the engine against that SRS's verifying key, and the verify time is reported.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;

/// The prover id and sector number the shaped C1 is made for (and parsed with).
const PROVER: [u8; 32] = [9; 32];
const SECTOR: u64 = 3;

fn sections(proof: RegisteredSealProof) -> cuzk::error::Result<synthetic::Shape> {
    let [ic, h, l, a, b, _] =
        cuzk::srs::expected_sections(proof).ok_or_else(|| cuzk::err!(Unsupported, "no shape for {proof:?}"))?;
    Ok(synthetic::Shape { h, inputs: ic, aux: l, a, b })
}

pub(crate) fn bench_shaped(args: &Parsed) -> bool {
    let proof = args.text("proof").map_or(Ok(RegisteredSealProof::StackedDrg32GiBV1_1), cuzk::kinds::registry::parse_seal);
    let jobs: usize = args.num("jobs", 2);
    // 1: partitions through the proof type's recorded circuit (recorded before timing, as a
    // long-running node has it); 0: full synthesis.
    let recorded = args.num("recorded", 1usize) != 0;
    let workers: usize = args.num("synthesis-workers", 0);
    let cc = match args.text("inputs") {
        None | Some("shaped") => false,
        Some("cc") => true,
        Some(other) => {
            println!("FAIL bench-shaped: --inputs {other}: expected shaped or cc");
            return false;
        }
    };
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
        let proof = proof?;
        let t = Instant::now();
        let (c1, sector) = if cc {
            let (c1, s) = cuzk::fixtures::cc_sector_c1(proof, 21)?;
            println!("generated CC sector C1 (satisfiable): {} MB in {:.1}s", c1.len() >> 20, t.elapsed().as_secs_f64());
            (Arc::new(c1), (s.prover_id, s.sector_id))
        } else {
            let c1 = cuzk::fixtures::shaped_c1(proof, 21, PROVER, SECTOR)?;
            println!("shaped C1: {} MB in {:.1}s", c1.len() >> 20, t.elapsed().as_secs_f64());
            (Arc::new(c1), (PROVER, SECTOR))
        };
        let recorded = recorded || cc; // the test SRS is made from the recorded circuit
        let t = Instant::now();
        // The circuit is recorded from a partition of the C1 (its challenges on all threads, as
        // the engine records at a proof type's first job) while the SRS is made.
        let recording = recorded.then(|| {
            let c1 = c1.clone();
            std::thread::spawn(move || {
                let shape = sections(proof)?;
                let hint = cuzk::synth::SizeHint { constraints: shape.h + 1, inputs: shape.inputs, aux: shape.aux };
                let inputs = cuzk::kinds::porep::parse_c1(&c1, &sector.0, sector.1)?;
                let t = Instant::now();
                let r = inputs.circuits.record(0, hint, &|| false)?;
                Ok::<_, cuzk::error::Error>((r, t.elapsed().as_secs_f64()))
            })
        });
        let mut srs = None;
        if !cc {
            let s = Srs::from_parameters(proof, synthetic::random_params_tiled(sections(proof)?, 5, 1 << 20));
            println!("{proof:?}: random SRS ({} MiB resident) in {:.1}s", s.resident_bytes >> 20, t.elapsed().as_secs_f64());
            srs = Some(Arc::new(s));
        }
        let r1cs = match recording {
            Some(h) => {
                let (r, took) = h.join().map_err(|_| cuzk::err!(Internal, "recording panicked"))??;
                println!("recorded circuit (partition 0, challenges on all threads): {:.1}s, {:?} (ready {:.1}s after start)", took, r.stats(), t.elapsed().as_secs_f64());
                Some(Arc::new(r))
            }
            None => None,
        };
        let srs = match srs {
            Some(s) => s,
            None => {
                let t = Instant::now();
                let r = r1cs.as_ref().ok_or_else(|| cuzk::err!(Internal, "no recorded circuit for the test SRS"))?;
                let params = cuzk::fixtures::test_srs(r, 21)?;
                let s = Srs::from_parameters(proof, params);
                println!(
                    "{proof:?}: TEST SRS (seeded toxic waste: never for production; {} MiB resident) generated in {:.1}s",
                    s.resident_bytes >> 20,
                    t.elapsed().as_secs_f64()
                );
                Arc::new(s)
            }
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
            summaries.push(run_engine(proof, &c1, &srs, r1cs.clone(), Setup { jobs, workers, recorded, lanes, vram_budget_mib, timeline: path, cc, sector })?);
        }
        Ok(serde_json::json!({"bench": "shaped-e2e-cuda", "proof": format!("{proof:?}"), "runs": summaries}))
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
    /// Satisfiable inputs: submitted as C1 outputs of this (prover id, sector id), verified.
    cc: bool,
    sector: ([u8; 32], u64),
}

/// One engine (its own CUDA backend: the SRS and circuit go to VRAM again) with `lanes` GPU
/// lanes: one job's latency, then `jobs` jobs at once.
fn run_engine(
    proof: RegisteredSealProof,
    c1: &[u8],
    srs: &Arc<Srs>,
    r1cs: Option<Arc<cuzk::synth::R1cs>>,
    setup: Setup,
) -> cuzk::error::Result<serde_json::Value> {
    let Setup { jobs, workers, recorded, lanes, vram_budget_mib, timeline, cc, sector } = setup;
    {
        // Started after the SRS exists, so the automatic memory budget leaves room for it.
        let engine = Engine::new(EngineConfig {
            backend: "cuda".into(),
            verify: cc,
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
        let submit = || -> cuzk::error::Result<(u64, Instant)> {
            let t = Instant::now();
            if cc {
                // As a node submits: the C1 bytes, checked, proved and verified by the engine.
                let req = cuzk::engine::SubmitRequest { c1_json: c1, sector_id: sector.1, prover_id: sector.0, priority: 0, request_id: None };
                return Ok((engine.submit(req)?, t));
            }
            let inputs = cuzk::kinds::porep::parse_c1(c1, &sector.0, sector.1)?;
            println!("  parse+validate {:.2}s", t.elapsed().as_secs_f64());
            let at = Instant::now();
            Ok((engine.submit_circuits(cuzk::kinds::seal_inputs(inputs, sector.0, sector.1), srs.clone(), 0)?, at))
        };
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
        if cc && !one.verified {
            return Err(cuzk::err!(Verification, "the engine did not verify the proof of the generated sector"));
        }
        let t = Instant::now();
        let ids = (0..jobs).map(|_| submit()).collect::<cuzk::error::Result<Vec<_>>>()?;
        let results = ids.iter().map(|&(id, _)| finish(id)).collect::<cuzk::error::Result<Vec<_>>>()?;
        let stream = t.elapsed().as_secs_f64();
        if cc {
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
                "proof": format!("{proof:?}"),
                "runs": [
                    {"name": format!("{proof:?}: one job ({latency:.1} s)"), "jobs": [job(&one, one_at, one_at)]},
                    {"name": format!("{proof:?}: {jobs} jobs submitted at once ({:.1} s per proof)", stream / jobs as f64),
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
            "gpu_lanes": lanes, "vram_budget_mib": vram_budget_mib, "inputs": if cc { "cc (verified)" } else { "shaped" }, "recorded": recorded, "latency_s": latency,
            "one_job": cuzk::engine::result_json(&one), "stream_jobs": jobs, "stream_s": stream,
            "stream_per_proof_s": stream / jobs as f64, "prover_busy": busy / stream, "prove_sum_s": prove,
            "synthesis_per_partition_s": synth / partitions as f64, "prove_per_partition_s": prove / partitions as f64,
            "synthesis_workers": engine.config().synthesis_threads(), "status": serde_json::from_str::<serde_json::Value>(&engine.status_json()).unwrap_or_default(),
        }))
    }
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
