//! What a soak run samples from its own process and engine (shared by `cuzk-bench soak` and
//! `cuzk-gpu soak-2kib`).

use cuzk::engine::Engine;

#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub jobs: usize,
    pub rss_kib: u64,
    pub threads: u64,
    pub fds: usize,
    /// Bytes the memory budget still counts as reserved.
    pub reserved: u64,
    /// Free device memory, when a device is sampled (cuzk-gpu).
    #[allow(dead_code)]
    pub device_free: Option<u64>,
}

fn proc_status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn sample(engine: &Engine, jobs: usize, device_free: Option<u64>) -> Sample {
    let status: serde_json::Value = serde_json::from_str(&engine.status_json()).unwrap_or_default();
    Sample {
        jobs,
        rss_kib: proc_status("VmRSS:"),
        threads: proc_status("Threads:"),
        fds: std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()),
        reserved: status["memory"]["reserved_bytes"].as_u64().unwrap_or(u64::MAX),
        device_free,
    }
}
