//! The state every engine thread shares: configuration, backend, resident SRSes and circuits,
//! the job table, queues, counters and the memory policy, and what happens when a job ends.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::config::EngineConfig;
use super::dealloc::Deallocator;
use super::job::{Job, JobState};
use super::queue::WorkQueue;
use super::table::JobTable;
use super::{admission, circuits, gate, host_memory, lanes, memory, metrics};
use crate::error::Result;
use crate::prover::Backend;
use crate::srs::{Srs, SrsManager};

/// Jobs accepted and ended since the engine started, per kind (`ProofKind as usize`).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) submitted: [AtomicU64; 4],
    pub(crate) done: [AtomicU64; 4],
    pub(crate) failed: [AtomicU64; 4],
    pub(crate) cancelled: [AtomicU64; 4],
}

/// The sum over kinds.
pub(crate) fn total(c: &[AtomicU64; 4]) -> u64 {
    c.iter().map(|n| n.load(Ordering::Relaxed)).sum()
}

impl Shared {
    pub(crate) fn partition_reservation(&self, srs: &Srs, on_device: bool) -> u64 {
        let assignment = if on_device { srs.witness_bytes() } else { srs.partition_bytes() };
        assignment + self.backend.working_bytes(srs)
    }
}

/// The SRS (and recorded circuit) to the backend's devices ahead of the first proof; see
/// [`Engine::preload`].
pub(crate) fn preload(shared: &Shared, srs: &Srs, circuit: Option<&Arc<crate::synth::R1cs>>) {
    let circuit = circuit.filter(|c| shared.backend.evaluates_recorded(srs, c));
    if let Err(e) = shared.backend.preload(srs, circuit) {
        log::warn!(
            "SRS {}{} not uploaded to the GPU in advance (the first proof will): {e}",
            srs.path.display(),
            if circuit.is_some() { " and its recorded circuit" } else { "" }
        );
    }
}

pub(crate) struct Shared {
    pub(crate) config: EngineConfig,
    pub(crate) backend: Box<dyn Backend>,
    pub(crate) srs: SrsManager,
    /// Recorded partition circuits (R1CS) per proof type.
    pub(crate) circuits: Arc<circuits::Circuits>,
    pub(crate) dealloc: Deallocator,
    pub(crate) jobs: Mutex<JobTable>,
    pub(crate) changed: Condvar,
    pub(crate) queue: WorkQueue,
    pub(crate) counters: Counters,
    pub(crate) durations: metrics::Durations,
    /// Synthesized partitions handed to the prover and not yet taken by it.
    pub(crate) awaiting_prover: AtomicUsize,
    /// Each prover thread's work (one per backend lane).
    pub(crate) lanes: lanes::Lanes,
    pub(crate) started: Instant,
    pub(crate) memory: Arc<memory::MemoryBudget>,
    /// Bounds the recorded-circuit (witness-only) syntheses running at once.
    pub(crate) witness_gate: gate::Gate,
    /// What the host lets the automatic budget use (see `host_memory`).
    pub(crate) host_memory: host_memory::HostMemory,
    /// Set when a stage thread died: why the engine takes no more work.
    pub(crate) broken: Mutex<Option<String>>,
    /// The bounds on accepted, unfinished work (`max_queued_jobs`, `max_queued_input_mib`).
    pub(crate) admission: Arc<admission::Admission>,
}

impl Shared {
    /// Run `f` on the job under the table lock and wake every waiter.
    pub(crate) fn update(&self, job: &Job, f: impl FnOnce(&Job)) {
        let _g = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        f(job);
        self.changed.notify_all();
    }

    /// Room for synthesized partitions now: the configured budget, or by default 90 % of the
    /// host memory this process may fill (`host_memory`: MemAvailable at start, grown with
    /// MemTotal, within every cgroup limit) less the SRSes and recorded circuits resident since
    /// and what the backend holds between proofs.
    pub(crate) fn memory_limit(&self) -> u64 {
        if self.config.memory_budget_mib > 0 {
            return self.config.memory_budget_mib.saturating_mul(1 << 20);
        }
        let Some(room) = self.host_memory.room() else { return u64::MAX };
        let srs: u64 = self.srs.all().iter().map(|s| s.resident_bytes).sum();
        (room / 10 * 9).saturating_sub(srs).saturating_sub(self.circuits.resident_bytes()).saturating_sub(self.backend.held_host_bytes())
    }

    /// What `memory_limit` follows: "configured", "cgroup", "meminfo" or "unknown" (no limit).
    pub(crate) fn memory_source(&self) -> &'static str {
        if self.config.memory_budget_mib > 0 {
            "configured"
        } else {
            self.host_memory.source()
        }
    }

    /// A job reached a final state: its inputs and SRS reference go to the deallocator now,
    /// and the request id of a job that did not succeed is released so a retry can run.
    pub(crate) fn retire(&self, job: &Job) {
        let work = job.take_work();
        let mut t = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if work.is_some() {
            t.ended.push_back((Instant::now(), job.id));
        }
        if job.state() != JobState::Done {
            if let Some(key) = &job.request {
                if t.by_request.get(&key.id).is_some_and(|(id, _)| *id == job.id) {
                    t.by_request.remove(&key.id);
                }
            }
        }
        drop(t);
        if let Some(work) = work {
            self.dealloc.free(work, 0);
        }
    }

    /// Err once a stage thread has died (`break_engine`): the engine takes no more work.
    pub(crate) fn accepting(&self) -> Result<()> {
        match self.broken.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(why) => Err(err!(Internal, "not accepting work: {why}")),
            None => Ok(()),
        }
    }

    /// A stage thread died: fail every unfinished job with `why` and refuse new work.
    pub(crate) fn break_engine(&self, why: &str) {
        *self.broken.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_owned());
        let jobs: Vec<Arc<Job>> = self.jobs.lock().unwrap_or_else(|e| e.into_inner()).by_id.values().cloned().collect();
        for job in jobs {
            let mut ended = false;
            self.update(&job, |j| {
                ended = !j.state().is_final();
                j.fail(err!(Internal, "{why}"));
            });
            if ended {
                self.job_ended(&job, JobState::Failed);
                self.retire(&job);
            }
        }
        self.queue.close();
    }

    /// Count and log a job that has just reached its final `state` (every end passes here once).
    pub(crate) fn job_ended(&self, job: &Job, state: JobState) {
        let c = match state {
            JobState::Done => &self.counters.done,
            JobState::Failed => &self.counters.failed,
            JobState::Cancelled => &self.counters.cancelled,
            _ => return,
        };
        c[job.kind as usize].fetch_add(1, Ordering::Relaxed);
        // Read under the job's lock, logged after it: a log callback may call back into cuzk
        // (cuzk_job_poll of this very job), so no lock is held while a record is emitted.
        let (total, error) = {
            let g = job.lock();
            (g.timings.total, g.error.as_ref().map(|e| e.message.clone()).unwrap_or_default())
        };
        match state {
            JobState::Done => log::info!("{}: done in {total:.2?} ({})", job.label, partitions(job.partitions())),
            JobState::Failed => log::warn!("{}: failed: {error}", job.label),
            _ => log::info!("{}: cancelled after {:.2?}", job.label, job.submitted.elapsed()),
        }
    }
}

/// "1 partition", "10 partitions": for log lines.
pub(crate) fn partitions(n: usize) -> String {
    format!("{n} partition{}", if n == 1 { "" } else { "s" })
}
