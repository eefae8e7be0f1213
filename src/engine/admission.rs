//! How much accepted work may be waiting: jobs submitted and not yet finished, and the bytes of
//! their inputs (C1 JSON, vanilla proofs — what their parsed inputs hold in memory). A submit
//! beyond either bound (`max_queued_jobs`, `max_queued_input_mib`) is refused with
//! `QUEUE_FULL` before its input is parsed; nothing already accepted is touched. A job's
//! [`Ticket`] travels with its inputs and is given back when they are freed, so the count is
//! what memory holds, not what the job table says.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::Result;

pub(crate) struct Admission {
    max_jobs: u64,
    max_bytes: u64,
    /// (jobs, input bytes) admitted and not yet given back.
    held: Mutex<(u64, u64)>,
    refused: AtomicU64,
}

/// One admitted job's share of the bounds; dropping it gives the share back.
pub(crate) struct Ticket {
    admission: Arc<Admission>,
    bytes: u64,
}

impl Admission {
    pub fn new(max_jobs: u64, max_bytes: u64) -> Arc<Admission> {
        Arc::new(Admission { max_jobs, max_bytes, held: Mutex::new((0, 0)), refused: AtomicU64::new(0) })
    }

    /// Admit a job whose inputs are `bytes` long, or refuse it (`QUEUE_FULL`, naming the bound).
    pub fn admit(self: &Arc<Self>, bytes: u64) -> Result<Ticket> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (jobs, queued) = *held;
        let refuse = if jobs >= self.max_jobs {
            Some(format!("{jobs} jobs are queued or running, the most max_queued_jobs allows"))
        } else if queued.saturating_add(bytes) > self.max_bytes {
            Some(format!(
                "the queued jobs' inputs hold {queued} bytes; this request's {bytes} would pass max_queued_input_mib ({} bytes)",
                self.max_bytes
            ))
        } else {
            None
        };
        if let Some(why) = refuse {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(err!(QueueFull, "not accepting the job: {why}; retry once jobs have finished"));
        }
        *held = (jobs + 1, queued + bytes);
        Ok(Ticket { admission: self.clone(), bytes })
    }

    /// (jobs, input bytes) held now.
    pub fn held(&self) -> (u64, u64) {
        *self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn limits(&self) -> (u64, u64) {
        (self.max_jobs, self.max_bytes)
    }

    /// Submits refused since the engine started.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ticket({} bytes)", self.bytes)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut held = self.admission.held.lock().unwrap_or_else(|e| e.into_inner());
        held.0 = held.0.saturating_sub(1);
        held.1 = held.1.saturating_sub(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Status;

    #[test]
    fn bounds_jobs_and_bytes_and_gives_back_on_drop() {
        let a = Admission::new(2, 100);
        let t1 = a.admit(60).unwrap();
        let e = a.admit(41).unwrap_err();
        assert_eq!(e.status, Status::QueueFull);
        assert!(e.message.contains("max_queued_input_mib"), "{}", e.message);
        let t2 = a.admit(40).unwrap();
        let e = a.admit(0).unwrap_err();
        assert!(e.message.contains("max_queued_jobs"), "{}", e.message);
        assert_eq!((a.held(), a.refused()), ((2, 100), 2));
        drop(t1);
        assert_eq!(a.held(), (1, 40));
        let _t3 = a.admit(60).unwrap();
        drop(t2);
        assert_eq!(a.held(), (1, 60));
    }
}
