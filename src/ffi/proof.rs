//! `cuzk_proof`: a finished job's proof bytes and timings.

use std::os::raw::c_char;
use std::sync::Arc;

use super::boundary::{arg, guard, guard_void, into_cstring, out};
use super::error::cuzk_error;
use crate::engine::JobResult;
use crate::error::Status;

/// The result of a finished job. Owned by the caller; free with `cuzk_proof_free`.
pub struct cuzk_proof {
    result: Arc<JobResult>,
}

impl cuzk_proof {
    pub(crate) fn into_raw(result: Arc<JobResult>) -> *mut cuzk_proof {
        Box::into_raw(Box::new(cuzk_proof { result }))
    }
}

/// Stages whose wall time `cuzk_proof_timing` reports. Numbers are part of the ABI.
#[repr(i32)]
#[derive(Debug, Clone, Copy)]
pub enum Stage {
    /// Submit → first synthesis starts.
    Queue = 0,
    /// SRS lookup at submit.
    Srs = 1,
    /// Circuit synthesis, summed over partitions.
    Synthesis = 2,
    /// Synthesized partitions waiting for the prover, summed.
    ProveQueue = 3,
    /// Groth16 proving, summed over partitions.
    Prove = 4,
    /// Verification of the final proof.
    Verify = 5,
    /// Submit → result ready, measured on its own.
    Total = 6,
}

/// Bytes of one partition's Groth16 proof (compressed A, B, C): a job's proof is
/// `CUZK_PROOF_BYTES` × its partitions.
pub const CUZK_PROOF_BYTES: usize = 192;
const _: () = assert!(CUZK_PROOF_BYTES == crate::kinds::PROOF_BYTES);

/// The proof bytes (`CUZK_PROOF_BYTES` per partition), borrowed: valid until `cuzk_proof_free(proof)`.
///
/// # Safety
/// `proof` a live proof; `out_ptr`, `out_len` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_proof_bytes(
    proof: *const cuzk_proof,
    out_ptr: *mut *const u8,
    out_len: *mut usize,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let p = arg(proof, "proof")?;
        let (out_ptr, out_len) = (out(out_ptr, "out_ptr")?, out(out_len, "out_len")?);
        out_ptr.write(p.result.proof.as_ptr());
        out_len.write(p.result.proof.len());
        Ok(())
    })
}

/// Seconds spent in `stage` (a `cuzk_stage` number).
///
/// # Safety
/// `proof` a live proof; `out_seconds` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_proof_timing(
    proof: *const cuzk_proof,
    stage: i32,
    out_seconds: *mut f64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let p = arg(proof, "proof")?;
        let out_seconds = out(out_seconds, "out_seconds")?;
        let t = &p.result.timings;
        const QUEUE: i32 = Stage::Queue as i32;
        const SRS: i32 = Stage::Srs as i32;
        const SYNTHESIS: i32 = Stage::Synthesis as i32;
        const PROVE_QUEUE: i32 = Stage::ProveQueue as i32;
        const PROVE: i32 = Stage::Prove as i32;
        const VERIFY: i32 = Stage::Verify as i32;
        const TOTAL: i32 = Stage::Total as i32;
        let d = match stage {
            QUEUE => t.queue,
            SRS => t.srs,
            SYNTHESIS => t.synthesis,
            PROVE_QUEUE => t.prove_queue,
            PROVE => t.prove,
            VERIFY => t.verify,
            TOTAL => t.total,
            _ => return Err(err!(InvalidArgument, "unknown stage {stage} (expected 0..=6)")),
        };
        out_seconds.write(d.as_secs_f64());
        Ok(())
    })
}

/// Every timer of the job (stages and backend phases), the backend, partition count and
/// whether the proof was verified, as JSON. `*out_json` is a new string; free it with
/// `cuzk_string_free`.
///
/// # Safety
/// `proof` a live proof; `out_json` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_proof_timings_json(
    proof: *const cuzk_proof,
    out_json: *mut *mut c_char,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let p = arg(proof, "proof")?;
        let out_json = out(out_json, "out_json")?;
        out_json.write(into_cstring(crate::engine::result_json(&p.result).to_string()));
        Ok(())
    })
}

/// Free a proof. NULL is ignored.
///
/// # Safety
/// `proof` NULL or a proof not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_proof_free(proof: *mut cuzk_proof) {
    guard_void(|| {
        if !proof.is_null() {
            drop(Box::from_raw(proof));
        }
    })
}
