//! The job table: jobs by id and by request id, the ended ones in order for the TTL, and the
//! checks a request id must pass.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::admission;
use super::job::{Job, JobId, RequestKey};
use super::Submission;
use crate::error::Result;

#[derive(Default)]
pub(crate) struct JobTable {
    pub(super) by_id: HashMap<JobId, Arc<Job>>,
    /// Request id → (job, digest of the content it was submitted with).
    pub(super) by_request: HashMap<String, (JobId, [u8; 32])>,
    /// Finished jobs in the order they ended, with when: forgetting the expired ones looks at
    /// these alone, so a submit's bookkeeping does not grow with the jobs remembered.
    pub(super) ended: VecDeque<(Instant, JobId)>,
    pub(super) next_id: JobId,
}

impl JobTable {
    /// The job a request id already names, if its content matches; an error if it names
    /// another sector's request.
    pub(super) fn lookup(&self, key: &RequestKey) -> Result<Option<JobId>> {
        match self.by_request.get(&key.id) {
            None => Ok(None),
            Some((id, content)) if *content == key.content => Ok(Some(*id)),
            Some((id, _)) => Err(err!(
                InvalidArgument,
                "request id {:?} is already used by job {id} for other content (another C1, sector or prover id)",
                key.id
            )),
        }
    }

    /// Forget the jobs that ended more than `ttl` ago: the oldest first, stopping at the first
    /// one still within it (the cost is the jobs forgotten, not those remembered).
    pub(super) fn forget_expired(&mut self, ttl: Duration) {
        while let Some(&(ended, id)) = self.ended.front() {
            if ended.elapsed() <= ttl {
                break;
            }
            self.ended.pop_front();
            if let Some(job) = self.by_id.remove(&id) {
                if let Some(key) = &job.request {
                    if self.by_request.get(&key.id).is_some_and(|(j, _)| *j == id) {
                        self.by_request.remove(&key.id);
                    }
                }
            }
        }
    }
}

/// A job between its checks and the job table.
pub(super) struct Pending {
    pub(super) key: Option<RequestKey>,
    pub(super) priority: i32,
    pub(super) submitted: Instant,
    pub(super) srs_time: Duration,
    pub(super) ticket: Option<admission::Ticket>,
}

/// Longest accepted request id: an idempotency key, not a payload.
pub(crate) const MAX_REQUEST_ID_BYTES: usize = 1024;

pub(super) fn request_key(req: &Submission<'_>) -> Result<Option<RequestKey>> {
    let Some(id) = &req.request_id else { return Ok(None) };
    if id.is_empty() || id.len() > MAX_REQUEST_ID_BYTES || id.contains('\0') {
        return Err(err!(
            InvalidArgument,
            "request id must be 1 to {MAX_REQUEST_ID_BYTES} bytes without NUL, got {} bytes",
            id.len()
        ));
    }
    Ok(Some(RequestKey { id: id.clone(), content: req.request.content_digest() }))
}
