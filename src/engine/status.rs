//! Engine status as JSON (for dashboards and the C ABI's status call).

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{json, Value};

use super::job::{JobResult, JobState, JobTimings};
use super::Engine;
use crate::registry;

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A job result's timers and facts as JSON (seconds).
pub fn result_json(r: &JobResult) -> Value {
    let mut v = timings_json(&r.timings);
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

/// Remembered jobs per state, indexed by `JobState as usize`.
fn jobs_by_state(engine: &Engine) -> [u64; 5] {
    let mut by_state = [0u64; 5];
    for j in engine.shared.jobs.lock().unwrap_or_else(|e| e.into_inner()).by_id.values() {
        by_state[j.state() as usize] += 1;
    }
    by_state
}

pub(super) fn status_json(engine: &Engine) -> String {
    let sh = &engine.shared;
    let by_state = jobs_by_state(engine);
    let srs: Vec<Value> = sh
        .srs
        .all()
        .iter()
        .map(|s| {
            json!({
                "registered_proof": registry::name(s.proof),
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
                "usable": d.usable,
                "error": d.error,
                "proofs": d.proofs,
                "failures": d.failures,
            })
        })
        .collect();
    let d = sh.dealloc.stats();
    let c = &sh.counters;
    let mem = sh.memory.snapshot();
    json!({
        "version": crate::VERSION,
        "abi_version": crate::ABI_VERSION,
        "backend": sh.backend.name(),
        "devices": devices,
        "uptime_s": sh.started.elapsed().as_secs_f64(),
        "synthesis_workers": sh.config.synthesis_threads(),
        "queued_partitions": sh.queue.len(),
        "jobs": {
            JobState::Queued.name(): by_state[0],
            JobState::Running.name(): by_state[1],
            JobState::Done.name(): by_state[2],
            JobState::Failed.name(): by_state[3],
            JobState::Cancelled.name(): by_state[4],
        },
        "totals": {
            "submitted": c.submitted.load(Ordering::Relaxed),
            "done": c.done.load(Ordering::Relaxed),
            "failed": c.failed.load(Ordering::Relaxed),
            "cancelled": c.cancelled.load(Ordering::Relaxed),
        },
        "srs": srs,
        "circuits": sh.circuits.status_json(),
        "memory": {
            "budget_bytes": sh.memory_limit(),
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

/// The same numbers in the Prometheus text format.
pub(super) fn metrics_text(engine: &Engine) -> String {
    use std::fmt::Write;
    let sh = &engine.shared;
    let by_state = jobs_by_state(engine);
    let mut o = String::new();
    let _ = writeln!(o, "# HELP cuzk_jobs Jobs currently remembered, by state.\n# TYPE cuzk_jobs gauge");
    for (i, st) in [JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled].iter().enumerate() {
        let _ = writeln!(o, "cuzk_jobs{{state=\"{}\"}} {}", st.name(), by_state[i]);
    }
    let c = &sh.counters;
    let _ = writeln!(o, "# HELP cuzk_jobs_total Jobs by final outcome since start.\n# TYPE cuzk_jobs_total counter");
    for (name, v) in [("submitted", &c.submitted), ("done", &c.done), ("failed", &c.failed), ("cancelled", &c.cancelled)] {
        let _ = writeln!(o, "cuzk_jobs_total{{outcome=\"{name}\"}} {}", v.load(Ordering::Relaxed));
    }
    let _ = writeln!(o, "# HELP cuzk_srs_resident_bytes Decoded SRS bytes held in memory.\n# TYPE cuzk_srs_resident_bytes gauge");
    for s in sh.srs.all() {
        let _ = writeln!(o, "cuzk_srs_resident_bytes{{proof=\"{}\"}} {}", registry::name(s.proof), s.resident_bytes);
    }
    let devices = sh.backend.devices();
    if !devices.is_empty() {
        let _ = writeln!(o, "# HELP cuzk_device_usable Whether a device can still prove (0 once its context is lost).\n# TYPE cuzk_device_usable gauge");
        for d in &devices {
            let _ = writeln!(o, "cuzk_device_usable{{device=\"{}\"}} {}", d.index, d.usable as u8);
        }
        let _ = writeln!(o, "# HELP cuzk_device_proofs_total Partition proofs per device and outcome.\n# TYPE cuzk_device_proofs_total counter");
        for d in &devices {
            let _ = writeln!(o, "cuzk_device_proofs_total{{device=\"{}\",outcome=\"ok\"}} {}", d.index, d.proofs);
            let _ = writeln!(o, "cuzk_device_proofs_total{{device=\"{}\",outcome=\"failed\"}} {}", d.index, d.failures);
        }
    }
    let d = sh.dealloc.stats();
    let _ = writeln!(o, "# HELP cuzk_dealloc_pending_bytes Bytes queued for the deallocator thread.\n# TYPE cuzk_dealloc_pending_bytes gauge");
    let _ = writeln!(o, "cuzk_dealloc_pending_bytes {}", d.pending_bytes.load(Ordering::Relaxed));
    let mem = sh.memory.snapshot();
    let _ = writeln!(o, "# HELP cuzk_memory_reserved_bytes Bytes reserved by partitions between synthesis and freeing.\n# TYPE cuzk_memory_reserved_bytes gauge");
    let _ = writeln!(o, "cuzk_memory_reserved_bytes {}", mem.reserved);
    let _ = writeln!(o, "# HELP cuzk_memory_budget_bytes Bytes partitions may reserve now.\n# TYPE cuzk_memory_budget_bytes gauge");
    let _ = writeln!(o, "cuzk_memory_budget_bytes {}", sh.memory_limit());
    let _ = writeln!(o, "# HELP cuzk_synthesis_waiting_for_memory Synthesis workers waiting for room.\n# TYPE cuzk_synthesis_waiting_for_memory gauge");
    let _ = writeln!(o, "cuzk_synthesis_waiting_for_memory {}", mem.waiting);
    let _ = writeln!(o, "# HELP cuzk_queued_partitions Partitions waiting for synthesis.\n# TYPE cuzk_queued_partitions gauge");
    let _ = writeln!(o, "cuzk_queued_partitions {}", sh.queue.len());
    o
}
