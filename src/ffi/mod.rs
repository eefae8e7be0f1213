//! The C ABI: the only place with `extern "C"`. No logic lives here: check arguments, call the
//! engine, map the error. Conventions (see include/cuzk.h):
//! - every function returns a `cuzk_status` (free functions return nothing and accept NULL);
//! - on failure, if `err` is not NULL, `*err` receives a new `cuzk_error` the caller frees with
//!   `cuzk_error_free`; on success `*err` is not touched;
//! - out-params are written only on success;
//! - no Rust panic ever crosses the boundary (it becomes `CUZK_STATUS_PANIC`).

#![allow(non_camel_case_types)]

mod boundary;
mod cancel;
mod engine;
mod error;
mod job;
mod kinds;
mod logging;
mod proof;
mod srs;
mod verify;

pub use cancel::*;
pub use engine::*;
pub use error::*;
pub use job::*;
pub use kinds::*;
pub use logging::*;
pub use proof::*;
pub use srs::*;
pub use verify::*;

use std::os::raw::c_char;

/// ABI version of this header; compare with `cuzk_abi_version()` at run time.
pub const CUZK_ABI_VERSION: u32 = 1;
/// Library version, as in Cargo.toml.
pub const CUZK_VERSION_MAJOR: u32 = 0;
pub const CUZK_VERSION_MINOR: u32 = 1;
pub const CUZK_VERSION_PATCH: u32 = 0;

/// The ABI version the library was built with. Callers refuse to run when it differs from
/// the `CUZK_ABI_VERSION` of the header they were compiled against.
#[no_mangle]
pub extern "C" fn cuzk_abi_version() -> u32 {
    crate::ABI_VERSION
}

/// The library version as a static NUL-terminated string ("0.1.0"). Never free it.
#[no_mangle]
pub extern "C" fn cuzk_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// Free a string returned by cuzk (status JSON, timings JSON, metrics). NULL is ignored.
///
/// # Safety
/// `s` must be NULL or a string returned by a cuzk function, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_string_free(s: *mut c_char) {
    boundary::free_cstring(s);
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_constants_follow_cargo() {
        assert_eq!(super::CUZK_ABI_VERSION, crate::ABI_VERSION);
        assert_eq!(super::CUZK_VERSION_MAJOR.to_string(), env!("CARGO_PKG_VERSION_MAJOR"));
        assert_eq!(super::CUZK_VERSION_MINOR.to_string(), env!("CARGO_PKG_VERSION_MINOR"));
        assert_eq!(super::CUZK_VERSION_PATCH.to_string(), env!("CARGO_PKG_VERSION_PATCH"));
    }
}
