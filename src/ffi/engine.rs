//! `cuzk_engine`: create, free, status.

use std::os::raw::c_char;

use super::boundary::{arg, arg_opt_str, guard, guard_void, into_cstring, out};
use super::error::cuzk_error;
use crate::engine::{Engine, EngineConfig};
use crate::error::Status;

/// A proving engine: worker threads, resident SRSes and the job table. Create with
/// `cuzk_engine_new`, free with `cuzk_engine_free`. Thread-safe: every function taking a
/// `const cuzk_engine *` may be called concurrently from any thread.
pub struct cuzk_engine {
    pub(crate) inner: Engine,
}

/// Create an engine.
///
/// `config_json`: NULL or "" for defaults, else a JSON object with any of
/// `backend` ("auto" | "cpu" | "cuda"), `devices` (CUDA ordinals, e.g. [0, 2]; default all),
/// `synthesis_workers` (0 = auto), `prove_queue_depth`,
/// `memory_budget_mib` (0 = auto: 90 % of available memory at start less resident SRSes),
/// `verify` (bool, default true), `params_dir`, `srs_validation` ("none" | "on_curve" | "full"),
/// `srs_cache_dir` (decoded-SRS cache directory; off when absent), `job_ttl_secs`,
/// `drain_on_free` (bool), `record_circuits` (bool, default true). Unknown keys are an error.
/// The first call installs cuzk's logger (stderr, `RUST_LOG`; see `cuzk_log_configure`).
///
/// On success `*out` owns the new engine; free it with `cuzk_engine_free`.
///
/// # Safety
/// `config_json` NULL or NUL-terminated; `out` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_new(
    config_json: *const c_char,
    out_engine: *mut *mut cuzk_engine,
    err: *mut *mut cuzk_error,
) -> Status {
    crate::logging::init();
    guard(err, || {
        let cfg = arg_opt_str(config_json, "config_json")?.unwrap_or("");
        let out_engine = out(out_engine, "out_engine")?;
        let engine = Engine::new(EngineConfig::from_json(cfg)?)?;
        out_engine.write(Box::into_raw(Box::new(cuzk_engine { inner: engine })));
        Ok(())
    })
}

/// Stop and free an engine: in-flight jobs are cancelled (or finished, with
/// `"drain_on_free": true`), threads are joined, then memory is released. NULL is ignored.
/// Proofs and errors obtained from the engine stay valid. No other call may use `engine`
/// during or after this one.
///
/// # Safety
/// `engine` must be NULL or an engine not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_free(engine: *mut cuzk_engine) {
    guard_void(|| {
        if !engine.is_null() {
            drop(Box::from_raw(engine));
        }
    })
}

/// Engine status as JSON (backend, job counts, resident SRSes, deallocator). On success
/// `*out_json` is a new string the caller frees with `cuzk_string_free`.
///
/// # Safety
/// `engine` a live engine; `out_json` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_status_json(
    engine: *const cuzk_engine,
    out_json: *mut *mut c_char,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let out_json = out(out_json, "out_json")?;
        out_json.write(into_cstring(e.inner.status_json()));
        Ok(())
    })
}

/// Metrics in the Prometheus text exposition format. On success `*out_text` is a new string
/// the caller frees with `cuzk_string_free`.
///
/// # Safety
/// `engine` a live engine; `out_text` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_metrics(
    engine: *const cuzk_engine,
    out_text: *mut *mut c_char,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let out_text = out(out_text, "out_text")?;
        out_text.write(into_cstring(e.inner.metrics_text()));
        Ok(())
    })
}
