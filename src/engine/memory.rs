//! Admission of partitions by memory. A synthesized 32 GiB partition holds ~17 GB (a, b, c,
//! witness) from synthesis until its buffers are freed after proving; with one synthesis per two
//! cores that is well over 100 GB on a 16-core machine. A synthesis worker therefore reserves a
//! partition's footprint before synthesizing, and the reservation travels with the buffers until
//! the deallocator has freed them. A partition larger than the whole budget still runs — alone.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

pub struct MemoryBudget {
    state: Mutex<MemorySnapshot>,
    freed: Condvar,
}

#[derive(Default, Clone, Copy, Debug)]
pub struct MemorySnapshot {
    /// Bytes reserved by partitions between synthesis and the freeing of their buffers.
    pub reserved: u64,
    /// Partitions holding a reservation.
    pub holders: usize,
    /// Synthesis workers waiting for room.
    pub waiting: usize,
    /// Highest `reserved` seen.
    pub peak: u64,
}

/// Room held for one partition; released on drop.
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl MemoryBudget {
    pub fn new() -> Arc<Self> {
        Arc::new(MemoryBudget { state: Mutex::new(MemorySnapshot::default()), freed: Condvar::new() })
    }

    /// Wait until `bytes` fit under `limit()` (read again at every wake-up: it may move as SRSes
    /// are loaded and evicted) or nothing else is reserved. None once `give_up()` is true
    /// (checked at least every 100 ms).
    pub fn reserve(self: &Arc<Self>, bytes: u64, limit: &dyn Fn() -> u64, give_up: &dyn Fn() -> bool) -> Option<Reservation> {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut counted = false;
        loop {
            if give_up() {
                if counted {
                    g.waiting -= 1;
                }
                return None;
            }
            if g.holders == 0 || g.reserved.saturating_add(bytes) <= limit() {
                if counted {
                    g.waiting -= 1;
                }
                g.reserved += bytes;
                g.holders += 1;
                g.peak = g.peak.max(g.reserved);
                return Some(Reservation { budget: self.clone(), bytes });
            }
            if !counted {
                g.waiting += 1;
                counted = true;
            }
            g = self.freed.wait_timeout(g, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    pub fn snapshot(&self) -> MemorySnapshot {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut g = self.budget.state.lock().unwrap_or_else(|e| e.into_inner());
        g.reserved -= self.bytes;
        g.holders -= 1;
        drop(g);
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    #[test]
    fn blocks_until_room_and_admits_an_oversized_partition_alone() {
        let b = MemoryBudget::new();
        let limit = || 100u64;
        let never = || false;
        let r1 = b.reserve(60, &limit, &never).unwrap();
        // 60 + 60 > 100: the second waits until the first is dropped.
        let b2 = b.clone();
        let t = std::thread::spawn(move || {
            let t0 = Instant::now();
            let r = b2.reserve(60, &|| 100, &|| false).unwrap();
            (t0.elapsed(), r.bytes)
        });
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(b.snapshot().waiting, 1);
        drop(r1);
        let (waited, bytes) = t.join().unwrap();
        assert!(waited >= Duration::from_millis(250), "did not wait: {waited:?}");
        assert_eq!(bytes, 60);
        let s = b.snapshot();
        assert_eq!((s.reserved, s.holders, s.waiting, s.peak), (0, 0, 0, 60));

        // Larger than the whole budget: admitted when nothing else is held.
        let big = b.reserve(500, &limit, &never).unwrap();
        assert_eq!(b.snapshot().peak, 500);
        drop(big);
    }

    #[test]
    fn gives_up_when_told() {
        let b = MemoryBudget::new();
        let _held = b.reserve(90, &|| 100, &|| false).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (b2, s2) = (b.clone(), stop.clone());
        let t = std::thread::spawn(move || b2.reserve(20, &|| 100, &|| s2.load(Ordering::Relaxed)).is_none());
        std::thread::sleep(Duration::from_millis(150));
        stop.store(true, Ordering::Relaxed);
        assert!(t.join().unwrap(), "reserve did not give up");
        assert_eq!(b.snapshot().waiting, 0);
        assert_eq!(b.snapshot().holders, 1);
    }
}
