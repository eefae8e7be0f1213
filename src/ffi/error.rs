//! `cuzk_error`: an owned error object (status + message) returned through an out-param.
//! Never a thread-local "last error": a goroutine can change OS threads between two cgo calls.

use std::ffi::CString;
use std::os::raw::c_char;

use super::boundary::guard_void;
use crate::error::{Error, Status};

/// An error: a status code and a NUL-terminated message. Owned by the caller once returned;
/// free it with `cuzk_error_free`.
pub struct cuzk_error {
    status: Status,
    message: CString,
    sectors: Vec<u64>,
}

impl cuzk_error {
    pub(crate) fn into_raw(e: Error) -> *mut cuzk_error {
        let message = CString::new(e.message.replace('\0', " ")).unwrap_or_default();
        Box::into_raw(Box::new(cuzk_error { status: e.status, message, sectors: e.sectors }))
    }
}

/// The status code of `err` (`CUZK_STATUS_INVALID_ARGUMENT` when `err` is NULL).
///
/// # Safety
/// `err` must be NULL or a live `cuzk_error`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_error_code(err: *const cuzk_error) -> Status {
    match err.as_ref() {
        Some(e) => e.status,
        None => Status::InvalidArgument,
    }
}

/// The message of `err`, borrowed: valid until `cuzk_error_free(err)`. Never NULL (an empty
/// string when `err` is NULL).
///
/// # Safety
/// `err` must be NULL or a live `cuzk_error`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_error_message(err: *const cuzk_error) -> *const c_char {
    match err.as_ref() {
        Some(e) => e.message.as_ptr(),
        None => c"".as_ptr(),
    }
}

/// The sectors a `CUZK_STATUS_FAULTY_SECTORS` error names (ascending, as given), borrowed:
/// `*out_sectors` is valid until `cuzk_error_free(err)` (NULL with `*out_count` 0 when the
/// error names none).
///
/// # Safety
/// `err` must be NULL or a live `cuzk_error`; out-params writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_error_sectors(err: *const cuzk_error, out_sectors: *mut *const u64, out_count: *mut usize) -> Status {
    if out_sectors.is_null() || out_count.is_null() {
        return Status::InvalidArgument;
    }
    match err.as_ref() {
        Some(e) if !e.sectors.is_empty() => {
            out_sectors.write(e.sectors.as_ptr());
            out_count.write(e.sectors.len());
        }
        Some(_) => {
            out_sectors.write(std::ptr::null());
            out_count.write(0);
        }
        None => return Status::InvalidArgument,
    }
    Status::Ok
}

/// Free an error. NULL is ignored.
///
/// # Safety
/// `err` must be NULL or a `cuzk_error` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_error_free(err: *mut cuzk_error) {
    guard_void(|| {
        if !err.is_null() {
            drop(Box::from_raw(err));
        }
    })
}

/// A static, human-readable name of a status code ("invalid argument"); "unknown status" for
/// numbers this library does not define. Never free it.
#[no_mangle]
pub extern "C" fn cuzk_status_name(status: i32) -> *const c_char {
    let s: &'static std::ffi::CStr = match status {
        0 => c"ok",
        1 => c"invalid argument",
        2 => c"invalid input",
        3 => c"SRS not loaded",
        4 => c"SRS load failed",
        5 => c"unknown job",
        6 => c"cancelled",
        7 => c"timeout",
        8 => c"synthesis failed",
        9 => c"prover failed",
        10 => c"verification failed",
        11 => c"shutting down",
        12 => c"unsupported",
        13 => c"internal panic",
        14 => c"internal error",
        15 => c"faulty sectors",
        16 => c"queue full",
        _ => c"unknown status",
    };
    s.as_ptr()
}
