//! What each prover lane (one prover thread, see `workers::spawn`) has done: time spent in the
//! backend's device part of a proof (`Backend::start`: the whole proof on the CPU backend; on
//! CUDA the tail runs on the finisher), partitions started and failed, and whether it is busy
//! now. Read by status and metrics; written once per partition by the lane's own thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Lane {
    busy_nanos: AtomicU64,
    /// When the partition it is proving now started (None: idle).
    since: Mutex<Option<Instant>>,
    partitions: AtomicU64,
    failures: AtomicU64,
}

/// One lane's numbers at one moment.
#[derive(Debug, Clone, Copy)]
pub struct LaneSnapshot {
    /// Time spent proving, the partition in progress included.
    pub busy: Duration,
    pub partitions: u64,
    pub failures: u64,
    pub proving: bool,
}

pub(crate) struct Lanes(Vec<Lane>);

/// Lane `k` busy with one partition until dropped; [`Busy::failed`] counts it as failed.
pub(crate) struct Busy<'a> {
    lane: &'a Lane,
    failed: bool,
}

impl Lanes {
    pub fn new(n: usize) -> Self {
        Lanes((0..n).map(|_| Lane::default()).collect())
    }

    /// Lane `k` starts a partition (a lane past the count is not tracked: None).
    pub fn begin(&self, k: usize) -> Option<Busy<'_>> {
        let lane = self.0.get(k)?;
        *lane.since.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        Some(Busy { lane, failed: false })
    }

    pub fn snapshot(&self) -> Vec<LaneSnapshot> {
        self.0
            .iter()
            .map(|l| {
                let since = *l.since.lock().unwrap_or_else(|e| e.into_inner());
                let done = Duration::from_nanos(l.busy_nanos.load(Ordering::Relaxed));
                LaneSnapshot {
                    busy: done + since.map_or(Duration::ZERO, |t| t.elapsed()),
                    partitions: l.partitions.load(Ordering::Relaxed),
                    failures: l.failures.load(Ordering::Relaxed),
                    proving: since.is_some(),
                }
            })
            .collect()
    }
}

impl Busy<'_> {
    pub fn failed(&mut self) {
        self.failed = true;
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let l = self.lane;
        let mut since = l.since.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = since.take() {
            l.busy_nanos.fetch_add(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
        }
        l.partitions.fetch_add(1, Ordering::Relaxed);
        if self.failed {
            l.failures.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_busy_time_partitions_and_failures_per_lane() {
        let lanes = Lanes::new(2);
        {
            let _b = lanes.begin(1).unwrap();
            std::thread::sleep(Duration::from_millis(30));
            let s = lanes.snapshot();
            assert!(s[1].proving && !s[0].proving);
            assert!(s[1].busy >= Duration::from_millis(30), "{:?}", s[1]);
        }
        lanes.begin(1).unwrap().failed();
        assert!(lanes.begin(2).is_none());
        let s = lanes.snapshot();
        assert_eq!((s[0].partitions, s[1].partitions, s[1].failures), (0, 2, 1));
        assert!(!s[1].proving && s[1].busy >= Duration::from_millis(30) && s[0].busy.is_zero());
    }
}
