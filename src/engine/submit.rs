//! Accepting work: a request is checked, parsed and admitted here, synchronously, and queued
//! as a job (or answered with the job its request id already names).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::job::{Job, JobId};
use super::shared::preload;
use super::table::{request_key, Pending};
use super::{Engine, Submission, SubmitRequest};
use crate::error::Result;
use crate::kinds::{JobInputs, ProofRequest};
use crate::srs::Srs;

impl Engine {
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
            let expected = inputs.circuit.params_path(&self.shared.config.params_dir()).map(|p| p.display().to_string()).unwrap_or_default();
            err!(SrsNotLoaded, "no SRS loaded for {} (load it first, e.g. from {expected})", inputs.circuit.name())
        })?;
        let srs_time = t_srs.elapsed();
        if self.shared.config.record_circuits && inputs.circuits.recordable() {
            // Once recorded, the circuit goes where the backend evaluates it, off the provers' path
            // (unless the SRS was evicted meanwhile: the recording holds no reference to it).
            let (shared, srs_up) = (Arc::downgrade(&self.shared), Arc::downgrade(&srs));
            let on_ready = move |r1cs: &Arc<crate::synth::R1cs>| {
                if let (Some(shared), Some(srs)) = (shared.upgrade(), srs_up.upgrade()) {
                    preload(&shared, &srs, Some(r1cs));
                }
            };
            self.shared.circuits.ensure(inputs.circuit, srs.size_hint(), inputs.circuits.clone(), on_ready);
        }
        let priority = req.priority.unwrap_or(inputs.kind.default_priority());
        let job = Pending { key, priority, submitted, srs_time, ticket: Some(ticket) };
        self.enqueue(job, inputs, srs)
    }

    /// Queue a job of any kind whose inputs are already parsed, proved against `srs` (the
    /// engine's own benchmarks and soak runs with synthetic circuits: no request bytes, no
    /// request id; turn `verify` off unless the circuits are real ones of their statement).
    #[doc(hidden)]
    pub fn submit_circuits(&self, inputs: JobInputs, srs: Arc<Srs>, priority: i32) -> Result<JobId> {
        self.shared.accepting()?;
        let job = Pending { key: None, priority, submitted: Instant::now(), srs_time: Duration::ZERO, ticket: None };
        self.enqueue(job, inputs, srs)
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
        log::info!("{}: queued ({}, priority {})", job.label, super::shared::partitions(job.partitions()), job.priority);
        self.shared.queue.push_job(&job);
        Ok(id)
    }
}
