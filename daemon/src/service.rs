//! `cuzk.v1.ProvingEngine` on the engine: each method validates its request, runs the engine's
//! blocking calls on tokio's blocking pool and answers in Curio's terms. Bad input is
//! INVALID_ARGUMENT with the engine's message, an unknown job NOT_FOUND, a missing SRS
//! FAILED_PRECONDITION, a full queue RESOURCE_EXHAUSTED, a draining daemon UNAVAILABLE; a proof
//! that fails while it runs is an OK answer with status FAILED and its error, as Curio expects.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::{Request as GrpcRequest, Response, Status as GrpcStatus};

use cuzk::engine::{Engine, JobId, JobSnapshot, JobState};
use cuzk::error::{Error, Status};
use cuzk::kinds::ProofKind;

use crate::circuits;
use crate::jobs::Jobs;
use crate::pb::proving_engine_server::ProvingEngine;
use crate::pb::*;
use crate::requests::Request;

pub struct Service {
    engine: Arc<Engine>,
    jobs: Arc<Jobs>,
    draining: Arc<AtomicBool>,
}

impl Service {
    pub fn new(engine: Arc<Engine>, draining: Arc<AtomicBool>) -> Service {
        Service { jobs: Arc::new(Jobs::new(engine.clone())), engine, draining }
    }

    fn accepting(&self) -> Result<(), GrpcStatus> {
        if self.draining.load(Ordering::SeqCst) {
            return Err(GrpcStatus::unavailable("cuzk-daemon is shutting down and accepts no new proofs"));
        }
        Ok(())
    }

    /// Validate and submit. `waiter`: the caller waits for the job (Prove), and the returned
    /// [`Waiter`] is its claim. The claim is made on the blocking thread together with the
    /// submit, so a call dropped while its submit runs (its client gone, its deadline passed)
    /// still releases it: tokio drops the finished task's output, and with it the claim.
    async fn submit(&self, req: Option<SubmitProofRequest>, waiter: bool) -> Result<(String, JobId, Option<Waiter>), GrpcStatus> {
        self.accepting()?;
        let req = req.ok_or_else(|| GrpcStatus::invalid_argument("missing submit field"))?;
        let req = Request::from_pb(req).map_err(GrpcStatus::invalid_argument)?;
        let jobs = self.jobs.clone();
        let kind = req.kind;
        let (name, job, claim) = blocking(move || {
            let (name, job) = jobs.submit(&req, waiter)?;
            let claim = waiter.then(|| Waiter { jobs: jobs.clone(), name: name.clone(), job });
            Ok::<_, Error>((name, job, claim))
        })
        .await?
        .map_err(status)?;
        log::info!("job {name} ({}, engine job {job}) accepted", kind.name());
        Ok((name, job, claim))
    }

    /// Wait for `job` up to `timeout` (None: until it ends) without holding a runtime thread.
    async fn await_job(&self, name: &str, job: JobId, timeout: Option<Duration>) -> Result<AwaitProofResponse, GrpcStatus> {
        let engine = self.engine.clone();
        match blocking(move || engine.wait(job, timeout)).await? {
            Ok(snap) => Ok(answer(name, &snap)),
            Err(e) if e.status == Status::Timeout => {
                Ok(AwaitProofResponse { job_id: name.to_owned(), status: await_proof_response::Status::Timeout as i32, error_message: e.message, ..Default::default() })
            }
            Err(e) => Err(status(e)),
        }
    }
}

/// Run a blocking engine call on the blocking pool.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, GrpcStatus> {
    tokio::task::spawn_blocking(f).await.map_err(|e| GrpcStatus::internal(format!("engine call failed: {e}")))
}

/// The gRPC status of an engine error.
pub fn status(e: Error) -> GrpcStatus {
    let m = e.message;
    match e.status {
        Status::InvalidArgument | Status::InvalidInput | Status::FaultySectors => GrpcStatus::invalid_argument(m),
        Status::UnknownJob => GrpcStatus::not_found(m),
        Status::SrsNotLoaded | Status::SrsLoad | Status::Unsupported => GrpcStatus::failed_precondition(m),
        Status::QueueFull => GrpcStatus::resource_exhausted(m),
        Status::ShuttingDown => GrpcStatus::unavailable(m),
        Status::Timeout => GrpcStatus::deadline_exceeded(m),
        Status::Cancelled => GrpcStatus::cancelled(m),
        _ => GrpcStatus::internal(format!("{:?}: {m}", e.status)),
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// A finished job as Curio reads it.
fn answer(name: &str, snap: &JobSnapshot) -> AwaitProofResponse {
    use await_proof_response::Status as S;
    let mut r = AwaitProofResponse { job_id: name.to_owned(), ..Default::default() };
    match (snap.state, &snap.result) {
        (JobState::Done, Some(res)) => {
            let t = &res.timings;
            r.status = S::Completed as i32;
            r.proof = res.proof.clone();
            (r.queue_wait_ms, r.srs_load_ms, r.synthesis_ms, r.gpu_compute_ms, r.total_ms) =
                (ms(t.queue), ms(t.srs), ms(t.synthesis), ms(t.prove), ms(t.total));
        }
        (JobState::Cancelled, _) => {
            r.status = S::Cancelled as i32;
            r.error_message = "the job was cancelled".into();
        }
        (state, _) => {
            r.status = S::Failed as i32;
            r.error_message = match &snap.error {
                Some(e) => e.to_string(),
                None => format!("the job ended {} without a result", state.name()),
            };
        }
    }
    r
}

/// Releases a Prove caller's claim on its job when the call ends in any way, also when tonic
/// drops the call because the client went away or its deadline passed.
struct Waiter {
    jobs: Arc<Jobs>,
    name: String,
    job: JobId,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let (jobs, name, job) = (self.jobs.clone(), std::mem::take(&mut self.name), self.job);
        let release = move || {
            if jobs.release(&name, job) {
                log::info!("job {name} (engine job {job}) cancelled: its caller went away before it ended");
            }
        };
        // Cancelling takes the engine's locks: not on a runtime worker thread.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(release)),
            Err(_) => release(),
        }
    }
}

#[tonic::async_trait]
impl ProvingEngine for Service {
    async fn submit_proof(&self, req: GrpcRequest<SubmitProofRequest>) -> Result<Response<SubmitProofResponse>, GrpcStatus> {
        let (job_id, _, _) = self.submit(Some(req.into_inner()), false).await?;
        let engine = self.engine.clone();
        let ahead = blocking(move || engine.overview().kinds.iter().map(|k| k.queued).sum::<u64>()).await?;
        Ok(Response::new(SubmitProofResponse { job_id, queue_position: ahead.saturating_sub(1).min(u32::MAX as u64) as u32, assigned_gpu: String::new() }))
    }

    async fn await_proof(&self, req: GrpcRequest<AwaitProofRequest>) -> Result<Response<AwaitProofResponse>, GrpcStatus> {
        let r = req.into_inner();
        let job = self.jobs.resolve(&r.job_id).map_err(status)?;
        let timeout = (r.timeout_ms > 0).then(|| Duration::from_millis(r.timeout_ms));
        Ok(Response::new(self.await_job(&r.job_id, job, timeout).await?))
    }

    async fn prove(&self, req: GrpcRequest<ProveRequest>) -> Result<Response<ProveResponse>, GrpcStatus> {
        let (name, job, _claim) = self.submit(req.into_inner().submit, true).await?;
        let result = self.await_job(&name, job, None).await?;
        Ok(Response::new(ProveResponse { result: Some(result) }))
    }

    async fn cancel_proof(&self, req: GrpcRequest<CancelProofRequest>) -> Result<Response<CancelProofResponse>, GrpcStatus> {
        let name = req.into_inner().job_id;
        let job = self.jobs.resolve(&name).map_err(status)?;
        let engine = self.engine.clone();
        let was_running = blocking(move || engine.cancel(job)).await?.map_err(status)?;
        if was_running {
            log::info!("job {name} (engine job {job}) cancelled by CancelProof");
        }
        Ok(Response::new(CancelProofResponse { was_running }))
    }

    async fn get_status(&self, _: GrpcRequest<GetStatusRequest>) -> Result<Response<GetStatusResponse>, GrpcStatus> {
        let engine = self.engine.clone();
        let o = blocking(move || engine.overview()).await?;
        let queues = ProofKind::ALL
            .iter()
            .map(|&k| {
                let c = o.kinds[k as usize];
                QueueStatus { proof_kind: circuits::kind_label(k).into(), pending: clamp32(c.queued), in_progress: clamp32(c.running) }
            })
            .collect();
        let gpus = o
            .devices
            .iter()
            .map(|d| GpuStatus {
                ordinal: d.index as u32,
                name: d.name.clone(),
                vram_total_bytes: d.total_bytes,
                vram_free_bytes: d.free_bytes.unwrap_or(0),
                current_job_id: String::new(),
                current_proof_kind: String::new(),
            })
            .collect();
        let loaded_srs = o
            .srs
            .iter()
            .map(|(s, jobs)| SrsStatus { circuit_id: circuits::name(s.circuit), tier: srs_status::Tier::Hot as i32, size_bytes: s.resident_bytes, ref_count: clamp32(*jobs) })
            .collect();
        let pinned = o.devices.iter().filter_map(|d| d.pinned_host_bytes).max().unwrap_or(0);
        Ok(Response::new(GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: o.kinds.iter().map(|k| k.done).sum(),
            total_proofs_failed: o.kinds.iter().map(|k| k.failed).sum(),
            uptime_seconds: o.uptime.as_secs(),
            pinned_memory_bytes: pinned,
            pinned_memory_limit_bytes: 0,
        }))
    }

    async fn get_metrics(&self, _: GrpcRequest<GetMetricsRequest>) -> Result<Response<GetMetricsResponse>, GrpcStatus> {
        let engine = self.engine.clone();
        Ok(Response::new(GetMetricsResponse { prometheus_text: blocking(move || engine.metrics_text()).await? }))
    }

    async fn preload_srs(&self, req: GrpcRequest<PreloadSrsRequest>) -> Result<Response<PreloadSrsResponse>, GrpcStatus> {
        let id = req.into_inner().circuit_id;
        let circuit = circuits::parse(&id).map_err(GrpcStatus::invalid_argument)?;
        let engine = self.engine.clone();
        let (already_loaded, took) = blocking(move || -> Result<(bool, Duration), Error> {
            if engine.srs_get(circuit)?.is_some() {
                return Ok((true, Duration::ZERO));
            }
            let t = Instant::now();
            engine.srs_load(circuit, None)?;
            Ok((false, t.elapsed()))
        })
        .await?
        .map_err(status)?;
        if !already_loaded {
            log::info!("SRS {id} loaded in {:.1} s (PreloadSRS)", took.as_secs_f64());
        }
        Ok(Response::new(PreloadSrsResponse { already_loaded, load_time_ms: ms(took) }))
    }

    async fn evict_srs(&self, req: GrpcRequest<EvictSrsRequest>) -> Result<Response<EvictSrsResponse>, GrpcStatus> {
        let id = req.into_inner().circuit_id;
        let circuit = circuits::parse(&id).map_err(GrpcStatus::invalid_argument)?;
        let engine = self.engine.clone();
        let freed = blocking(move || -> Result<Option<u64>, Error> {
            let bytes = engine.srs_get(circuit)?.map(|s| s.resident_bytes);
            Ok(if engine.srs_evict(circuit)? { bytes } else { None })
        })
        .await?
        .map_err(status)?;
        Ok(Response::new(EvictSrsResponse { was_loaded: freed.is_some(), freed_bytes: freed.unwrap_or(0) }))
    }
}

fn clamp32(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}
