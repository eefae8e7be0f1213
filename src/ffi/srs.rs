//! SRS (Groth16 parameters) load / evict / status.

use std::os::raw::c_char;
use std::path::Path;

use super::boundary::{arg, arg_bytes, arg_opt_str, guard, out, write_opt};
use super::cancel::cuzk_cancel;
use crate::cancel::CancelToken;
use super::engine::cuzk_engine;
use super::error::cuzk_error;
use crate::error::Status;
use crate::kinds::{CircuitId, ProofKind};
use crate::kinds::registry;

/// Load and keep resident the SRS of `registered_proof` (filecoin-ffi's RegisteredSealProof
/// number, e.g. 5 = StackedDrg2KiBV1_1). `path`: the `.params` file, or NULL to use
/// `v28-<circuit id>.params` in the engine's params dir. Loading an already-resident file
/// returns at once. On success, `*out_load_seconds` (if not NULL) gets the decode time.
///
/// # Safety
/// `engine` live; `path` NULL or NUL-terminated; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_load(
    engine: *const cuzk_engine,
    registered_proof: i64,
    path: *const c_char,
    out_load_seconds: *mut f64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let proof = registry::seal_from_number(registered_proof)?;
        let path = arg_opt_str(path, "path")?;
        let srs = e.inner.srs_load(proof, path.map(Path::new))?;
        write_opt(out_load_seconds, srs.load_time.as_secs_f64());
        Ok(())
    })
}

/// Drop the SRS of `registered_proof`. Jobs already running keep their reference; memory is
/// freed (off the calling thread) when the last one finishes. `*out_was_loaded` (if not NULL)
/// tells whether anything was resident.
///
/// # Safety
/// `engine` live; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_evict(
    engine: *const cuzk_engine,
    registered_proof: i64,
    out_was_loaded: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let was = e.inner.srs_evict(registry::seal_from_number(registered_proof)?)?;
        write_opt(out_was_loaded, was);
        Ok(())
    })
}

/// Whether the SRS of `registered_proof` is resident, and how many bytes its decoded points
/// occupy (0 when not loaded). Out-params may be NULL.
///
/// # Safety
/// `engine` live; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_status(
    engine: *const cuzk_engine,
    registered_proof: i64,
    out_loaded: *mut bool,
    out_resident_bytes: *mut u64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let srs = e.inner.srs_get(registry::seal_from_number(registered_proof)?)?;
        write_opt(out_loaded, srs.is_some());
        write_opt(out_resident_bytes, srs.map_or(0, |s| s.resident_bytes));
        Ok(())
    })
}

/// The registered proof number (filecoin-ffi numbering) a C1 output was made for — the SRS
/// to load before submitting it. Reads only the `registered_proof` field.
///
/// # Safety
/// `c1_json` `c1_len` readable bytes; `out_registered_proof` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_c1_registered_proof(
    c1_json: *const u8,
    c1_len: usize,
    out_registered_proof: *mut i64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let c1 = arg_bytes(c1_json, c1_len, "c1_json")?;
        let out_registered_proof = out(out_registered_proof, "out_registered_proof")?;
        out_registered_proof.write(registry::seal_to_number(crate::kinds::porep::c1_registered_proof(c1)?));
        Ok(())
    })
}

/// The name of registered proof number `registered_proof` as rust-fil-proofs writes it
/// ("StackedDrg2KiBV1_1" for 5): a static string, never freed; NULL for unknown numbers.
#[no_mangle]
pub extern "C" fn cuzk_registered_proof_name(registered_proof: i64) -> *const c_char {
    registry::seal_c_name(registered_proof).map_or(std::ptr::null(), |s| s.as_ptr())
}

/// Parse a registered proof given as its name ("StackedDrg32GiBV1_1") or its number ("8").
///
/// # Safety
/// `name` NUL-terminated; `out_registered_proof` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_registered_proof_parse(
    name: *const c_char,
    out_registered_proof: *mut i64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let name = arg_opt_str(name, "name")?.ok_or_else(|| err!(InvalidArgument, "name is NULL"))?;
        let out_registered_proof = out(out_registered_proof, "out_registered_proof")?;
        out_registered_proof.write(registry::seal_to_number(registry::parse_seal(name)?));
        Ok(())
    })
}

/// [`cuzk_srs_load`] for a proof of any kind: `kind` is one of the `CUZK_KIND_*` constants
/// (0 PoRep, 1 WinningPoSt, 2 WindowPoSt, 3 SnapDeals) and `registered_proof` that kind's filecoin-ffi
/// number (RegisteredSealProof, RegisteredPoStProof, RegisteredUpdateProof). Several kinds'
/// SRSes stay resident at once; the status JSON lists each with its kind.
///
/// # Safety
/// `engine` live; `path` NULL or NUL-terminated; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_load_kind(
    engine: *const cuzk_engine,
    kind: i32,
    registered_proof: i64,
    path: *const c_char,
    out_load_seconds: *mut f64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || load_kind(engine, kind, registered_proof, path, CancelToken::never(), out_load_seconds))
}

/// The body of `cuzk_srs_load_kind` and `cuzk_srs_load_cancellable`.
///
/// # Safety
/// As for `cuzk_srs_load_kind`.
unsafe fn load_kind(
    engine: *const cuzk_engine,
    kind: i32,
    registered_proof: i64,
    path: *const c_char,
    cancel: &CancelToken,
    out_load_seconds: *mut f64,
) -> crate::error::Result<()> {
    let e = arg(engine, "engine")?;
    let circuit = CircuitId::from_number(ProofKind::from_number(kind)?, registered_proof)?;
    let path = arg_opt_str(path, "path")?;
    let srs = e.inner.srs_load_cancellable(circuit, path.map(Path::new), cancel)?;
    write_opt(out_load_seconds, srs.load_time.as_secs_f64());
    Ok(())
}

/// [`cuzk_srs_load_kind`] that `cancel` stops: triggered from another thread, the load returns
/// CUZK_STATUS_CANCELLED within milliseconds (also while it waits behind another load of the
/// engine), and nothing of it stays resident. A load that already finished is not undone. For
/// callers with a deadline or a shutdown: a 32 GiB SRS is a 47 GB read.
///
/// # Safety
/// `engine` live; `path` NULL or NUL-terminated; `cancel` a token not yet freed (it must stay
/// alive until this call returns); out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_load_cancellable(
    engine: *const cuzk_engine,
    kind: i32,
    registered_proof: i64,
    path: *const c_char,
    cancel: *const cuzk_cancel,
    out_load_seconds: *mut f64,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let cancel = &arg(cancel, "cancel")?.token;
        load_kind(engine, kind, registered_proof, path, cancel, out_load_seconds)
    })
}

/// [`cuzk_srs_evict`] for a proof of any kind (`kind`, `registered_proof` as for
/// `cuzk_srs_load_kind`).
///
/// # Safety
/// `engine` live; out-params NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_evict_kind(
    engine: *const cuzk_engine,
    kind: i32,
    registered_proof: i64,
    out_was_loaded: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let was = e.inner.srs_evict(CircuitId::from_number(ProofKind::from_number(kind)?, registered_proof)?)?;
        write_opt(out_was_loaded, was);
        Ok(())
    })
}
