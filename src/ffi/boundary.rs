//! The panic and NULL boundary shared by every exported function.

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::error::cuzk_error;
use crate::error::{Error, Result, Status};

/// Run `f`; map its error (or a panic) to a status, storing the message in `*err`.
pub fn guard(err: *mut *mut cuzk_error, f: impl FnOnce() -> Result<()>) -> Status {
    let e = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return Status::Ok,
        Ok(Err(e)) => e,
        Err(p) => Error::new(Status::Panic, format!("internal panic (a bug in cuzk): {}", crate::error::panic_message(p))),
    };
    let status = e.status;
    if !err.is_null() {
        // SAFETY: caller promises `err` is NULL or writable.
        unsafe { *err = cuzk_error::into_raw(e) };
    }
    status
}

/// Run a free/void function without letting a panic out.
pub fn guard_void(f: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// Borrow `*p`, or an InvalidArgument error naming the parameter.
///
/// # Safety
/// `p` must be NULL or point to a live `T`.
pub unsafe fn arg<'a, T>(p: *const T, name: &str) -> Result<&'a T> {
    p.as_ref().ok_or_else(|| err!(InvalidArgument, "{name} is NULL"))
}

/// Borrow `len` bytes at `p`; NULL and zero length are errors.
///
/// # Safety
/// `p` must be NULL or point to `len` readable bytes.
pub unsafe fn arg_bytes<'a>(p: *const u8, len: usize, name: &str) -> Result<&'a [u8]> {
    if p.is_null() {
        return Err(err!(InvalidArgument, "{name} is NULL"));
    }
    if len == 0 {
        return Err(err!(InvalidArgument, "{name} is empty (length 0)"));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// Read a fixed 32-byte array.
///
/// # Safety
/// `p` must be NULL or point to 32 readable bytes.
pub unsafe fn arg_32(p: *const u8, name: &str) -> Result<[u8; 32]> {
    if p.is_null() {
        return Err(err!(InvalidArgument, "{name} is NULL (expected 32 bytes)"));
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(std::slice::from_raw_parts(p, 32));
    Ok(out)
}

/// An optional UTF-8 C string: NULL → None.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub unsafe fn arg_opt_str<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    CStr::from_ptr(p).to_str().map(Some).map_err(|_| err!(InvalidArgument, "{name} is not valid UTF-8"))
}

/// Write `v` to an out-param that must not be NULL.
///
/// # Safety
/// `p` must be NULL or writable.
pub unsafe fn out<T>(p: *mut T, name: &str) -> Result<OutParam<T>> {
    if p.is_null() {
        return Err(err!(InvalidArgument, "{name} is NULL"));
    }
    Ok(OutParam(p))
}

/// A checked, non-NULL out-param; written only once the call has succeeded.
pub struct OutParam<T>(*mut T);

impl<T> OutParam<T> {
    pub fn write(self, v: T) {
        // SAFETY: checked non-NULL at construction; the caller owns the storage.
        unsafe { self.0.write(v) }
    }
}

/// Write to an optional out-param.
///
/// # Safety
/// `p` must be NULL or writable.
pub unsafe fn write_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        p.write(v);
    }
}

pub fn into_cstring(s: String) -> *mut c_char {
    // Interior NULs cannot occur in our JSON / messages; replace defensively.
    CString::new(s.replace('\0', " ")).expect("no NUL").into_raw()
}

/// # Safety
/// `s` must be NULL or from [`into_cstring`], not yet freed.
pub unsafe fn free_cstring(s: *mut c_char) {
    guard_void(|| {
        if !s.is_null() {
            drop(CString::from_raw(s));
        }
    })
}
