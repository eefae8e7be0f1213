//! Progress of long work as log lines an operator sees by default (info, target `cuzk::…`):
//! [`Progress`] for work of known size (an SRS load of tens of GB: a line at each tenth), and
//! [`Heartbeat`] for opaque work (Groth16 parameter generation: a line every period).
//! The binaries add terminal progress bars on top ([`bar`], feature `tools`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[cfg(feature = "tools")]
pub mod bar;

/// Work that finishes sooner than this logs no progress (small SRSes, tests).
const QUIET: Duration = Duration::from_secs(2);

/// Counts bytes (or items) done out of a known total, from any number of threads, and logs
/// "<what>: 40 % (4,096 of 10,240 MiB) after 12.3 s" when a new tenth is reached.
pub struct Progress {
    what: String,
    total: u64,
    done: AtomicU64,
    /// The last tenth logged.
    logged: AtomicU64,
    start: Instant,
}

impl Progress {
    pub fn new(what: impl Into<String>, total: u64) -> Progress {
        Progress { what: what.into(), total, done: AtomicU64::new(0), logged: AtomicU64::new(0), start: Instant::now() }
    }

    /// Record `n` more done; logs when that completes a new tenth (not the last: whoever
    /// finishes the work says so).
    pub fn add(&self, n: u64) {
        if let Some(line) = self.step(n, self.start.elapsed()) {
            log::info!("{line}");
        }
    }

    /// The line to log after `n` more, at `elapsed`, if any.
    fn step(&self, n: u64, elapsed: Duration) -> Option<String> {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        let tenth = (u128::from(done) * 10 / u128::from(self.total.max(1))) as u64;
        let prev = self.logged.load(Ordering::Relaxed);
        if tenth <= prev || tenth >= 10 || elapsed < QUIET {
            return None;
        }
        // One thread logs each tenth.
        self.logged.compare_exchange(prev, tenth, Ordering::Relaxed, Ordering::Relaxed).ok()?;
        Some(format!(
            "{}: {} % ({} of {} MiB) after {:.1} s",
            self.what,
            tenth * 10,
            done >> 20,
            self.total >> 20,
            elapsed.as_secs_f64()
        ))
    }
}

/// Logs "<what>: still running after 3 min 30 s<hint>" every `every` until dropped.
pub struct Heartbeat {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    pub fn start(what: impl Into<String>, hint: impl Into<String>, every: Duration) -> Heartbeat {
        let (what, hint) = (what.into(), hint.into());
        let (tx, rx) = mpsc::channel::<()>();
        let start = Instant::now();
        let name = what.clone();
        let thread = std::thread::Builder::new()
            .name("cuzk-heartbeat".into())
            .spawn(move || {
                // Ends when the sender is dropped (Disconnected).
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    let s = start.elapsed().as_secs();
                    log::info!("{what}: still running after {} min {} s{hint}", s / 60, s % 60);
                }
            })
            .map_err(|e| log::warn!("no progress lines for {name:?}: cannot start a thread: {e}"))
            .ok();
        Heartbeat { stop: Some(tx), thread }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_logs_each_tenth_once_after_the_quiet_period() {
        let p = Progress::new("SRS load x", 100 << 20);
        assert_eq!(p.step(30 << 20, Duration::from_secs(1)), None, "quiet at first");
        let line = p.step(5 << 20, Duration::from_secs(3)).unwrap();
        assert_eq!(line, "SRS load x: 30 % (35 of 100 MiB) after 3.0 s");
        assert_eq!(p.step(1 << 20, Duration::from_secs(4)), None, "still the same tenth");
        assert!(p.step(10 << 20, Duration::from_secs(5)).unwrap().contains("40 %"));
        assert_eq!(p.step(60 << 20, Duration::from_secs(9)), None, "done: the caller reports it");
        assert_eq!(Progress::new("empty", 0).step(0, Duration::from_secs(9)), None);
    }

    #[test]
    fn heartbeat_stops_when_dropped() {
        let t = Instant::now();
        drop(Heartbeat::start("x", "", Duration::from_secs(3600)));
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
