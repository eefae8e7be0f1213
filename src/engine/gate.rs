//! How many partitions synthesize their witness at once. A recorded-circuit partition's
//! witness already spreads over every core (one challenge per thread, 18 per 32 GiB partition),
//! so running many of them at once only makes each finish later: measured on the H200 host
//! (16 cores), 8 at a time put the first partition on the GPU after 8.2 s and gave 37.5 s
//! latency, 2 at a time after 2.4 s and 32.2 s, with more throughput (prover busy 94 % vs 87 %).
//! Full synthesis keeps every worker.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

pub(crate) struct Gate {
    /// The cores the syntheses share (`config::cores`, read once).
    cores: usize,
    in_flight: Mutex<usize>,
    freed: Condvar,
}

/// Witness syntheses at once for partitions of `challenges` challenges on `cores` cores: enough
/// to keep every core busy, plus one so a partition's preparation overlaps the next one.
pub(crate) fn witness_concurrency(cores: usize, challenges: usize) -> usize {
    (cores.div_ceil(challenges.max(1)) + 1).max(2)
}

impl Gate {
    pub fn new(cores: usize) -> Gate {
        Gate { cores, in_flight: Mutex::new(0), freed: Condvar::new() }
    }

    /// The cores the engine's syntheses share.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Wait for a slot for a partition of `challenges` challenges, then enter; `None` if
    /// `give_up()` turned true while waiting.
    pub fn enter(&self, challenges: usize, give_up: &dyn Fn() -> bool) -> Option<GatePass<'_>> {
        let cap = witness_concurrency(self.cores, challenges);
        let mut n = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= cap {
            if give_up() {
                return None;
            }
            n = self.freed.wait_timeout(n, Duration::from_millis(50)).unwrap_or_else(|e| e.into_inner()).0;
        }
        *n += 1;
        Some(GatePass(self))
    }
}

/// Held while inside; leaving wakes a waiter.
pub(crate) struct GatePass<'g>(&'g Gate);

impl Drop for GatePass<'_> {
    fn drop(&mut self) {
        let mut n = self.0.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_follows_cores_and_challenges() {
        assert_eq!(witness_concurrency(16, 18), 2); // 32 GiB on the H200 host
        assert_eq!(witness_concurrency(96, 18), 7);
        assert_eq!(witness_concurrency(16, 2), 9); // 2 KiB
        assert_eq!(witness_concurrency(2, 18), 2);
    }

    #[test]
    fn admits_up_to_cap_and_gives_up_when_told() {
        let g = Gate::new(16); // 18 challenges: 2 at once
        let a = g.enter(18, &|| false).unwrap();
        let _b = g.enter(18, &|| false).unwrap();
        assert!(g.enter(18, &|| true).is_none(), "full: a third waits, then gives up");
        drop(a);
        assert!(g.enter(18, &|| true).is_some(), "room again after one left");
    }
}
