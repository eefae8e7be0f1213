//! The proving engine: a job table, a synthesis pool, a prover thread and a finisher thread
//! connected by bounded queues, an SRS manager and a deallocator.
//!
//! ```text
//! submit ─► WorkQueue ─► synthesis workers (+ backend prepare) ─(bounded)─► prover thread
//!   (device work: Backend::start) ─(1)─► finisher thread (CPU tail: Backend::finish; job
//!   assembled and verified when its last partition is in) ─► result
//!                                     big buffers ─► deallocator thread
//! ```
//!
//! This file is the API: the `Engine`, its construction and shutdown, and the job queries.
//! Accepting work is in `submit.rs`, the resident SRSes and circuits in `resident.rs`, the state
//! every thread shares (and what happens when a job ends) in `shared.rs`, the job table in
//! `table.rs`, the stage threads in `workers.rs`; which backend proves is
//! `prover::select_backend`.

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
mod resident;
mod shared;
mod status;
mod submit;
mod table;
mod workers;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use config::EngineConfig;
pub use job::{JobId, JobResult, JobState, JobTimings, Span, Stage};
pub use status::{result_json, timings_json, KindCounts, Overview};

use crate::error::{Error, Result};
use crate::kinds::{CircuitId, ProofRequest, Statement};
use crate::prover::{select_backend, Backend, BackendChoice};
use crate::srs::{Srs, SrsManager};
use crate::kinds::porep::SealStatement;
use dealloc::Deallocator;
use job::Job;
use queue::WorkQueue;
pub(crate) use shared::{total, Shared};
use shared::Counters;
use table::JobTable;

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

pub struct Engine {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Result<Engine> {
        config.validate()?;
        let backend = select_backend(&BackendChoice {
            name: &config.backend,
            devices: config.devices.as_deref(),
            gpu_lanes: config.gpu_lanes,
            cpu_lanes: config.cpu_lanes,
            vram_budget: config.vram_budget(),
        })?;
        Self::with_backend(config, backend)
    }

    /// An engine proving with `backend` instead of the one `config.backend` names (tests of the
    /// engine's handling of backends).
    #[doc(hidden)]
    pub fn with_backend(config: EngineConfig, backend: Box<dyn Backend>) -> Result<Engine> {
        config.validate()?;
        let dealloc = Deallocator::start().map_err(|e| err!(Internal, "starting the deallocator thread: {e}"))?;
        // The backend's lanes, and last the urgent prover's (`workers::spawn`).
        let lanes = lanes::Lanes::new(backend.lanes() + 1);
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
        CircuitId::Seal(st.proof_type).ensure_supported()?;
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
                let pvk = crate::srs::read_prepared_vk(&path)?;
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

    /// Forget the jobs that ended more than `job_ttl_secs` ago ([`table::JobTable::forget_expired`]).
    fn forget_expired(&self) {
        let ttl = Duration::from_secs(self.shared.config.job_ttl_secs);
        self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner()).forget_expired(ttl);
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
