//! `cuzk_log_configure`: where the library's log records go.

use std::os::raw::{c_char, c_int, c_void};

use super::boundary::{arg_opt_str, guard};
use super::error::cuzk_error;
use crate::error::Status;

/// A log sink: `level` 1 = error, 2 = warn, 3 = info, 4 = debug, 5 = trace; `target` (the Rust
/// module) and `message` are NUL-terminated and valid only during the call; `user` is what was
/// passed to `cuzk_log_configure`. NULL where a sink is optional.
pub type cuzk_log_fn =
    Option<unsafe extern "C" fn(level: c_int, target: *const c_char, message: *const c_char, user: *mut c_void)>;

/// Configure cuzk's log output. By default (no call) records go to stderr, filtered by the
/// `RUST_LOG` environment variable read once at the first engine creation (default `warn,cuzk=info`), as
/// filecoin-ffi does.
///
/// `filter`: NULL keeps the current filter, else `RUST_LOG` syntax (`"info"`,
/// `"cuzk=debug,warn"`); malformed → CUZK_STATUS_INVALID_ARGUMENT and nothing changes.
/// `callback`: NULL sends records to stderr; otherwise every record passing the filter is handed
/// to it, from whichever cuzk thread logs (it must be thread-safe), with `user`. No cuzk lock is
/// held while it runs: it may call any cuzk function, this one included. Once this call returns
/// (called from outside a callback), the callback it replaced is no longer running on any
/// thread and is never called again. Returns CUZK_STATUS_UNSUPPORTED when the process installed
/// another Rust `log` logger before cuzk (cuzk's records go to that logger).
///
/// # Safety
/// `filter` NULL or NUL-terminated; `callback` NULL or a function of that signature that stays
/// callable (with `user`) until a later call replacing it has returned; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_log_configure(
    filter: *const c_char,
    callback: cuzk_log_fn,
    user: *mut c_void,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let filter = arg_opt_str(filter, "filter")?;
        crate::logging::configure(filter, callback.map(|cb| (cb, user)))
    })
}
