//! Engine configuration: a JSON object so the C ABI never has to change shape when it grows.
//! Unknown keys are rejected (a typo must not silently fall back to a default).

use std::path::PathBuf;

use serde::Deserialize;

use crate::error::{Result, ResultExt, Status};
use crate::srs::Validation;

/// Bounds of the numeric keys (documented in the README): beyond them a value is a mistake, and
/// honouring it would exhaust threads or memory.
pub(crate) const MAX_SYNTHESIS_WORKERS: usize = 1024;
pub(crate) const MAX_PROVE_QUEUE_DEPTH: usize = 1024;
pub(crate) const MAX_MEMORY_BUDGET_MIB: u64 = 1 << 30;
pub(crate) const MAX_JOB_TTL_SECS: u64 = 30 * 24 * 3600;
/// Partitions in flight per CUDA device (`prover::cuda` uses at most two).
pub(crate) const MAX_GPU_LANES: usize = 2;
/// Partitions the CPU backend proves at once (they share the cores).
pub(crate) const MAX_CPU_LANES: usize = 16;
/// CUDA device ordinals are small; a larger one is a typo.
pub(crate) const MAX_DEVICES: usize = 1024;
pub(crate) const MAX_MAX_QUEUED_JOBS: u64 = 1_000_000;
/// The smallest VRAM budget worth configuring (the CUDA context alone takes a few hundred MiB),
/// and the largest (16 TiB: no device comes near it).
pub(crate) const MIN_VRAM_BUDGET_MIB: u64 = 1024;
pub(crate) const MAX_VRAM_BUDGET_MIB: u64 = 1 << 24;
pub(crate) const MAX_MAX_QUEUED_INPUT_MIB: u64 = 1 << 20;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// "auto" (CUDA when compiled in and a device is present, else CPU), "cpu" or "cuda".
    pub backend: String,
    /// CUDA device ordinals to prove on (as CUDA numbers them, after `CUDA_VISIBLE_DEVICES`).
    /// Absent: every device. Not allowed with backend "cpu".
    pub devices: Option<Vec<usize>>,
    /// Partitions each CUDA device proves at once (1 or 2; 0 = automatic: 2). With 2, one
    /// partition's stage H (witness upload, a·b·c, NTTs) runs under the previous one's MSMs; it
    /// costs a second workspace of device memory (~30 GB at 32 GiB), and a device where that does
    /// not fit goes back to 1 by itself.
    pub gpu_lanes: usize,
    /// Partitions the CPU backend proves at once (backend "cpu", or "auto" without a device;
    /// 0 = automatic: 1). They share the cores, so 2 buys no throughput, but a short proof (a
    /// WinningPoSt) starts beside a long C2 partition instead of waiting for it to finish.
    pub cpu_lanes: usize,
    /// Threads synthesizing partitions concurrently. 0 = automatic.
    pub synthesis_workers: usize,
    /// Synthesized partitions allowed to wait for the prover (bounds RAM).
    pub prove_queue_depth: usize,
    /// MiB that partitions may hold from synthesis until their buffers are freed (see
    /// `engine::memory`). 0 = automatic: 90 % of the memory available at engine start, less
    /// the resident SRSes.
    pub memory_budget_mib: u64,
    /// Verify every proof before returning it (filecoin-proofs always does).
    pub verify: bool,
    /// Where `srs_load` looks for `v28-*.params` when given no path.
    /// Default: `FIL_PROOFS_PARAMETER_CACHE`, then `/var/tmp/filecoin-proof-parameters`.
    pub params_dir: Option<PathBuf>,
    /// "none", "on_curve" (default) or "full"; see `srs::Validation`.
    pub srs_validation: String,
    /// Directory of the decoded-SRS cache (`srs::cache`): later loads of a params file read
    /// its decoded points from here instead of decoding. Off by default: a cache file is as
    /// large as its params file.
    pub srs_cache_dir: Option<PathBuf>,
    /// Seconds a finished job's result is kept for poll/wait before it is forgotten.
    pub job_ttl_secs: u64,
    /// On engine free: finish in-flight jobs (true) or cancel them (false).
    pub drain_on_free: bool,
    /// Record each circuit's partition R1CS once, every kind's (in the background at its first
    /// job; ~57 bytes per constraint for PoRep and SnapDeals, ~86 for PoSt: 150 MB for a 2 KiB
    /// PoRep, ~7.4 GB for 32 GiB PoRep, 4.3 GiB for 32 GiB SnapDeals, ~10.6 GB for a 32 GiB
    /// WindowPoSt partition) and then synthesize only witnesses, a, b, c coming from the
    /// recorded matrices (see `engine::circuits`). false: every partition is synthesized in full.
    pub record_circuits: bool,
    /// Jobs accepted and not yet finished (queued or running) beyond which a submit is refused
    /// with `QUEUE_FULL` (nothing accepted is touched; retry once jobs finish). Every kind
    /// counts, WinningPoSt too: size it so only a runaway caller reaches it.
    pub max_queued_jobs: u64,
    /// MiB of those jobs' inputs (C1 JSON, vanilla proofs: ~50 MB per 32 GiB C1) beyond which a
    /// submit is refused the same way. A job's inputs count until they are freed.
    pub max_queued_input_mib: u64,
    /// MiB of each CUDA device's memory the backend may use (0 = automatic: what is free on
    /// the device when the engine starts, less 2 %). A circuit whose proofs do not fit is proved
    /// on the CPU (logged); with less than two partitions' room a device proves one at a time.
    pub vram_budget_mib: u64,
    /// A job whose circuit has no SRS loaded loads it at submit (from `params_dir`, by its v28
    /// name; the submit waits for the load, which other submits of that circuit share) instead
    /// of failing with `SRS_NOT_LOADED`. For callers that never load SRSes themselves, like the
    /// gRPC daemon's clients; a missing params file is still `SRS_LOAD` naming the file.
    pub load_srs_on_demand: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            backend: "auto".into(),
            devices: None,
            gpu_lanes: 0,
            cpu_lanes: 0,
            synthesis_workers: 0,
            prove_queue_depth: 1,
            memory_budget_mib: 0,
            verify: true,
            params_dir: None,
            srs_validation: "on_curve".into(),
            srs_cache_dir: None,
            job_ttl_secs: 3600,
            drain_on_free: false,
            record_circuits: true,
            max_queued_jobs: 1000,
            max_queued_input_mib: 4096,
            vram_budget_mib: 0,
            load_srs_on_demand: false,
        }
    }
}

impl EngineConfig {
    /// Parse a JSON object; empty input means all defaults. Anything but an object (an array
    /// would otherwise fill the keys by position) is refused.
    pub fn from_json(json: &str) -> Result<Self> {
        if json.trim().is_empty() {
            return Ok(Self::default());
        }
        let v: serde_json::Value = serde_json::from_str(json).status(Status::InvalidArgument, "engine config JSON")?;
        if !v.is_object() {
            return Err(err!(InvalidArgument, "engine config JSON must be an object ({{\"key\": value, ...}}), got {}", kind_of(&v)));
        }
        let c: EngineConfig = serde_json::from_value(v).status(Status::InvalidArgument, "engine config JSON")?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<()> {
        Validation::parse(&self.srs_validation)?;
        if !matches!(self.backend.as_str(), "auto" | "cpu" | "cuda") {
            return Err(err!(InvalidArgument, "backend must be \"auto\", \"cpu\" or \"cuda\", got {:?}", self.backend));
        }
        if let Some(d) = &self.devices {
            if d.is_empty() {
                return Err(err!(InvalidArgument, "devices is an empty list (leave it out to use every CUDA device)"));
            }
            if let Some(&big) = d.iter().find(|&&i| i >= MAX_DEVICES) {
                return Err(err!(InvalidArgument, "devices: {big} is not a CUDA device ordinal (0 to {})", MAX_DEVICES - 1));
            }
            if let Some((i, &dup)) = d.iter().enumerate().find(|(i, x)| d[..*i].contains(x)) {
                return Err(err!(InvalidArgument, "devices lists device {dup} twice (at positions {} and {i})", d.iter().position(|x| *x == dup).unwrap_or(0)));
            }
            if self.backend == "cpu" {
                return Err(err!(InvalidArgument, "devices chooses CUDA devices, but backend is \"cpu\" (use \"cuda\" or \"auto\")"));
            }
        }
        let bounded = |key: &str, v: u64, lo: u64, hi: u64, why: &str| {
            if v < lo || v > hi {
                return Err(err!(InvalidArgument, "{key} must be between {lo} and {hi} ({why}), got {v}"));
            }
            Ok(())
        };
        bounded("gpu_lanes", self.gpu_lanes as u64, 0, MAX_GPU_LANES as u64, "0 = automatic; partitions proved at once per CUDA device")?;
        bounded("cpu_lanes", self.cpu_lanes as u64, 0, MAX_CPU_LANES as u64, "0 = automatic; partitions the CPU backend proves at once")?;
        bounded("synthesis_workers", self.synthesis_workers as u64, 0, MAX_SYNTHESIS_WORKERS as u64, "0 = automatic; one thread each")?;
        bounded("prove_queue_depth", self.prove_queue_depth as u64, 1, MAX_PROVE_QUEUE_DEPTH as u64, "synthesized partitions waiting for the prover")?;
        bounded("memory_budget_mib", self.memory_budget_mib, 0, MAX_MEMORY_BUDGET_MIB, "0 = automatic; at most 1 PiB")?;
        bounded("job_ttl_secs", self.job_ttl_secs, 0, MAX_JOB_TTL_SECS, "at most 30 days")?;
        bounded("max_queued_jobs", self.max_queued_jobs, 1, MAX_MAX_QUEUED_JOBS, "jobs accepted and not yet finished")?;
        bounded("max_queued_input_mib", self.max_queued_input_mib, 1, MAX_MAX_QUEUED_INPUT_MIB, "MiB of unfinished jobs' inputs; at most 1 TiB")?;
        if self.vram_budget_mib != 0 {
            bounded("vram_budget_mib", self.vram_budget_mib, MIN_VRAM_BUDGET_MIB, MAX_VRAM_BUDGET_MIB, "0 = automatic; MiB of each CUDA device")?;
        }
        for (key, dir) in [("params_dir", &self.params_dir), ("srs_cache_dir", &self.srs_cache_dir)] {
            if dir.as_ref().is_some_and(|d| d.as_os_str().is_empty()) {
                return Err(err!(InvalidArgument, "{key} is an empty path (leave it out for the default)"));
            }
        }
        Ok(())
    }

    /// The configured VRAM budget in bytes (None: automatic).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn vram_budget(&self) -> Option<u64> {
        (self.vram_budget_mib > 0).then(|| self.vram_budget_mib << 20)
    }

    /// The queue bounds as (jobs, bytes).
    pub(crate) fn queue_limits(&self) -> (u64, u64) {
        (self.max_queued_jobs, self.max_queued_input_mib << 20)
    }

    pub fn validation(&self) -> Validation {
        Validation::parse(&self.srs_validation).unwrap_or(Validation::OnCurve)
    }

    pub fn params_dir(&self) -> PathBuf {
        self.params_dir.clone().unwrap_or_else(crate::srs::default_params_dir)
    }

    /// Partitions synthesized at once: explicit, else one per two cores. (Each partition's
    /// challenges run on the shared thread pool; the prover wants its share of the cores.)
    pub fn synthesis_threads(&self) -> usize {
        if self.synthesis_workers > 0 {
            return self.synthesis_workers;
        }
        (cores() / 2).max(1)
    }
}

/// The cores the engine sizes itself by: rayon's global pool, where synthesis, the CPU MSMs and
/// the NTTs run — `RAYON_NUM_THREADS` when the host sets it (as storage providers do to share a
/// machine between processes), else every core this process may use.
pub(crate) fn cores() -> usize {
    rayon::current_num_threads().max(1)
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Null => "null",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_defaults_and_rejects_typos() {
        assert!(EngineConfig::from_json("").unwrap().verify);
        assert!(!EngineConfig::from_json(r#"{"verify": false}"#).unwrap().verify);
        let e = EngineConfig::from_json(r#"{"verfy": false}"#).unwrap_err();
        assert!(e.message.contains("verfy"), "{}", e.message);
        assert!(EngineConfig::from_json(r#"{"backend": "gpu"}"#).is_err());
        assert!(EngineConfig::from_json(r#"{"srs_validation": "some"}"#).is_err());
        for not_an_object in ["[1]", "[]", r#"["cpu"]"#, "null", "3", r#""cpu""#, "true"] {
            let e = EngineConfig::from_json(not_an_object).unwrap_err();
            assert_eq!(e.status, Status::InvalidArgument, "{not_an_object}");
            assert!(e.message.contains("must be an object"), "{not_an_object}: {}", e.message);
        }
        for bad in [
            r#"{"prove_queue_depth": 4294967296}"#,
            r#"{"prove_queue_depth": 0}"#,
            r#"{"synthesis_workers": 100000}"#,
            r#"{"memory_budget_mib": 18446744073709551615}"#,
            r#"{"job_ttl_secs": 99999999999}"#,
            r#"{"synthesis_workers": -1}"#,
            r#"{"params_dir": ""}"#,
            r#"{"devices": []}"#,
            r#"{"gpu_lanes": 3}"#,
            r#"{"cpu_lanes": 17}"#,
            r#"{"devices": [0, 1, 0]}"#,
            r#"{"devices": [4096]}"#,
            r#"{"devices": [-1]}"#,
            r#"{"devices": [0], "backend": "cpu"}"#,
            r#"{"max_queued_jobs": 0}"#,
            r#"{"max_queued_jobs": 1000001}"#,
            r#"{"max_queued_input_mib": 0}"#,
            r#"{"max_queued_input_mib": 1048577}"#,
            r#"{"vram_budget_mib": 1023}"#,
            r#"{"vram_budget_mib": 16777217}"#,
        ] {
            let e = EngineConfig::from_json(bad).unwrap_err();
            assert_eq!(e.status, Status::InvalidArgument, "{bad}: {}", e.message);
        }
        let e = EngineConfig::from_json(r#"{"synthesis_workers": 100000}"#).unwrap_err();
        assert!(e.message.contains("synthesis_workers") && e.message.contains("1024"), "{}", e.message);
        assert!(EngineConfig::from_json(r#"{"synthesis_workers": 1024, "prove_queue_depth": 1024}"#).is_ok());
        assert_eq!(EngineConfig::from_json(r#"{"vram_budget_mib": 16384}"#).unwrap().vram_budget(), Some(16 << 30));
        assert_eq!(EngineConfig::from_json(r#"{"vram_budget_mib": 0}"#).unwrap().vram_budget(), None);
        assert_eq!(EngineConfig::from_json(r#"{"devices": [1, 0]}"#).unwrap().devices, Some(vec![1, 0]));
        let e = EngineConfig::from_json(r#"{"devices": [0, 1, 0]}"#).unwrap_err();
        assert!(e.message.contains("device 0 twice"), "{}", e.message);
    }
}
