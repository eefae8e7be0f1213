//! The proving engine: a job table, a synthesis pool, a prover thread and a finisher thread
//! connected by bounded queues, an SRS manager and a deallocator.
//!
//! ```text
//! submit ─► WorkQueue ─► synthesis workers (+ backend prepare) ─(bounded)─► prover thread
//!   (device work: Backend::start) ─(1)─► finisher thread (CPU tail: Backend::finish; job
//!   assembled and verified when its last partition is in) ─► result
//!                                     big buffers ─► deallocator thread
//! ```

mod admission;
mod circuits;
mod config;
mod dealloc;
mod gate;
mod handoff;
mod host_memory;
mod job;
mod lanes;
mod memory;
mod metrics;
mod queue;
mod status;
mod workers;

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use config::EngineConfig;
pub use job::{JobId, JobResult, JobState, JobTimings, Span, Stage};
use job::RequestKey;
pub use status::{result_json, timings_json, KindCounts, Overview};

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::kinds::{CircuitId, JobInputs, ProofRequest, Statement};
use crate::prover::{Backend, CpuBackend};
use crate::registry;
use crate::srs::{Srs, SrsManager};
use crate::verify::SealStatement;
use dealloc::Deallocator;
use job::Job;
use queue::WorkQueue;

/// What `poll` reports.
pub struct JobSnapshot {
    pub state: JobState,
    pub result: Option<Arc<JobResult>>,
    pub error: Option<Error>,
}

/// A request of any proof kind.
pub struct Submission<'a> {
    pub request: ProofRequest<'a>,
    /// Higher runs first; None: the kind's default (`ProofKind::default_priority`).
    pub priority: Option<i32>,
    /// Same request id → same job (while the job is remembered).
    pub request_id: Option<String>,
}

/// A C2 request.
pub struct SubmitRequest<'a> {
    pub c1_json: &'a [u8],
    pub sector_id: u64,
    pub prover_id: [u8; 32],
    pub priority: i32,
    /// Same request id → same job (while the job is remembered).
    pub request_id: Option<String>,
}

#[derive(Default)]
struct JobTable {
    by_id: HashMap<JobId, Arc<Job>>,
    /// Request id → (job, digest of the content it was submitted with).
    by_request: HashMap<String, (JobId, [u8; 32])>,
    /// Finished jobs in the order they ended, with when: forgetting the expired ones looks at
    /// these alone, so a submit's bookkeeping does not grow with the jobs remembered.
    ended: VecDeque<(Instant, JobId)>,
    next_id: JobId,
}

impl JobTable {
    /// The job a request id already names, if its content matches; an error if it names
    /// another sector's request.
    fn lookup(&self, key: &RequestKey) -> Result<Option<JobId>> {
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
}

/// A job between its checks and the job table.
struct Pending {
    key: Option<RequestKey>,
    priority: i32,
    submitted: Instant,
    srs_time: Duration,
    ticket: Option<admission::Ticket>,
}

/// Longest accepted request id: an idempotency key, not a payload.
pub(crate) const MAX_REQUEST_ID_BYTES: usize = 1024;

fn request_key(req: &Submission<'_>) -> Result<Option<RequestKey>> {
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

/// Jobs accepted and ended since the engine started, per kind (`ProofKind as usize`).
#[derive(Default)]
struct Counters {
    submitted: [AtomicU64; 4],
    done: [AtomicU64; 4],
    failed: [AtomicU64; 4],
    cancelled: [AtomicU64; 4],
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
fn preload(shared: &Shared, srs: &Srs, circuit: Option<&Arc<crate::synth::R1cs>>) {
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
    config: EngineConfig,
    backend: Box<dyn Backend>,
    srs: SrsManager,
    /// Recorded partition circuits (R1CS) per proof type.
    circuits: Arc<circuits::Circuits>,
    dealloc: Deallocator,
    jobs: Mutex<JobTable>,
    changed: Condvar,
    queue: WorkQueue,
    counters: Counters,
    durations: metrics::Durations,
    /// Synthesized partitions handed to the prover and not yet taken by it.
    awaiting_prover: AtomicUsize,
    /// Each prover thread's work (one per backend lane).
    lanes: lanes::Lanes,
    started: Instant,
    memory: Arc<memory::MemoryBudget>,
    /// Bounds the recorded-circuit (witness-only) syntheses running at once.
    witness_gate: gate::Gate,
    /// What the host lets the automatic budget use (see `host_memory`).
    host_memory: host_memory::HostMemory,
    /// Set when a stage thread died: why the engine takes no more work.
    broken: Mutex<Option<String>>,
    /// The bounds on accepted, unfinished work (`max_queued_jobs`, `max_queued_input_mib`).
    admission: Arc<admission::Admission>,
}

impl Shared {
    /// Run `f` on the job under the table lock and wake every waiter.
    fn update(&self, job: &Job, f: impl FnOnce(&Job)) {
        let _g = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        f(job);
        self.changed.notify_all();
    }

    /// Room for synthesized partitions now: the configured budget, or by default 90 % of the
    /// host memory this process may fill (`host_memory`: MemAvailable at start, grown with
    /// MemTotal, within every cgroup limit) less the SRSes and recorded circuits resident since.
    fn memory_limit(&self) -> u64 {
        if self.config.memory_budget_mib > 0 {
            return self.config.memory_budget_mib.saturating_mul(1 << 20);
        }
        let Some(room) = self.host_memory.room() else { return u64::MAX };
        let srs: u64 = self.srs.all().iter().map(|s| s.resident_bytes).sum();
        (room / 10 * 9).saturating_sub(srs).saturating_sub(self.circuits.resident_bytes())
    }

    /// What `memory_limit` follows: "configured", "cgroup", "meminfo" or "unknown" (no limit).
    fn memory_source(&self) -> &'static str {
        if self.config.memory_budget_mib > 0 {
            "configured"
        } else {
            self.host_memory.source()
        }
    }

    /// A job reached a final state: its inputs and SRS reference go to the deallocator now,
    /// and the request id of a job that did not succeed is released so a retry can run.
    fn retire(&self, job: &Job) {
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
    fn accepting(&self) -> Result<()> {
        match self.broken.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(why) => Err(err!(Internal, "not accepting work: {why}")),
            None => Ok(()),
        }
    }

    /// A stage thread died: fail every unfinished job with `why` and refuse new work.
    fn break_engine(&self, why: &str) {
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
    fn job_ended(&self, job: &Job, state: JobState) {
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
            JobState::Done => log::info!("{}: done in {total:.2?} ({} partitions)", job.label, job.partitions()),
            JobState::Failed => log::warn!("{}: failed: {error}", job.label),
            _ => log::info!("{}: cancelled after {:.2?}", job.label, job.submitted.elapsed()),
        }
    }
}

pub struct Engine {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// "cpu"; "cuda" (an `Unsupported` error naming why when it cannot be used); "auto": CUDA when
/// compiled in and a device is present, else the CPU. `devices` narrows the CUDA devices; an
/// ordinal that does not exist is an error under "auto" too, also where there is no CUDA at
/// all (a typo, or a missing driver, must not quietly mean the CPU).
fn select_backend(config: &EngineConfig) -> Result<Box<dyn Backend>> {
    let only = config.devices.as_deref();
    let no_such_devices = |why: &str| err!(InvalidArgument, "devices {:?}: no such CUDA device ({why})", only.unwrap_or_default());
    // Storage providers set BELLMAN_NO_GPU to keep a proving process off the GPU (bellperson
    // and filecoin-ffi honour it): "auto" does too; an explicit "cuda" overrides it.
    let no_gpu = std::env::var_os("BELLMAN_NO_GPU").is_some();
    match config.backend.as_str() {
        "cpu" => Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes))),
        "auto" if no_gpu && only.is_some() => Err(err!(
            InvalidArgument,
            "devices {:?} names CUDA devices, but BELLMAN_NO_GPU is set (it keeps \"auto\" off the GPU; use \"cuda\" to prove on them anyway)",
            only.unwrap_or_default()
        )),
        "auto" if no_gpu => {
            log::info!("backend auto: BELLMAN_NO_GPU is set; proving on the CPU");
            Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes)))
        }
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Box::new(crate::prover::CudaBackend::with_budget(only, config.gpu_lanes, config.vram_budget())?)),
        #[cfg(feature = "cuda")]
        "auto" => match crate::prover::CudaBackend::with_budget(only, config.gpu_lanes, config.vram_budget()) {
            Ok(b) => {
                log::info!("backend auto: proving on CUDA ({} device(s))", b.device_count());
                Ok(Box::new(b))
            }
            Err(e) if e.status == crate::error::Status::Unsupported && only.is_some() => Err(no_such_devices(&e.message)),
            Err(e) if e.status == crate::error::Status::Unsupported => {
                log::info!("backend auto: not using CUDA ({}); proving on the CPU", e.message);
                Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes)))
            }
            Err(e) => Err(e),
        },
        #[cfg(not(feature = "cuda"))]
        "auto" if only.is_some() => Err(no_such_devices("this build has no CUDA backend: compiled without the `cuda` feature")),
        #[cfg(not(feature = "cuda"))]
        "auto" => {
            log::info!("backend auto: this build has no CUDA backend (compiled without the `cuda` feature); proving on the CPU");
            Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes)))
        }
        #[cfg(not(feature = "cuda"))]
        "cuda" => Err(err!(Unsupported, "backend \"cuda\" is not available: this build was compiled without the `cuda` feature")),
        other => Err(err!(Unsupported, "backend {other:?} is not available in this build")),
    }
}

impl Engine {
    pub fn new(config: EngineConfig) -> Result<Engine> {
        config.validate()?;
        let backend = select_backend(&config)?;
        Self::with_backend(config, backend)
    }

    /// An engine proving with `backend` instead of the one `config.backend` names (tests of the
    /// engine's handling of backends).
    #[doc(hidden)]
    pub fn with_backend(config: EngineConfig, backend: Box<dyn Backend>) -> Result<Engine> {
        config.validate()?;
        let dealloc = Deallocator::start().map_err(|e| err!(Internal, "starting the deallocator thread: {e}"))?;
        let lanes = lanes::Lanes::new(backend.lanes());
        let host_memory = host_memory::HostMemory::read(host_memory::Probe::default());
        let configured = config.memory_budget_mib.saturating_mul(1 << 20);
        if let Some(limit) = host_memory.cgroup_limit().filter(|&l| configured > l) {
            log::warn!(
                "memory_budget_mib {} is above this process's cgroup memory limit ({} MiB): partitions may be OOM-killed before the budget holds them back",
                config.memory_budget_mib,
                limit >> 20
            );
        }
        let (max_jobs, max_bytes) = config.queue_limits();
        let shared = Arc::new(Shared {
            admission: admission::Admission::new(max_jobs, max_bytes),
            config,
            backend,
            srs: SrsManager::default(),
            circuits: Arc::default(),
            dealloc,
            jobs: Mutex::new(JobTable { next_id: 1, ..Default::default() }),
            changed: Condvar::new(),
            queue: WorkQueue::default(),
            counters: Counters::default(),
            durations: metrics::Durations::default(),
            awaiting_prover: AtomicUsize::new(0),
            lanes,
            started: Instant::now(),
            memory: memory::MemoryBudget::new(),
            witness_gate: gate::Gate::new(config::cores()),
            host_memory,
            broken: Mutex::new(None),
        });
        let threads = workers::spawn(&shared).map_err(|e| err!(Internal, "starting worker threads: {e}"))?;
        log::info!("cuzk engine started: backend {}", shared.backend.name());
        Ok(Engine { shared, threads: Mutex::new(threads) })
    }

    pub fn config(&self) -> &EngineConfig {
        &self.shared.config
    }

    pub fn backend_name(&self) -> &'static str {
        self.shared.backend.name()
    }

    /// Host memory the engine reserves for one partition proved against `srs`: its assignment
    /// ([`Srs::partition_bytes`], or [`Srs::witness_bytes`] when the backend evaluates a, b, c
    /// on its device) and the backend's working buffers.
    pub fn partition_reservation(&self, srs: &Srs, on_device: bool) -> u64 {
        self.shared.partition_reservation(srs, on_device)
    }

    /// Load the SRS of `circuit` from `path`, or from the configured params dir by its v28 name.
    pub fn srs_load(&self, circuit: impl Into<CircuitId>, path: Option<&Path>) -> Result<Arc<Srs>> {
        self.srs_load_cancellable(circuit, path, CancelToken::never())
    }

    /// [`Self::srs_load`] that `cancel` stops (`Cancelled`), also while it waits behind another
    /// load; nothing of a stopped load stays resident.
    pub fn srs_load_cancellable(&self, circuit: impl Into<CircuitId>, path: Option<&Path>, cancel: &CancelToken) -> Result<Arc<Srs>> {
        let circuit = circuit.into();
        if let Some(p) = circuit.seal() {
            registry::ensure_supported(p)?;
        }
        let path = match path {
            Some(p) => p.to_owned(),
            None => self.shared.config.params_dir().join(circuit.params_file_name()?),
        };
        if matches!(std::fs::symlink_metadata(&path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            return Err(err!(SrsLoad, "params file for {} not found: expected {}", circuit.name(), path.display()));
        }
        let config = &self.shared.config;
        let (srs, loaded) = self.shared.srs.load(circuit, &path, config.validation(), config.srs_cache_dir.as_deref(), cancel)?;
        if loaded {
            self.preload(&srs);
        }
        Ok(srs)
    }

    /// Put `srs` where the backend proves (VRAM for CUDA) now rather than at its first proof,
    /// with its proof's recorded circuit if that is ready (else the circuit follows when its
    /// recording ends). A failure (VRAM full, say) is logged, not returned: the first proof
    /// uploads then. `srs_load` does this; benchmarks that make their own SRS call it themselves.
    pub fn preload(&self, srs: &Srs) {
        let circuit = srs.circuit.seal().and_then(|p| self.shared.circuits.get(p));
        preload(&self.shared, srs, circuit.as_ref());
    }

    /// Forget the SRS of `circuit`; its memory goes once running jobs finish. Ok(false): none loaded.
    pub fn srs_evict(&self, circuit: impl Into<CircuitId>) -> Result<bool> {
        let circuit = circuit.into();
        match self.shared.srs.evict(circuit)? {
            Some(srs) => {
                let bytes = srs.resident_bytes;
                self.shared.dealloc.free(srs, bytes);
                if let Some(r1cs) = circuit.seal().and_then(|p| self.shared.circuits.evict(p)) {
                    let bytes = r1cs.stats().bytes as u64;
                    self.shared.dealloc.free(r1cs, bytes);
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    pub fn srs_get(&self, circuit: impl Into<CircuitId>) -> Result<Option<Arc<Srs>>> {
        self.shared.srs.get(circuit.into())
    }

    /// Queue a C2 job. Errors in the request (bad C1, no SRS) are returned here, synchronously.
    pub fn submit(&self, req: SubmitRequest<'_>) -> Result<JobId> {
        let request = ProofRequest::PoRep { c1_json: req.c1_json, sector_id: req.sector_id, prover_id: req.prover_id };
        self.submit_proof(Submission { request, priority: Some(req.priority), request_id: req.request_id })
    }

    /// Queue a job of any kind. Errors in the request (malformed inputs, vanilla proofs that do
    /// not verify, no SRS) are returned here, synchronously.
    pub fn submit_proof(&self, req: Submission<'_>) -> Result<JobId> {
        let submitted = Instant::now();
        self.shared.accepting()?;
        self.forget_expired();
        let key = request_key(&req)?;
        if let Some(key) = &key {
            let t = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(id) = t.lookup(key)? {
                return Ok(id);
            }
        }
        // Admitted before parsing (a full queue costs a caller nothing); the ticket goes back if
        // the request turns out to be bad.
        let ticket = self.shared.admission.admit(req.request.input_bytes())?;
        let inputs = req.request.parse()?;
        let t_srs = Instant::now();
        let on_demand = match self.shared.srs.get(inputs.circuit)? {
            None if self.shared.config.load_srs_on_demand => Some(self.srs_load(inputs.circuit, None)?),
            loaded => loaded,
        };
        let srs = on_demand.ok_or_else(|| {
            let expected = inputs
                .circuit
                .params_file_name()
                .map(|f| self.shared.config.params_dir().join(f).display().to_string())
                .unwrap_or_default();
            err!(SrsNotLoaded, "no SRS loaded for {} (load it first, e.g. from {expected})", inputs.circuit.name())
        })?;
        let srs_time = t_srs.elapsed();
        if let (true, Some(proof)) = (self.shared.config.record_circuits, inputs.circuit.seal()) {
            // Once recorded, the circuit goes where the backend evaluates it, off the provers' path
            // (unless the SRS was evicted meanwhile: the recording holds no reference to it).
            let (shared, srs_up) = (Arc::downgrade(&self.shared), Arc::downgrade(&srs));
            let on_ready = move |r1cs: &Arc<crate::synth::R1cs>| {
                if let (Some(shared), Some(srs)) = (shared.upgrade(), srs_up.upgrade()) {
                    preload(&shared, &srs, Some(r1cs));
                }
            };
            self.shared.circuits.ensure(proof, srs.size_hint(), inputs.circuits.clone(), on_ready);
        }
        let priority = req.priority.unwrap_or(inputs.kind.default_priority());
        let job = Pending { key, priority, submitted, srs_time, ticket: Some(ticket) };
        self.enqueue(job, inputs, srs)
    }

    /// Queue a job whose partition circuits are already built, proved against `srs` (the
    /// engine's own benchmarks and soak runs with synthetic circuits: no C1, no request id;
    /// turn `verify` off unless the circuits are real seal circuits).
    #[doc(hidden)]
    pub fn submit_circuits(&self, inputs: crate::synth::SealJobInputs, srs: Arc<Srs>, priority: i32) -> Result<JobId> {
        self.shared.accepting()?;
        let job = Pending { key: None, priority, submitted: Instant::now(), srs_time: Duration::ZERO, ticket: None };
        self.enqueue(job, crate::kinds::seal_inputs(inputs, [0; 32], 0), srs)
    }

    /// Use `r1cs` for jobs of its proof type, also those given to [`Self::submit_circuits`]
    /// (benchmarks at real shapes record it while they make their SRS).
    #[doc(hidden)]
    pub fn adopt_circuit(&self, r1cs: Arc<crate::synth::R1cs>) {
        self.shared.circuits.adopt(r1cs);
    }

    /// Use `srs`, made in memory (a generated test SRS at a size whose params this machine does
    /// not have, a benchmark's random one), for jobs of its circuit as if `srs_load` had loaded
    /// it: submissions find it, proofs are verified against its verifying key.
    #[doc(hidden)]
    pub fn adopt_srs(&self, srs: Arc<Srs>) -> Result<()> {
        self.shared.srs.adopt(srs.clone())?;
        preload(&self.shared, &srs, None);
        Ok(())
    }

    fn enqueue(&self, p: Pending, inputs: JobInputs, srs: Arc<Srs>) -> Result<JobId> {
        let mut t = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(key) = &p.key {
            if let Some(id) = t.lookup(key)? {
                return Ok(id); // raced with an identical submit
            }
        }
        let id = t.next_id;
        t.next_id += 1;
        if let Some(key) = &p.key {
            t.by_request.insert(key.id.clone(), (id, key.content));
        }
        let job = Arc::new(Job::new(id, p.key, p.priority, inputs, srs, p.ticket, p.srs_time, p.submitted));
        t.by_id.insert(id, job.clone());
        drop(t);
        self.shared.counters.submitted[job.kind as usize].fetch_add(1, Ordering::Relaxed);
        log::info!("{}: queued ({} partitions, priority {})", job.label, job.partitions(), job.priority);
        self.shared.queue.push_job(&job);
        Ok(id)
    }

    fn job(&self, id: JobId) -> Result<Arc<Job>> {
        let t = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
        t.by_id.get(&id).cloned().ok_or_else(|| err!(UnknownJob, "unknown job id {id}"))
    }

    fn snapshot(job: &Job) -> JobSnapshot {
        let g = job.lock();
        JobSnapshot { state: g.state, result: g.result.clone(), error: g.error.clone() }
    }

    /// Non-blocking state (and result once done).
    pub fn poll(&self, id: JobId) -> Result<JobSnapshot> {
        Ok(Self::snapshot(&*self.job(id)?))
    }

    /// Block until the job ends or `timeout` passes (None = forever).
    pub fn wait(&self, id: JobId, timeout: Option<Duration>) -> Result<JobSnapshot> {
        let job = self.job(id)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut g = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if job.state().is_final() {
                drop(g);
                return Ok(Self::snapshot(&job));
            }
            g = match deadline {
                None => self.shared.changed.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(err!(Timeout, "job {id} still {} after {:?}", job.state().name(), timeout.unwrap_or_default()));
                    }
                    self.shared.changed.wait_timeout(g, d - now).unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
    }

    /// Cancel a job. Ok(true) if this call cancelled it; Ok(false) if it had already ended.
    pub fn cancel(&self, id: JobId) -> Result<bool> {
        let job = self.job(id)?;
        let mut cancelled = false;
        self.shared.update(&job, |j| cancelled = j.cancel());
        if cancelled {
            self.shared.job_ended(&job, JobState::Cancelled);
            self.shared.retire(&job);
        }
        Ok(cancelled)
    }

    /// Check a seal proof against the resident SRS of its proof type (or the `.vk` file in the
    /// params dir when none is loaded).
    pub fn verify_seal(&self, st: &SealStatement, proof: &[u8]) -> Result<bool> {
        registry::ensure_supported(st.proof_type)?;
        self.verify(st.proof_type, st, proof)
    }

    /// Check a proof of `circuit` against `statement` (`kinds::post::winning_statement`, …)
    /// with the resident SRS's verifying key, or the `.vk` file in the params dir when none is
    /// loaded.
    pub fn verify(&self, circuit: impl Into<CircuitId>, statement: &dyn Statement, proof: &[u8]) -> Result<bool> {
        let circuit = circuit.into();
        match self.shared.srs.get(circuit)? {
            Some(srs) => statement.verify(&srs.pvk, proof),
            None => {
                let path = self.shared.config.params_dir().join(circuit.vk_file_name()?);
                let pvk = crate::verify::read_prepared_vk(&path)?;
                statement.verify(&pvk, proof)
            }
        }
    }

    /// Engine state as a JSON document.
    pub fn status_json(&self) -> String {
        self.forget_expired();
        status::status_json(self)
    }

    /// Engine state as typed values: jobs per kind and state, devices, resident SRSes.
    pub fn overview(&self) -> Overview {
        self.forget_expired();
        status::overview(self)
    }

    /// Metrics in the Prometheus text format.
    pub fn metrics_text(&self) -> String {
        status::metrics_text(self)
    }

    /// Forget the jobs that ended more than `job_ttl_secs` ago: the oldest first, stopping at
    /// the first one still within its TTL (the cost is the jobs forgotten, not those remembered).
    fn forget_expired(&self) {
        let ttl = Duration::from_secs(self.shared.config.job_ttl_secs);
        let mut t = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(&(ended, id)) = t.ended.front() {
            if ended.elapsed() <= ttl {
                break;
            }
            t.ended.pop_front();
            if let Some(job) = t.by_id.remove(&id) {
                if let Some(key) = &job.request {
                    if t.by_request.get(&key.id).is_some_and(|(j, _)| *j == id) {
                        t.by_request.remove(&key.id);
                    }
                }
            }
        }
    }

    /// Stop: finish (drain_on_free) or cancel in-flight jobs, join every thread.
    pub fn shutdown(&self) {
        let jobs: Vec<Arc<Job>> = {
            let t = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
            t.by_id.values().cloned().collect()
        };
        if self.shared.config.drain_on_free {
            for j in &jobs {
                let _ = self.wait(j.id, None);
            }
        } else {
            for j in &jobs {
                let _ = self.cancel(j.id);
            }
        }
        self.shared.queue.close();
        self.shared.circuits.shutdown();
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        self.shared.dealloc.shutdown();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The prove stage's channel type.
pub(crate) type ProveSender = handoff::Sender<workers::Synthesized>;
