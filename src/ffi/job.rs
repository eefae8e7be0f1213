//! Submit a PoRep C2 job, poll, wait, cancel.

use std::os::raw::c_char;
use std::time::Duration;

use super::boundary::{arg, arg_32, arg_bytes, arg_opt_str, guard, out, write_opt};
use super::engine::cuzk_engine;
use super::error::cuzk_error;
use super::proof::cuzk_proof;
use crate::engine::{JobSnapshot, JobState, SubmitRequest};
use crate::error::{Result, Status};

/// Submit a PoRep C2 job.
///
/// `c1_json`/`c1_len`: the C1 output exactly as filecoin-ffi's `seal_commit_phase2` takes it
/// (serde JSON of `SealCommitPhase1Output`); borrowed for the call only. `prover_id`: 32 bytes.
/// `priority`: higher runs first. `request_id`: NULL, or an idempotency key (1 to 1024 bytes of
/// UTF-8) — submitting the same key with the same C1, sector and prover id again returns the
/// same job id while that job is remembered; the same key with other content is
/// `CUZK_STATUS_INVALID_ARGUMENT`; a job that failed or was cancelled releases its key, so a
/// retry runs anew. The C1 output is checked against its registered proof's shape (and every
/// field element for canonical form) here: bad input is `CUZK_STATUS_INVALID_INPUT`.
/// The SRS of the C1's registered proof must be loaded (`CUZK_STATUS_SRS_NOT_LOADED` else).
/// On success `*out_job_id` is the job id.
///
/// # Safety
/// `engine` live; `c1_json` `c1_len` readable bytes; `prover_id` 32 readable bytes;
/// `request_id` NULL or NUL-terminated; `out_job_id` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_porep_c2(
    engine: *const cuzk_engine,
    c1_json: *const u8,
    c1_len: usize,
    sector_id: u64,
    prover_id: *const u8,
    priority: i32,
    request_id: *const c_char,
    out_job_id: *mut u64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let c1 = arg_bytes(c1_json, c1_len, "c1_json")?;
        let prover_id = arg_32(prover_id, "prover_id")?;
        let request_id = arg_opt_str(request_id, "request_id")?.map(str::to_owned);
        let out_job_id = out(out_job_id, "out_job_id")?;
        let id = e.inner.submit(SubmitRequest { c1_json: c1, sector_id, prover_id, priority, request_id })?;
        out_job_id.write(id);
        Ok(())
    })
}

/// Map a snapshot to the out-params; a failed or cancelled job returns its own error.
unsafe fn report(snap: JobSnapshot, out_state: *mut i32, out_proof: *mut *mut cuzk_proof) -> Result<()> {
    write_opt(out_state, snap.state as i32);
    match snap.state {
        JobState::Done => {
            let result = snap.result.ok_or_else(|| err!(Internal, "done job without a result"))?;
            write_opt(out_proof, cuzk_proof::into_raw(result));
            Ok(())
        }
        JobState::Failed | JobState::Cancelled => {
            Err(snap.error.unwrap_or_else(|| err!(Internal, "job ended without an error")))
        }
        JobState::Queued | JobState::Running => Ok(()),
    }
}

/// Non-blocking: `*out_state` gets the job state (`cuzk_job_state`). When the job is done and
/// `out_proof` is not NULL, `*out_proof` gets a new `cuzk_proof` (free with `cuzk_proof_free`).
/// A failed or cancelled job makes this call return the job's own status and message (and
/// still sets `*out_state`). Unknown ids give `CUZK_STATUS_UNKNOWN_JOB`.
///
/// # Safety
/// `engine` live; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_poll(
    engine: *const cuzk_engine,
    job_id: u64,
    out_state: *mut i32,
    out_proof: *mut *mut cuzk_proof,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        report(e.inner.poll(job_id)?, out_state, out_proof)
    })
}

/// Block until the job ends or `timeout_ms` passes (negative = no limit). Results as for
/// `cuzk_job_poll`; a timeout returns `CUZK_STATUS_TIMEOUT` and leaves the job running.
///
/// # Safety
/// `engine` live; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_wait(
    engine: *const cuzk_engine,
    job_id: u64,
    timeout_ms: i64,
    out_state: *mut i32,
    out_proof: *mut *mut cuzk_proof,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        report(e.inner.wait(job_id, timeout)?, out_state, out_proof)
    })
}

/// Cancel a job. Queued work is dropped at once, running work at its next stage boundary.
/// `*out_cancelled` (if not NULL) is true when this call cancelled it, false when the job had
/// already ended (cancelling twice is not an error).
///
/// # Safety
/// `engine` live; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_cancel(
    engine: *const cuzk_engine,
    job_id: u64,
    out_cancelled: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let c = e.inner.cancel(job_id)?;
        write_opt(out_cancelled, c);
        Ok(())
    })
}

