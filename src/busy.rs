//! Busy time of something held by one or more holders at once (a prover lane, a CUDA device
//! whose lanes overlap): the time at least one holder was in, overlaps counted once.

use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(crate) struct BusyClock {
    held: usize,
    since: Option<Instant>,
    before: Duration,
}

impl BusyClock {
    pub fn enter(&mut self) {
        self.held += 1;
        if self.held == 1 {
            self.since = Some(Instant::now());
        }
    }

    pub fn leave(&mut self) {
        self.held = self.held.saturating_sub(1);
        if self.held == 0 {
            if let Some(t) = self.since.take() {
                self.before += t.elapsed();
            }
        }
    }

    /// Busy time so far, a hold in progress included.
    pub fn busy(&self) -> Duration {
        self.before + self.since.map_or(Duration::ZERO, |t| t.elapsed())
    }

    pub fn held(&self) -> bool {
        self.held > 0
    }

    /// How many holders are in now (the CUDA backend's lone-proof check).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub fn holders(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_holds_count_once() {
        let mut c = BusyClock::default();
        c.enter();
        c.enter();
        assert_eq!(c.holders(), 2);
        std::thread::sleep(Duration::from_millis(20));
        c.leave();
        assert!(c.held());
        assert_eq!(c.holders(), 1);
        c.leave();
        let b = c.busy();
        assert!(!c.held() && b >= Duration::from_millis(20) && b < Duration::from_millis(2000), "{b:?}");
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(c.busy(), b, "idle time is not busy");
    }
}
