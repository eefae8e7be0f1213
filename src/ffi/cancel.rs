//! `cuzk_cancel`: a cancellation token for calls that block before any job exists to cancel
//! (an SRS load reads and decodes tens of gigabytes).

use super::boundary::{arg, guard, guard_void, out};
use super::error::cuzk_error;
use crate::cancel::CancelToken;
use crate::error::Status;

/// A cancellation token. Create with `cuzk_cancel_new`, pass to a call that takes one
/// (`cuzk_srs_load_cancellable`), trigger from any thread with `cuzk_cancel_trigger`: the call
/// returns CUZK_STATUS_CANCELLED at its next check (milliseconds). A triggered token stays
/// triggered. Free it with `cuzk_cancel_free` once no call uses it and no trigger runs.
pub struct cuzk_cancel {
    pub(crate) token: CancelToken,
}

/// Create a token (not triggered). On success `*out_cancel` owns it; free it with
/// `cuzk_cancel_free`.
///
/// # Safety
/// `out_cancel` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel_new(out_cancel: *mut *mut cuzk_cancel, err: *mut *mut cuzk_error) -> Status {
    guard(err, || {
        let out_cancel = out(out_cancel, "out_cancel")?;
        out_cancel.write(Box::into_raw(Box::new(cuzk_cancel { token: CancelToken::new() })));
        Ok(())
    })
}

/// Trigger `cancel`: every call given it stops (CUZK_STATUS_CANCELLED); calls given it later
/// return CUZK_STATUS_CANCELLED at once. Thread-safe; triggering twice is harmless.
///
/// # Safety
/// `cancel` NULL or a token not yet freed; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel_trigger(cancel: *const cuzk_cancel, err: *mut *mut cuzk_error) -> Status {
    guard(err, || {
        arg(cancel, "cancel")?.token.cancel();
        Ok(())
    })
}

/// Free a token. NULL is ignored.
///
/// # Safety
/// `cancel` NULL or a token not yet freed, used by no call and no trigger running now.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel_free(cancel: *mut cuzk_cancel) {
    guard_void(|| {
        if !cancel.is_null() {
            drop(Box::from_raw(cancel));
        }
    })
}
