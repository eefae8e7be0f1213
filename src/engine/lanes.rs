//! What each prover lane (one prover thread, see `workers::spawn`) has done: time spent in the
//! backend's device part of a proof (`Backend::start`: the whole proof on the CPU backend; on
//! CUDA the tail runs on the finisher), partitions started and failed, and whether it is busy
//! now. Read by status and metrics; written once per partition by the lane's own thread.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::busy::BusyClock;

#[derive(Default)]
struct Lane {
    clock: BusyClock,
    partitions: u64,
    failures: u64,
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

pub(crate) struct Lanes(Vec<Mutex<Lane>>);

/// A lane busy with one partition until dropped; [`Busy::failed`] counts it as failed.
pub(crate) struct Busy<'a> {
    lane: &'a Mutex<Lane>,
    failed: bool,
}

fn lock(l: &Mutex<Lane>) -> MutexGuard<'_, Lane> {
    l.lock().unwrap_or_else(|e| e.into_inner())
}

impl Lanes {
    pub fn new(n: usize) -> Self {
        Lanes((0..n).map(|_| Mutex::default()).collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Lane `k` (below [`Lanes::len`]) starts a partition.
    pub fn begin(&self, k: usize) -> Busy<'_> {
        let lane = &self.0[k];
        lock(lane).clock.enter();
        Busy { lane, failed: false }
    }

    pub fn snapshot(&self) -> Vec<LaneSnapshot> {
        self.0
            .iter()
            .map(|l| {
                let l = lock(l);
                LaneSnapshot { busy: l.clock.busy(), partitions: l.partitions, failures: l.failures, proving: l.clock.held() }
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
        let mut l = lock(self.lane);
        l.clock.leave();
        l.partitions += 1;
        l.failures += self.failed as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_busy_time_partitions_and_failures_per_lane() {
        let lanes = Lanes::new(2);
        {
            let _b = lanes.begin(1);
            std::thread::sleep(Duration::from_millis(30));
            let s = lanes.snapshot();
            assert!(s[1].proving && !s[0].proving);
            assert!(s[1].busy >= Duration::from_millis(30), "{:?}", s[1]);
        }
        lanes.begin(1).failed();
        let s = lanes.snapshot();
        assert_eq!((s[0].partitions, s[1].partitions, s[1].failures), (0, 2, 1));
        assert!(!s[1].proving && s[1].busy >= Duration::from_millis(30) && s[0].busy.is_zero());
    }
}
