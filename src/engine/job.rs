//! Jobs: one proof request (any kind), its partitions' progress, its result and its timers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bellperson::groth16::Proof;
use blstrs::Bls12;

use super::admission::Ticket;
use crate::error::Error;
use crate::prover::PhaseTimings;
use crate::srs::Srs;
use crate::kinds::{JobInputs, ProofKind};

pub type JobId = u64;

/// Job states as seen by callers. Numbers are part of the C ABI.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Queued = 0,
    Running = 1,
    Done = 2,
    Failed = 3,
    Cancelled = 4,
}

impl JobState {
    pub fn is_final(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed | JobState::Cancelled)
    }

    pub fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }
}

/// Independent wall-clock timers of one job. `total` is measured on its own, so
/// `total - (queue + synthesis + prove_queue + prove + verify)` exposes unaccounted time.
#[derive(Debug, Clone, Default)]
pub struct JobTimings {
    /// Submit → first partition's synthesis starts.
    pub queue: Duration,
    /// Looking up (or loading) the SRS at submit.
    pub srs: Duration,
    /// Sum over partitions of synthesis wall time.
    pub synthesis: Duration,
    /// Sum over partitions of time a synthesized partition waited for the prover.
    pub prove_queue: Duration,
    /// Sum over partitions of prover wall time.
    pub prove: Duration,
    /// Verification of the assembled proof.
    pub verify: Duration,
    /// Submit → result ready.
    pub total: Duration,
    /// Backend phases, summed over partitions.
    pub phases: PhaseTimings,
    /// When each partition was in which stage, from submit: the timeline of the job.
    pub spans: Vec<Span>,
}

/// One partition in one pipeline stage, `start`..`end` after the job was submitted.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub partition: u32,
    pub stage: Stage,
    pub start: Duration,
    pub end: Duration,
}

/// The pipeline stages a partition passes through, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Waiting for a witness-synthesis slot (recorded circuits: a few at a time).
    GateWait,
    /// Waiting for room in the memory budget.
    MemoryWait,
    Synthesis,
    /// The backend's preparation of a synthesized partition (the CUDA backend classifies the
    /// witness for its sparse MSMs), on the synthesis worker.
    Prepare,
    /// Ready, waiting for the prover.
    ProveQueue,
    /// The backend's first stage (on the GPU: everything up to the last kernel launch).
    Prove,
    /// The backend's tail (downloads, CPU assembly), on the finisher thread.
    Finish,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 7] =
        [Stage::GateWait, Stage::MemoryWait, Stage::Synthesis, Stage::Prepare, Stage::ProveQueue, Stage::Prove, Stage::Finish];

    pub fn name(self) -> &'static str {
        match self {
            Stage::GateWait => "gate_wait",
            Stage::MemoryWait => "memory_wait",
            Stage::Synthesis => "synthesis",
            Stage::Prepare => "prepare",
            Stage::ProveQueue => "prove_queue",
            Stage::Prove => "prove",
            Stage::Finish => "finish",
        }
    }
}

impl JobTimings {
    /// Record that `partition` was in `stage` from `start` to `end` (instants; `submitted` is
    /// the job's).
    pub(crate) fn span(&mut self, submitted: Instant, partition: usize, stage: Stage, start: Instant, end: Instant) {
        let at = |t: Instant| t.saturating_duration_since(submitted);
        self.spans.push(Span { partition: partition as u32, stage, start: at(start), end: at(end) });
    }
}

pub struct JobResult {
    pub kind: ProofKind,
    /// The partition proofs, concatenated (192 bytes each).
    pub proof: Vec<u8>,
    pub timings: JobTimings,
    pub backend: &'static str,
    pub partitions: usize,
    /// Partitions the backend proved on the CPU because it had no usable device left.
    pub cpu_fallback_partitions: usize,
    pub verified: bool,
}

/// What a job needs while it runs: its parsed inputs and its SRS. Taken out of the job the
/// moment it reaches a final state and handed to the deallocator, so a finished job kept for
/// poll/wait (`job_ttl_secs`) holds neither — an evicted SRS is freed when its last job ends.
pub struct JobWork {
    pub inputs: JobInputs,
    pub srs: Arc<Srs>,
    /// The job's share of the queue bounds, given back when the inputs are freed.
    pub _ticket: Option<Ticket>,
}

/// An idempotency key and a digest of what it was first submitted with: the same key with
/// other content is refused, never answered with the other job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestKey {
    pub id: String,
    pub content: [u8; 32],
}

pub struct Job {
    pub id: JobId,
    pub request: Option<RequestKey>,
    pub priority: i32,
    pub kind: ProofKind,
    /// "job 7 (porep StackedDrg32GiBV1_1, sector 42, request \"abc\")": how log lines name it.
    pub label: String,
    partitions: usize,
    work: Mutex<Option<Arc<JobWork>>>,
    pub submitted: Instant,
    cancelled: AtomicBool,
    inner: Mutex<JobInner>,
}

pub struct JobInner {
    pub state: JobState,
    pub error: Option<Error>,
    pub result: Option<Arc<JobResult>>,
    pub proofs: Vec<Option<Proof<Bls12>>>,
    pub timings: JobTimings,
    pub started: bool,
    pub finished_at: Option<Instant>,
    /// Partitions proved by the CPU fallback so far.
    pub cpu_fallback_partitions: usize,
}

impl Job {
    /// Whether the job still holds `srs` (from submit until its work is freed at its end).
    pub fn holds_srs(&self, srs: &Arc<Srs>) -> bool {
        self.work.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(|w| Arc::ptr_eq(&w.srs, srs))
    }

    pub fn new(
        id: JobId,
        request: Option<RequestKey>,
        priority: i32,
        inputs: JobInputs,
        srs: Arc<Srs>,
        ticket: Option<Ticket>,
        srs_time: Duration,
        submitted: Instant,
    ) -> Self {
        let partitions = inputs.circuits.partitions();
        let label = format!(
            "job {id} ({} {}, {}{})",
            inputs.kind.name(),
            inputs.circuit.name(),
            inputs.subject,
            request.as_ref().map(|r| format!(", request {:?}", r.id)).unwrap_or_default()
        );
        Job {
            id,
            request,
            priority,
            kind: inputs.kind,
            label,
            partitions,
            work: Mutex::new(Some(Arc::new(JobWork { inputs, srs, _ticket: ticket }))),
            submitted,
            cancelled: AtomicBool::new(false),
            inner: Mutex::new(JobInner {
                state: JobState::Queued,
                error: None,
                result: None,
                proofs: vec![None; partitions],
                timings: JobTimings { srs: srs_time, ..Default::default() },
                started: false,
                finished_at: None,
                cpu_fallback_partitions: 0,
            }),
        }
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// The job's inputs and SRS while it is unfinished; None once it has ended.
    pub fn work(&self) -> Option<Arc<JobWork>> {
        self.work.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Take the inputs and SRS out of a job that has ended (for the deallocator).
    pub fn take_work(&self) -> Option<Arc<JobWork>> {
        self.work.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    pub fn lock(&self) -> MutexGuard<'_, JobInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    pub fn state(&self) -> JobState {
        self.lock().state
    }

    /// Mark cancelled unless already final. Returns whether this call cancelled it.
    pub fn cancel(&self) -> bool {
        let mut g = self.lock();
        if g.state.is_final() {
            return false;
        }
        self.cancelled.store(true, Ordering::Release);
        g.state = JobState::Cancelled;
        g.error = Some(err!(Cancelled, "job {} was cancelled", self.id));
        g.finished_at = Some(Instant::now());
        true
    }

    /// Fail the job (first error wins) unless it already ended.
    pub fn fail(&self, e: Error) {
        let mut g = self.lock();
        if g.state.is_final() {
            return;
        }
        self.cancelled.store(true, Ordering::Release); // stop its other partitions
        g.state = JobState::Failed;
        g.error = Some(e);
        g.finished_at = Some(Instant::now());
    }
}
