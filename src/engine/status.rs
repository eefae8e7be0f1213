//! Engine status as JSON (for dashboards and the C ABI's status call).

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{json, Value};

use super::job::{JobResult, JobState, JobTimings};
use super::metrics::{family, per_device, single};
use super::{total, Engine};
use crate::kinds::ProofKind;

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A job result's timers and facts as JSON (seconds).
pub fn result_json(r: &JobResult) -> Value {
    let mut v = timings_json(&r.timings);
    v["kind"] = json!(r.kind.name());
    v["backend"] = json!(r.backend);
    v["partitions"] = json!(r.partitions);
    v["cpu_fallback_partitions"] = json!(r.cpu_fallback_partitions);
    v["verified"] = json!(r.verified);
    v["proof_bytes"] = json!(r.proof.len());
    v
}

/// Timings as a JSON object (seconds).
pub fn timings_json(t: &JobTimings) -> Value {
    let phases: serde_json::Map<String, Value> =
        t.phases.0.iter().map(|(n, d)| (n.to_string(), json!(secs(*d)))).collect();
    json!({
        "queue_s": secs(t.queue),
        "srs_s": secs(t.srs),
        "synthesis_s": secs(t.synthesis),
        "prove_queue_s": secs(t.prove_queue),
        "prove_s": secs(t.prove),
        "verify_s": secs(t.verify),
        "total_s": secs(t.total),
        "phases_s": phases,
        // [partition, stage, start_s, end_s] from submit, in the order they ended.
        "spans": t.spans.iter().map(|s| json!([s.partition, s.stage.name(), secs(s.start), secs(s.end)])).collect::<Vec<_>>(),
    })
}

/// Remembered jobs per state, indexed by `JobState as usize`, and unfinished jobs per kind.
fn jobs_by_state(engine: &Engine) -> ([u64; 5], serde_json::Map<String, Value>) {
    let mut by_state = [0u64; 5];
    let mut by_kind = std::collections::BTreeMap::<&str, u64>::new();
    for j in engine.shared.jobs.lock().unwrap_or_else(|e| e.into_inner()).by_id.values() {
        let state = j.state();
        by_state[state as usize] += 1;
        if !state.is_final() {
            *by_kind.entry(j.kind.name()).or_default() += 1;
        }
    }
    (by_state, by_kind.into_iter().map(|(k, n)| (k.to_owned(), json!(n))).collect())
}

/// `busy` over `of`, 0 for an empty interval.
fn fraction(busy: Duration, of: Duration) -> f64 {
    if of.is_zero() {
        0.0
    } else {
        (busy.as_secs_f64() / of.as_secs_f64()).min(1.0)
    }
}

pub(super) fn status_json(engine: &Engine) -> String {
    let sh = &engine.shared;
    let uptime = sh.started.elapsed();
    let (by_state, by_kind) = jobs_by_state(engine);
    let on_devices = !sh.backend.devices().is_empty();
    let srs: Vec<Value> = sh
        .srs
        .all()
        .iter()
        .map(|s| {
            // What its proofs need on a device in resident mode (`prover::vram`), for sizing.
            let r1cs = sh.circuits.get(s.circuit);
            let f = crate::prover::vram::Footprint::of_srs(s, r1cs.as_deref());
            let vram = on_devices.then(|| json!({"one_lane_bytes": f.resident(1), "two_lanes_bytes": f.resident(2)}));
            json!({
                "vram_needed": vram,
                "registered_proof": s.circuit.name(),
                "kind": s.circuit.kind().name(),
                "path": s.path.display().to_string(),
                "file_bytes": s.file_bytes,
                "resident_bytes": s.resident_bytes,
                "load_s": secs(s.load_time),
                "validation": s.validation.name(),
                "from_cache": s.from_cache,
            })
        })
        .collect();
    let devices: Vec<Value> = sh
        .backend
        .devices()
        .iter()
        .map(|d| {
            json!({
                "index": d.index,
                "name": d.name,
                "total_bytes": d.total_bytes,
                "free_bytes": d.free_bytes,
                "vram_budget_bytes": d.budget_bytes,
                "pinned_host_bytes": d.pinned_host_bytes,
                "usable": d.usable,
                "error": d.error,
                "proofs": d.proofs,
                "failures": d.failures,
                "shared_passes": d.shared_passes,
                "pcie_h2d_bytes": d.h2d_bytes,
                "pcie_d2h_bytes": d.d2h_bytes,
                "pcie_busy_s": secs(d.pcie_busy),
                "lanes": d.lanes,
                "busy_s": secs(d.busy),
                "busy_fraction": fraction(d.busy, uptime),
            })
        })
        .collect();
    let urgent_lane = sh.lanes.len() - 1;
    let lanes: Vec<Value> = sh
        .lanes
        .snapshot()
        .iter()
        .enumerate()
        .map(|(k, l)| {
            json!({
                "lane": k,
                // The urgent prover: work above the default priority only (PoSt).
                "urgent": k == urgent_lane,
                "busy_s": secs(l.busy),
                "busy_fraction": fraction(l.busy, uptime),
                "partitions": l.partitions,
                "failures": l.failures,
                "proving": l.proving,
            })
        })
        .collect();
    let d = sh.dealloc.stats();
    let c = &sh.counters;
    let mem = sh.memory.snapshot();
    let ((queued_jobs, queued_bytes), (max_jobs, max_bytes)) = (sh.admission.held(), sh.admission.limits());
    json!({
        "version": crate::VERSION,
        "abi_version": crate::ABI_VERSION,
        "backend": sh.backend.name(),
        "devices": devices,
        "prover_lanes": lanes,
        "uptime_s": secs(uptime),
        "synthesis_workers": sh.config.synthesis_threads(),
        "queued_partitions": sh.queue.len(),
        "partitions_awaiting_prover": sh.awaiting_prover.load(Ordering::Relaxed),
        "jobs": {
            JobState::Queued.name(): by_state[0],
            JobState::Running.name(): by_state[1],
            JobState::Done.name(): by_state[2],
            JobState::Failed.name(): by_state[3],
            JobState::Cancelled.name(): by_state[4],
        },
        "unfinished_jobs_by_kind": by_kind,
        "queue": {
            "jobs": queued_jobs,
            "input_bytes": queued_bytes,
            "max_jobs": max_jobs,
            "max_input_bytes": max_bytes,
            "refused": sh.admission.refused(),
        },
        "totals": {
            "submitted": total(&c.submitted),
            "done": total(&c.done),
            "failed": total(&c.failed),
            "cancelled": total(&c.cancelled),
        },
        "srs": srs,
        "circuits": sh.circuits.status_json(),
        "memory": {
            "budget_bytes": sh.memory_limit(),
            "budget_source": sh.memory_source(),
            "reserved_bytes": mem.reserved,
            "peak_reserved_bytes": mem.peak,
            "partitions_holding": mem.holders,
            "synthesis_waiting": mem.waiting,
        },
        "dealloc": {
            "pending_bytes": d.pending_bytes.load(Ordering::Relaxed),
            "freed_bytes": d.freed_bytes.load(Ordering::Relaxed),
            "free_s": d.free_nanos.load(Ordering::Relaxed) as f64 * 1e-9,
        },
    })
    .to_string()
}

/// The same numbers in the Prometheus text format: base units in the names (`_seconds`,
/// `_bytes`), counters end in `_total`, every family has HELP and TYPE, and each outcome is
/// counted once (`cuzk_jobs_finished_total{kind,outcome}` sums to the jobs that ended).
pub(super) fn metrics_text(engine: &Engine) -> String {
    use std::fmt::Write;
    let sh = &engine.shared;
    let mut o = String::new();
    let (by_state, _) = jobs_by_state(engine);
    family(&mut o, "cuzk_jobs", "gauge", "Jobs the engine remembers now, by state (finished ones until their TTL).");
    for (i, st) in [JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled].iter().enumerate() {
        let _ = writeln!(o, "cuzk_jobs{{state=\"{}\"}} {}", st.name(), by_state[i]);
    }
    let c = &sh.counters;
    family(&mut o, "cuzk_jobs_submitted_total", "counter", "Jobs accepted since the engine started, by kind.");
    for k in ProofKind::ALL {
        let _ = writeln!(o, "cuzk_jobs_submitted_total{{kind=\"{}\"}} {}", k.name(), c.submitted[k as usize].load(Ordering::Relaxed));
    }
    family(&mut o, "cuzk_jobs_finished_total", "counter", "Jobs that ended since the engine started, by kind and outcome (each job once).");
    for k in ProofKind::ALL {
        for (name, v) in [("done", &c.done), ("failed", &c.failed), ("cancelled", &c.cancelled)] {
            let _ = writeln!(o, "cuzk_jobs_finished_total{{kind=\"{}\",outcome=\"{name}\"}} {}", k.name(), v[k as usize].load(Ordering::Relaxed));
        }
    }
    family(&mut o, "cuzk_build_info", "gauge", "This library's version, its C ABI version, its backend and the CUDA architectures compiled in (always 1).");
    let _ = writeln!(
        o,
        "cuzk_build_info{{version=\"{}\",abi=\"{}\",backend=\"{}\",cuda_compiled=\"{}\",cuda_archs=\"{}\"}} 1",
        crate::VERSION,
        crate::ABI_VERSION,
        sh.backend.name(),
        cfg!(feature = "cuda"),
        option_env!("CUZK_CUDA_ARCHS_BUILT").unwrap_or("")
    );
    let ((queued_jobs, queued_bytes), (max_jobs, max_bytes)) = (sh.admission.held(), sh.admission.limits());
    single(&mut o, "cuzk_queue_jobs", "gauge", "Jobs accepted and not yet finished (what max_queued_jobs bounds).", queued_jobs);
    single(&mut o, "cuzk_queue_input_bytes", "gauge", "Bytes of those jobs' inputs, until freed (what max_queued_input_mib bounds).", queued_bytes);
    single(&mut o, "cuzk_queue_max_jobs", "gauge", "The max_queued_jobs bound.", max_jobs);
    single(&mut o, "cuzk_queue_max_input_bytes", "gauge", "The max_queued_input_mib bound, in bytes.", max_bytes);
    single(&mut o, "cuzk_jobs_refused_total", "counter", "Submits refused with QUEUE_FULL since the engine started.", sh.admission.refused());
    single(&mut o, "cuzk_queued_partitions", "gauge", "Partitions waiting for a synthesis worker.", sh.queue.len());
    let awaiting = sh.awaiting_prover.load(Ordering::Relaxed);
    single(&mut o, "cuzk_partitions_awaiting_prover", "gauge", "Synthesized partitions waiting for the prover.", awaiting);
    let mem = sh.memory.snapshot();
    single(&mut o, "cuzk_synthesis_waiting_for_memory", "gauge", "Synthesis workers waiting for room in the memory budget.", mem.waiting);
    single(&mut o, "cuzk_memory_reserved_bytes", "gauge", "Bytes reserved by partitions between synthesis and freeing.", mem.reserved);
    single(&mut o, "cuzk_memory_budget_bytes", "gauge", "Bytes partitions may reserve now.", sh.memory_limit());
    let d = sh.dealloc.stats();
    let pending = d.pending_bytes.load(Ordering::Relaxed);
    single(&mut o, "cuzk_dealloc_pending_bytes", "gauge", "Bytes queued for the deallocator thread.", pending);
    let freed = d.freed_bytes.load(Ordering::Relaxed);
    single(&mut o, "cuzk_dealloc_freed_bytes_total", "counter", "Bytes the deallocator thread has freed.", freed);
    let srs = sh.srs.all();
    family(&mut o, "cuzk_srs_resident_bytes", "gauge", "Decoded SRS bytes held in host memory, by proof type.");
    for s in &srs {
        let _ = writeln!(o, "cuzk_srs_resident_bytes{{proof=\"{}\"}} {}", s.circuit.name(), s.resident_bytes);
    }
    family(&mut o, "cuzk_srs_load_seconds", "gauge", "How long the resident SRS took to load, by proof type.");
    for s in &srs {
        let _ = writeln!(o, "cuzk_srs_load_seconds{{proof=\"{}\"}} {}", s.circuit.name(), s.load_time.as_secs_f64());
    }
    let lanes = sh.lanes.snapshot();
    family(&mut o, "cuzk_prover_lane_busy_seconds_total", "counter", "Time each prover lane spent in a backend's device part of a proof (the whole proof on the CPU backend).");
    for (k, l) in lanes.iter().enumerate() {
        let _ = writeln!(o, "cuzk_prover_lane_busy_seconds_total{{lane=\"{k}\"}} {}", l.busy.as_secs_f64());
    }
    family(&mut o, "cuzk_prover_lane_partitions_total", "counter", "Partitions each prover lane started, by outcome of its device part (each once).");
    for (k, l) in lanes.iter().enumerate() {
        let _ = writeln!(o, "cuzk_prover_lane_partitions_total{{lane=\"{k}\",outcome=\"ok\"}} {}", l.partitions - l.failures);
        let _ = writeln!(o, "cuzk_prover_lane_partitions_total{{lane=\"{k}\",outcome=\"failed\"}} {}", l.failures);
    }
    family(&mut o, "cuzk_prover_lane_proving", "gauge", "Whether a prover lane is proving a partition now.");
    for (k, l) in lanes.iter().enumerate() {
        let _ = writeln!(o, "cuzk_prover_lane_proving{{lane=\"{k}\"}} {}", l.proving as u8);
    }
    let devices = sh.backend.devices();
    if !devices.is_empty() {
        per_device(&mut o, &devices, "cuzk_device_usable", "gauge", "Whether a device can still prove (0 once its context is lost).", |d| d.usable as u8);
        per_device(&mut o, &devices, "cuzk_device_memory_total_bytes", "gauge", "Device memory, by device.", |d| d.total_bytes);
        family(&mut o, "cuzk_device_memory_free_bytes", "gauge", "Free device memory when scraped, by device (SRS bases, circuits and workspaces stay resident).");
        for (d, free) in devices.iter().filter_map(|d| Some((d, d.free_bytes?))) {
            let _ = writeln!(o, "cuzk_device_memory_free_bytes{{device=\"{}\"}} {free}", d.index);
        }
        family(&mut o, "cuzk_device_vram_budget_bytes", "gauge", "Device memory the backend may use, by device (vram_budget_mib, or what was free at start less 2 %).");
        for (d, b) in devices.iter().filter_map(|d| Some((d, d.budget_bytes?))) {
            let _ = writeln!(o, "cuzk_device_vram_budget_bytes{{device=\"{}\"}} {b}", d.index);
        }
        if let Some(p) = devices.iter().filter_map(|d| d.pinned_host_bytes).max() {
            single(&mut o, "cuzk_pinned_host_bytes", "gauge", "Host memory page-locked for what the GPUs stream (SRS sections and recorded circuits their VRAM budget does not hold, and the parking space of a lean stage H).", p);
        }
        per_device(&mut o, &devices, "cuzk_device_lanes", "gauge", "Partitions a device proves at once (gpu_lanes; 1 after a second workspace did not fit).", |d| d.lanes);
        per_device(&mut o, &devices, "cuzk_device_busy_seconds_total", "counter", "Time a device had at least one lane proving (its lanes overlapping count once).", |d| d.busy.as_secs_f64());
        family(&mut o, "cuzk_device_pcie_bytes_total", "counter", "Bytes the proofs on a device copied over PCIe (streamed SRS and circuit tiles, a, b, c or the witness, queries, parked vectors), by direction.");
        for d in &devices {
            let _ = writeln!(o, "cuzk_device_pcie_bytes_total{{device=\"{}\",direction=\"h2d\"}} {}", d.index, d.h2d_bytes);
            let _ = writeln!(o, "cuzk_device_pcie_bytes_total{{device=\"{}\",direction=\"d2h\"}} {}", d.index, d.d2h_bytes);
        }
        per_device(&mut o, &devices, "cuzk_device_pcie_busy_seconds_total", "counter", "Time a device's proofs had a copy over PCIe moving data (per proof, summed).", |d| d.pcie_busy.as_secs_f64());
        per_device(&mut o, &devices, "cuzk_device_shared_passes_total", "counter", "Partitions whose sums of ones and significant parts another partition's pass over the streamed SRS tiles made (streamed mode).", |d| d.shared_passes);
        family(&mut o, "cuzk_device_partitions_total", "counter", "Partition proofs per device, by outcome (each once).");
        for d in &devices {
            let _ = writeln!(o, "cuzk_device_partitions_total{{device=\"{}\",outcome=\"ok\"}} {}", d.index, d.proofs);
            let _ = writeln!(o, "cuzk_device_partitions_total{{device=\"{}\",outcome=\"failed\"}} {}", d.index, d.failures);
        }
    }
    sh.durations.write(&mut o);
    o
}

/// Jobs of one kind, as [`Engine::overview`] counts them.
#[derive(Debug, Clone, Copy, Default)]
pub struct KindCounts {
    /// Accepted and not yet started (remembered jobs in state queued).
    pub queued: u64,
    /// Started (synthesizing or proving) and not ended.
    pub running: u64,
    /// Since the engine started.
    pub done: u64,
    pub failed: u64,
    pub cancelled: u64,
}

/// The engine's state as typed values (what `status_json` reports as JSON), for embedders such
/// as the daemon that re-export it in another form.
#[derive(Clone)]
pub struct Overview {
    /// Indexed by `ProofKind as usize`.
    pub kinds: [KindCounts; 4],
    pub devices: Vec<crate::prover::DeviceStatus>,
    /// The resident SRSes, each with the unfinished jobs proving against it.
    pub srs: Vec<(std::sync::Arc<crate::srs::Srs>, u64)>,
    pub uptime: Duration,
}

pub(super) fn overview(engine: &Engine) -> Overview {
    let sh = &engine.shared;
    let mut kinds = [KindCounts::default(); 4];
    let mut srs: Vec<_> = sh.srs.all().into_iter().map(|s| (s, 0)).collect();
    for j in sh.jobs.lock().unwrap_or_else(|e| e.into_inner()).by_id.values() {
        let k = &mut kinds[j.kind as usize];
        match j.state() {
            JobState::Queued => k.queued += 1,
            JobState::Running => k.running += 1,
            _ => continue,
        }
        if let Some((_, n)) = srs.iter_mut().find(|(s, _)| j.holds_srs(s)) {
            *n += 1;
        }
    }
    let c = &sh.counters;
    for kind in ProofKind::ALL {
        let (k, i) = (&mut kinds[kind as usize], kind as usize);
        k.done = c.done[i].load(Ordering::Relaxed);
        k.failed = c.failed[i].load(Ordering::Relaxed);
        k.cancelled = c.cancelled[i].load(Ordering::Relaxed);
    }
    Overview { kinds, devices: sh.backend.devices(), srs, uptime: sh.started.elapsed() }
}
