//! Submit and verify the proof kinds beside PoRep C2 — WinningPoSt, WindowPoSt, SnapDeals —
//! with inputs exactly as filecoin-ffi takes them; poll, wait, cancel and the proof accessors
//! are the same as for C2 jobs.

use std::os::raw::c_char;

use super::boundary::{arg, arg_32, arg_bytes, arg_opt_str, guard, out};
use super::engine::cuzk_engine;
use super::error::cuzk_error;
use crate::engine::Submission;
use crate::error::{Result, Status};
use crate::kinds::post::{window_statement, winning_statement, PublicReplica};
use crate::kinds::update::{update_statement, UpdateCommitments};
use crate::kinds::{registry, PoStRequest, ProofKind, ProofRequest, UpdateRequest};

/// Proof kinds, as `cuzk_srs_load_kind` takes them.
pub const CUZK_KIND_POREP: i32 = 0;
pub const CUZK_KIND_WINNING_POST: i32 = 1;
pub const CUZK_KIND_WINDOW_POST: i32 = 2;
pub const CUZK_KIND_SNAP_DEALS: i32 = 3;

/// `priority` value meaning "the kind's default": WinningPoSt 2000, WindowPoSt 1000, PoRep and
/// SnapDeals 0 (higher runs first).
pub const CUZK_PRIORITY_DEFAULT: i32 = i32::MIN;

/// Borrowed bytes: `len` bytes at `ptr`.
#[repr(C)]
pub struct cuzk_bytes {
    pub ptr: *const u8,
    pub len: usize,
}

/// A sector as PoSt verifiers know it: its number and sealed commitment (comm_r).
#[repr(C)]
pub struct cuzk_sector {
    pub sector_id: u64,
    pub comm_r: [u8; 32],
}

/// The `n` byte strings of `list`; each must be non-empty.
///
/// # Safety
/// `list` NULL or `n` readable `cuzk_bytes`, each naming readable bytes.
unsafe fn byte_list<'a>(list: *const cuzk_bytes, n: usize, name: &str) -> Result<Vec<&'a [u8]>> {
    if list.is_null() || n == 0 {
        return Err(err!(InvalidArgument, "{name} is NULL or empty"));
    }
    std::slice::from_raw_parts(list, n)
        .iter()
        .enumerate()
        .map(|(i, b)| arg_bytes(b.ptr, b.len, &format!("{name}[{i}]")))
        .collect()
}

unsafe fn sectors(list: *const cuzk_sector, n: usize) -> Result<Vec<PublicReplica>> {
    if list.is_null() || n == 0 {
        return Err(err!(InvalidArgument, "sectors is NULL or empty"));
    }
    Ok(std::slice::from_raw_parts(list, n).iter().map(|s| PublicReplica { sector_id: s.sector_id, comm_r: s.comm_r }).collect())
}

fn priority(p: i32) -> Option<i32> {
    (p != CUZK_PRIORITY_DEFAULT).then_some(p)
}

unsafe fn submit(
    engine: *const cuzk_engine,
    request: impl FnOnce() -> Result<ProofRequest<'static>>,
    prio: i32,
    request_id: *const c_char,
    out_job_id: *mut u64,
) -> Result<()> {
    let e = arg(engine, "engine")?;
    let request_id = arg_opt_str(request_id, "request_id")?.map(str::to_owned);
    let out_job_id = out(out_job_id, "out_job_id")?;
    let id = e.inner.submit_proof(Submission { request: request()?, priority: priority(prio), request_id })?;
    out_job_id.write(id);
    Ok(())
}

unsafe fn post_request(
    kind: ProofKind,
    registered_post_proof: i64,
    randomness: *const u8,
    prover_id: *const u8,
    vanilla_proofs: *const cuzk_bytes,
    vanilla_count: usize,
) -> Result<PoStRequest<'static>> {
    let proof = crate::kinds::CircuitId::post_from(kind, registered_post_proof)?;
    Ok(PoStRequest {
        proof,
        randomness: arg_32(randomness, "randomness")?,
        prover_id: arg_32(prover_id, "prover_id")?,
        vanilla_proofs: byte_list(vanilla_proofs, vanilla_count, "vanilla_proofs")?,
    })
}

/// Submit a WinningPoSt job, as filecoin-ffi's `generate_winning_post_with_vanilla`.
///
/// `registered_post_proof`: filecoin-ffi's RegisteredPoStProof number of a Winning proof (0..4).
/// `randomness`, `prover_id`: 32 bytes each. `vanilla_proofs`: `vanilla_count` byte strings,
/// each a sector's `FallbackPoStSectorProof` as `generate_single_vanilla_proof` returns it
/// (borrowed for the call only). `priority`: higher runs first, `CUZK_PRIORITY_DEFAULT` for the
/// kind's default (above every other kind's). `request_id`: as for `cuzk_submit_porep_c2`.
/// Vanilla proofs that do not verify are `CUZK_STATUS_FAULTY_SECTORS` (the error lists the
/// sector: `cuzk_error_sectors`); the SRS of the proof must be loaded (`cuzk_srs_load_kind`).
/// The job's proof is one 192-byte Groth16 proof.
///
/// # Safety
/// `engine` live; 32-byte arguments readable; `vanilla_proofs` `vanilla_count` readable
/// `cuzk_bytes`; `request_id` NULL or NUL-terminated; `out_job_id` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_winning_post(
    engine: *const cuzk_engine,
    registered_post_proof: i64,
    randomness: *const u8,
    prover_id: *const u8,
    vanilla_proofs: *const cuzk_bytes,
    vanilla_count: usize,
    priority: i32,
    request_id: *const c_char,
    out_job_id: *mut u64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let req = || {
            let r = post_request(ProofKind::WinningPoSt, registered_post_proof, randomness, prover_id, vanilla_proofs, vanilla_count)?;
            Ok(ProofRequest::WinningPoSt(r))
        };
        submit(engine, req, priority, request_id, out_job_id)
    })
}

/// Submit a WindowPoSt job: `partition_index < 0` proves every partition, as filecoin-ffi's
/// `generate_window_post_with_vanilla` (the job's proof is the partition proofs concatenated,
/// 192 bytes each); `partition_index >= 0` proves that partition alone, as
/// `generate_single_window_post_with_vanilla` (give only its sectors' vanilla proofs; the job's
/// proof is that partition's 192 bytes, merged by concatenation in partition order).
/// `registered_post_proof`: a Window proof (5..9 V1, 10..14 V1_2). Vanilla proofs must be in
/// ascending sector number order (upstream's verifier reads them so); those that do not
/// verify are `CUZK_STATUS_FAULTY_SECTORS`, listing every faulty sector (`cuzk_error_sectors`).
/// Other arguments as for `cuzk_submit_winning_post`.
///
/// # Safety
/// As for `cuzk_submit_winning_post`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_window_post(
    engine: *const cuzk_engine,
    registered_post_proof: i64,
    randomness: *const u8,
    prover_id: *const u8,
    vanilla_proofs: *const cuzk_bytes,
    vanilla_count: usize,
    partition_index: i64,
    priority: i32,
    request_id: *const c_char,
    out_job_id: *mut u64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let req = || {
            let r = post_request(ProofKind::WindowPoSt, registered_post_proof, randomness, prover_id, vanilla_proofs, vanilla_count)?;
            let partition = usize::try_from(partition_index).ok();
            Ok(ProofRequest::WindowPoSt { post: r, partition })
        };
        submit(engine, req, priority, request_id, out_job_id)
    })
}

/// Submit a SnapDeals job, as filecoin-ffi's `generate_empty_sector_update_proof_with_vanilla`.
/// `registered_update_proof`: filecoin-ffi's RegisteredUpdateProof number (0..4).
/// `vanilla_proofs`: one `PartitionProof` per update partition, as `generate_partition_proofs`
/// returns them; they must verify against `comm_r_old`, `comm_r_new`, `comm_d_new` (32 bytes
/// each), else `CUZK_STATUS_INVALID_INPUT`. The job's proof is the partition proofs concatenated.
///
/// # Safety
/// As for `cuzk_submit_winning_post`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_snap_deals(
    engine: *const cuzk_engine,
    registered_update_proof: i64,
    vanilla_proofs: *const cuzk_bytes,
    vanilla_count: usize,
    comm_r_old: *const u8,
    comm_r_new: *const u8,
    comm_d_new: *const u8,
    priority: i32,
    request_id: *const c_char,
    out_job_id: *mut u64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let req = || {
            Ok(ProofRequest::SnapDeals(UpdateRequest {
                proof: registry::update_from_number(registered_update_proof)?,
                vanilla_proofs: byte_list(vanilla_proofs, vanilla_count, "vanilla_proofs")?,
                comm_r_old: arg_32(comm_r_old, "comm_r_old")?,
                comm_r_new: arg_32(comm_r_new, "comm_r_new")?,
                comm_d_new: arg_32(comm_d_new, "comm_d_new")?,
            }))
        };
        submit(engine, req, priority, request_id, out_job_id)
    })
}

/// Verify a WinningPoSt proof like filecoin-proofs' `verify_winning_post`: `sectors` are the
/// challenged sectors (one). `*out_valid`: true valid, false well-formed but invalid;
/// malformed input is an error. Uses the resident SRS, else the `.vk` in the params dir.
///
/// # Safety
/// `engine` live; 32-byte arguments readable; `sectors` `sector_count` readable; `proof`
/// `proof_len` readable bytes; `out_valid` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_winning_post(
    engine: *const cuzk_engine,
    registered_post_proof: i64,
    randomness: *const u8,
    prover_id: *const u8,
    sectors: *const cuzk_sector,
    sector_count: usize,
    proof: *const u8,
    proof_len: usize,
    out_valid: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        verify_post(engine, ProofKind::WinningPoSt, registered_post_proof, randomness, prover_id, sectors, sector_count, proof, proof_len, out_valid)
    })
}

/// Verify a WindowPoSt proof (every partition, concatenated) like filecoin-proofs'
/// `verify_window_post`: `sectors` are the proven sectors (any order). Otherwise as
/// `cuzk_verify_winning_post`.
///
/// # Safety
/// As for `cuzk_verify_winning_post`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_window_post(
    engine: *const cuzk_engine,
    registered_post_proof: i64,
    randomness: *const u8,
    prover_id: *const u8,
    sectors: *const cuzk_sector,
    sector_count: usize,
    proof: *const u8,
    proof_len: usize,
    out_valid: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        verify_post(engine, ProofKind::WindowPoSt, registered_post_proof, randomness, prover_id, sectors, sector_count, proof, proof_len, out_valid)
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn verify_post(
    engine: *const cuzk_engine,
    kind: ProofKind,
    registered_post_proof: i64,
    randomness: *const u8,
    prover_id: *const u8,
    list: *const cuzk_sector,
    n: usize,
    proof: *const u8,
    proof_len: usize,
    out_valid: *mut bool,
) -> Result<()> {
    let e = arg(engine, "engine")?;
    let p = crate::kinds::CircuitId::post_from(kind, registered_post_proof)?;
    let (randomness, prover_id) = (arg_32(randomness, "randomness")?, arg_32(prover_id, "prover_id")?);
    let replicas = sectors(list, n)?;
    let proof = arg_bytes(proof, proof_len, "proof")?;
    let out_valid = out(out_valid, "out_valid")?;
    let st = match kind {
        ProofKind::WinningPoSt => winning_statement(p, &randomness, &prover_id, &replicas)?,
        _ => window_statement(p, &randomness, &prover_id, &replicas)?,
    };
    out_valid.write(e.inner.verify(p, &*st, proof)?);
    Ok(())
}

/// Verify a SnapDeals proof like filecoin-proofs' `verify_empty_sector_update_proof`.
/// Results as for `cuzk_verify_winning_post`.
///
/// # Safety
/// `engine` live; 32-byte arguments readable; `proof` `proof_len` readable bytes;
/// `out_valid` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_snap_deals(
    engine: *const cuzk_engine,
    registered_update_proof: i64,
    comm_r_old: *const u8,
    comm_r_new: *const u8,
    comm_d_new: *const u8,
    proof: *const u8,
    proof_len: usize,
    out_valid: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let p = registry::update_from_number(registered_update_proof)?;
        let c = UpdateCommitments {
            comm_r_old: arg_32(comm_r_old, "comm_r_old")?,
            comm_r_new: arg_32(comm_r_new, "comm_r_new")?,
            comm_d_new: arg_32(comm_d_new, "comm_d_new")?,
        };
        let proof = arg_bytes(proof, proof_len, "proof")?;
        let out_valid = out(out_valid, "out_valid")?;
        let st = update_statement(p, &c)?;
        out_valid.write(e.inner.verify(p, &*st, proof)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_constants_are_the_kinds() {
        for (c, k) in [
            (CUZK_KIND_POREP, ProofKind::PoRep),
            (CUZK_KIND_WINNING_POST, ProofKind::WinningPoSt),
            (CUZK_KIND_WINDOW_POST, ProofKind::WindowPoSt),
            (CUZK_KIND_SNAP_DEALS, ProofKind::SnapDeals),
        ] {
            assert_eq!(c, k as i32);
            assert_eq!(ProofKind::from_number(c).unwrap(), k);
        }
        assert!(ProofKind::from_number(4).is_err());
    }
}
