//! The library's log records reach a C host: through `cuzk_log_configure`'s callback, filtered
//! by a RUST_LOG-style spec; a malformed spec is refused and changes nothing.

mod common;

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::sync::Mutex;

use cuzk::error::Status;
use cuzk::ffi::*;

static RECORDS: Mutex<Vec<(c_int, String, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn sink(level: c_int, target: *const c_char, message: *const c_char, user: *mut c_void) {
    assert_eq!(user as usize, 0x5eed, "user pointer passed back");
    let s = |p: *const c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
    RECORDS.lock().unwrap().push((level, s(target), s(message)));
}

fn configure(filter: Option<&str>, cb: cuzk_log_fn) -> (Status, String) {
    let f = filter.map(|f| CString::new(f).unwrap());
    common::call(|err| unsafe { cuzk_log_configure(f.as_ref().map_or(ptr::null(), |f| f.as_ptr()), cb, 0x5eed as *mut c_void, err) })
}

fn engine_started() -> usize {
    let cfg = CString::new(r#"{"backend": "cpu"}"#).unwrap();
    let mut e = ptr::null_mut();
    let (st, m) = common::call(|err| unsafe { cuzk_engine_new(cfg.as_ptr(), &mut e, err) });
    assert_eq!(st, Status::Ok, "{m}");
    unsafe { cuzk_engine_free(e) };
    RECORDS.lock().unwrap().iter().filter(|(_, _, m)| m.contains("cuzk engine started")).count()
}

#[test]
fn log_records_reach_the_callback_through_the_filter() {
    assert_eq!(configure(Some("info"), Some(sink)).0, Status::Ok);
    assert_eq!(engine_started(), 1, "the engine's info record reaches the callback: {:?}", RECORDS.lock().unwrap());
    {
        let r = RECORDS.lock().unwrap();
        let rec = r.iter().find(|(_, _, m)| m.contains("cuzk engine started")).unwrap();
        assert_eq!(rec.0, 3, "info is level 3");
        assert!(rec.1.starts_with("cuzk"), "target is the module: {}", rec.1);
    }

    // A malformed filter is refused and the old one stays.
    let (st, m) = configure(Some("cuzk=loud"), Some(sink));
    assert_eq!(st, Status::InvalidArgument, "{m}");
    assert!(m.contains("log filter"), "{m}");
    assert_eq!(engine_started(), 2);

    // Filtered out at "error"; back to stderr with NULL.
    assert_eq!(configure(Some("error"), Some(sink)).0, Status::Ok);
    assert_eq!(engine_started(), 2, "info records are filtered out at \"error\"");
    assert_eq!(configure(None, None).0, Status::Ok);
    assert_eq!(configure(Some("warn"), None).0, Status::Ok);
}
