//! The daemon's job names: a gRPC job id (the caller's request id, or one the daemon makes) to
//! the engine's job, and who waits for it, so a Prove whose caller goes away cancels its job
//! unless someone else still wants it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cuzk::engine::{Engine, JobId};
use cuzk::error::{Error, Status};

use crate::requests::Request;

pub struct Jobs {
    engine: Arc<Engine>,
    names: Mutex<Names>,
}

#[derive(Default)]
struct Names {
    by_name: HashMap<String, Entry>,
    /// Size after the last sweep of forgotten jobs (the next sweep waits until it doubles).
    swept_at: usize,
}

struct Entry {
    job: JobId,
    /// Prove calls waiting for the job now.
    waiters: usize,
    /// Submitted through SubmitProof: its caller may await it later, from anywhere, so no
    /// Prove caller's disconnect cancels it.
    detached: bool,
}

impl Jobs {
    pub fn new(engine: Arc<Engine>) -> Jobs {
        Jobs { engine, names: Mutex::new(Names::default()) }
    }

    /// Submit `req` to the engine (blocking: parsing a C1 output, checking vanilla proofs or
    /// loading an SRS takes seconds). The engine binds the caller's request id qualified by a
    /// digest of the content, so resubmitting the same content while its job is queued, running
    /// or done returns that job, and changed content (a C1 redone after a reorg under the same
    /// `porep-<miner>-<sector>` id) starts a new job instead of being refused. `waiter`: the
    /// caller (Prove) waits for the job and releases it with [`Self::release`].
    pub fn submit(&self, req: &Request, waiter: bool) -> Result<(String, JobId), Error> {
        let key = req.request_id.as_ref().map(|id| {
            let digest = req.submission(None).request.content_digest();
            format!("{id}#{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
        });
        let job = self.engine.submit_proof(req.submission(key))?;
        let name = req.request_id.clone().unwrap_or_else(|| format!("job-{job}"));
        let mut n = self.names.lock().unwrap_or_else(|e| e.into_inner());
        let e = n.by_name.entry(name.clone()).or_insert(Entry { job, waiters: 0, detached: false });
        if e.job != job {
            *e = Entry { job, waiters: 0, detached: false };
        }
        if waiter {
            e.waiters += 1;
        } else {
            e.detached = true;
        }
        self.sweep(&mut n);
        Ok((name, job))
    }

    /// The engine job a gRPC job id names.
    pub fn resolve(&self, name: &str) -> Result<JobId, Error> {
        let n = self.names.lock().unwrap_or_else(|e| e.into_inner());
        n.by_name.get(name).map(|e| e.job).ok_or_else(|| Error::new(Status::UnknownJob, format!("unknown job id {name:?}")))
    }

    /// A Prove caller stops waiting (its call ended, its client went away or its deadline
    /// passed): the last waiter of a job nobody submitted detached cancels it if it is still
    /// running. Ok(true): this cancelled it.
    pub fn release(&self, name: &str, job: JobId) -> bool {
        let last = {
            let mut n = self.names.lock().unwrap_or_else(|e| e.into_inner());
            match n.by_name.get_mut(name) {
                Some(e) if e.job == job => {
                    e.waiters = e.waiters.saturating_sub(1);
                    e.waiters == 0 && !e.detached
                }
                // Renamed to a newer job since: this one has no other name to be waited by.
                _ => true,
            }
        };
        last && self.engine.cancel(job).unwrap_or(false)
    }

    /// Forget the names of jobs the engine has forgotten (`job_ttl_secs` after they ended),
    /// whenever the table has doubled since the last sweep.
    fn sweep(&self, n: &mut Names) {
        if n.by_name.len() < 1024 || n.by_name.len() < 2 * n.swept_at {
            return;
        }
        n.by_name.retain(|_, e| e.waiters > 0 || self.engine.poll(e.job).is_ok());
        n.swept_at = n.by_name.len();
    }
}
