//! Duration histograms for the Prometheus text (`Engine::metrics_text`): per finished job and
//! per partition stage. Fixed buckets, atomic counters: recording is a few relaxed adds on the
//! job's last thread, scraping never blocks the pipeline. (Hand-written rather than a
//! Prometheus crate: every other number is read from engine state at scrape time, which a
//! registry of owned metric objects would duplicate.)

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::job::{JobTimings, Stage};
use crate::kinds::ProofKind;

/// Upper bounds in seconds: 10 ms (a 2 KiB stage) to 10 min (a 64 GiB C2 on the CPU).
const BOUNDS: [f64; 16] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0];

/// The `# HELP` and `# TYPE` lines that open a metric family.
pub(super) fn family(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A family of one unlabelled sample.
pub(super) fn single(o: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    family(o, name, kind, help);
    let _ = writeln!(o, "{name} {value}");
}

/// A family of one sample per device, labelled by its index.
pub(super) fn per_device<T: std::fmt::Display>(
    o: &mut String,
    devices: &[crate::prover::DeviceStatus],
    name: &str,
    kind: &str,
    help: &str,
    value: impl Fn(&crate::prover::DeviceStatus) -> T,
) {
    family(o, name, kind, help);
    for d in devices {
        let _ = writeln!(o, "{name}{{device=\"{}\"}} {}", d.index, value(d));
    }
}

pub(crate) struct Histogram {
    /// Observations <= BOUNDS[i] (not cumulative; summed when written).
    buckets: [AtomicU64; BOUNDS.len()],
    /// Larger than every bound.
    over: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { buckets: std::array::from_fn(|_| AtomicU64::new(0)), over: AtomicU64::new(0), sum_nanos: AtomicU64::new(0) }
    }
}

impl Histogram {
    pub fn observe(&self, d: Duration) {
        let s = d.as_secs_f64();
        match BOUNDS.iter().position(|&b| s <= b) {
            Some(i) => self.buckets[i].fetch_add(1, Ordering::Relaxed),
            None => self.over.fetch_add(1, Ordering::Relaxed),
        };
        self.sum_nanos.fetch_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The `_bucket`, `_sum` and `_count` lines of `name` with `labels` (`k="v",` pairs or "").
    fn write(&self, o: &mut String, name: &str, labels: &str) {
        let mut cumulative = 0;
        for (b, n) in BOUNDS.iter().zip(&self.buckets) {
            cumulative += n.load(Ordering::Relaxed);
            let _ = writeln!(o, "{name}_bucket{{{labels}le=\"{b}\"}} {cumulative}");
        }
        cumulative += self.over.load(Ordering::Relaxed);
        let _ = writeln!(o, "{name}_bucket{{{labels}le=\"+Inf\"}} {cumulative}");
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 * 1e-9;
        let labels = labels.trim_end_matches(',');
        let braces = |l: &str| if l.is_empty() { String::new() } else { format!("{{{l}}}") };
        let _ = writeln!(o, "{name}_sum{} {sum}", braces(labels));
        let _ = writeln!(o, "{name}_count{} {cumulative}", braces(labels));
    }
}

/// One kind's histograms.
#[derive(Default)]
struct KindDurations {
    /// Submit to proof, per job that succeeded.
    job: Histogram,
    /// Submit to the first partition's synthesis (the job's wait in the queue).
    queue: Histogram,
    verify: Histogram,
    /// Per partition, by `Stage::ALL` index.
    stages: [Histogram; Stage::ALL.len()],
}

/// Per proof kind (a WinningPoSt at 0.1 s and a 32 GiB C2 at 14 s do not share a histogram),
/// by `ProofKind as usize`.
#[derive(Default)]
pub(crate) struct Durations([KindDurations; ProofKind::ALL.len()]);

impl Durations {
    /// A job of `kind` that finished with a proof.
    pub fn job_done(&self, kind: ProofKind, t: &JobTimings) {
        let d = &self.0[kind as usize];
        d.job.observe(t.total);
        d.queue.observe(t.queue);
        d.verify.observe(t.verify);
        for s in &t.spans {
            if let Some(i) = Stage::ALL.iter().position(|st| *st == s.stage) {
                d.stages[i].observe(s.end.saturating_sub(s.start));
            }
        }
    }

    pub fn write(&self, o: &mut String) {
        let jobs: [(fn(&KindDurations) -> &Histogram, &str, &str); 3] = [
            (|d| &d.job, "cuzk_job_duration_seconds", "Submit to proof, per job that succeeded, by kind."),
            (|d| &d.queue, "cuzk_job_queue_seconds", "Submit to the start of a job's first partition, per job that succeeded, by kind."),
            (|d| &d.verify, "cuzk_job_verify_seconds", "Verification of the assembled proof, per job that succeeded, by kind."),
        ];
        for (h, name, help) in jobs {
            family(o, name, "histogram", help);
            for (d, kind) in self.0.iter().zip(ProofKind::ALL) {
                h(d).write(o, name, &format!("kind=\"{}\",", kind.name()));
            }
        }
        let name = "cuzk_partition_stage_seconds";
        family(o, name, "histogram", "Time one partition spent in one pipeline stage (jobs that succeeded), by kind.");
        for (d, kind) in self.0.iter().zip(ProofKind::ALL) {
            for (h, st) in d.stages.iter().zip(Stage::ALL) {
                h.write(o, name, &format!("kind=\"{}\",stage=\"{}\",", kind.name(), st.name()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_count_every_observation() {
        let h = Histogram::default();
        for ms in [5, 30, 30, 2000, 5_000_000] {
            h.observe(Duration::from_millis(ms));
        }
        let mut o = String::new();
        h.write(&mut o, "x_seconds", "stage=\"a\",");
        assert!(o.contains("x_seconds_bucket{stage=\"a\",le=\"0.01\"} 1\n"), "{o}");
        assert!(o.contains("x_seconds_bucket{stage=\"a\",le=\"0.05\"} 3\n"), "{o}");
        assert!(o.contains("x_seconds_bucket{stage=\"a\",le=\"1000\"} 4\n"), "{o}");
        assert!(o.contains("x_seconds_bucket{stage=\"a\",le=\"+Inf\"} 5\n"), "{o}");
        assert!(o.contains("x_seconds_count{stage=\"a\"} 5\n") && o.contains("x_seconds_sum{stage=\"a\"} 5002.065"), "{o}");
    }
}
