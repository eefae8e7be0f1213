//! A host's log callback may call back into cuzk — here, create an engine, which logs — while
//! another thread reconfigures logging. This deadlocked (the callback ran under the logger's
//! lock, the reconfiguration waited for it, and the callback's own records waited behind the
//! reconfiguration); no lock is held across the host's callback now. And once a reconfiguration
//! returns, the callback it replaced is not running anywhere and is never called again.
//! (Its own test binary: the logger is process-wide.)

mod common;

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use cuzk::error::Status;
use cuzk::ffi::*;

static FIRST: AtomicBool = AtomicBool::new(true);
static REENTERED: AtomicUsize = AtomicUsize::new(0);
static RECONFIGURE: std::sync::Mutex<Option<mpsc::Sender<()>>> = std::sync::Mutex::new(None);
/// Calls of the replaced callback in progress / after its replacement returned.
static OLD_RUNNING: AtomicUsize = AtomicUsize::new(0);
static OLD_AFTER_REPLACED: AtomicUsize = AtomicUsize::new(0);
static REPLACED: AtomicBool = AtomicBool::new(false);

fn new_engine() {
    let cfg = CString::new(r#"{"backend": "cpu"}"#).unwrap();
    let mut e = ptr::null_mut();
    let (st, m) = common::call(|err| unsafe { cuzk_engine_new(cfg.as_ptr(), &mut e, err) });
    assert_eq!(st, Status::Ok, "{m}");
    unsafe { cuzk_engine_free(e) };
}

unsafe extern "C" fn reentrant(_level: c_int, _target: *const c_char, message: *const c_char, _user: *mut c_void) {
    if !CStr::from_ptr(message).to_string_lossy().contains("cuzk engine started") {
        return;
    }
    if FIRST.swap(false, Ordering::SeqCst) {
        // Let the other thread start reconfiguring, give it time to block, then log from here.
        if let Some(tx) = RECONFIGURE.lock().unwrap().take() {
            tx.send(()).unwrap();
        }
        std::thread::sleep(Duration::from_millis(300));
        new_engine();
    } else {
        REENTERED.fetch_add(1, Ordering::SeqCst);
    }
}

unsafe extern "C" fn old(_level: c_int, _target: *const c_char, _message: *const c_char, _user: *mut c_void) {
    OLD_RUNNING.fetch_add(1, Ordering::SeqCst);
    if REPLACED.load(Ordering::SeqCst) {
        OLD_AFTER_REPLACED.fetch_add(1, Ordering::SeqCst);
    }
    std::thread::sleep(Duration::from_millis(20));
    OLD_RUNNING.fetch_sub(1, Ordering::SeqCst);
}

fn configure(cb: cuzk_log_fn) -> (Status, String) {
    let f = CString::new("info").unwrap();
    common::call(|err| unsafe { cuzk_log_configure(f.as_ptr(), cb, ptr::null_mut(), err) })
}

#[test]
fn a_callback_may_call_into_cuzk_while_logging_is_reconfigured() {
    let (tx, rx) = mpsc::channel();
    *RECONFIGURE.lock().unwrap() = Some(tx);
    assert_eq!(configure(Some(reentrant)).0, Status::Ok);
    let reconfigure = std::thread::spawn(move || {
        rx.recv().unwrap();
        configure(Some(reentrant))
    });
    common::within(Duration::from_secs(30), "an engine whose log callback creates an engine (deadlock?)", new_engine);
    let (st, m) = common::within(Duration::from_secs(30), "cuzk_log_configure (deadlock?)", move || reconfigure.join().unwrap());
    assert_eq!(st, Status::Ok, "{m}");
    assert!(REENTERED.load(Ordering::SeqCst) >= 1, "the callback's own engine logged through it");

    // Replacing a callback that is running on other threads returns only once it has returned
    // everywhere; it is not called afterwards.
    assert_eq!(configure(Some(old)).0, Status::Ok);
    let loggers: Vec<_> = (0..4).map(|_| std::thread::spawn(|| (0..20).for_each(|_| new_engine()))).collect();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(configure(None).0, Status::Ok);
    REPLACED.store(true, Ordering::SeqCst);
    assert_eq!(OLD_RUNNING.load(Ordering::SeqCst), 0, "the replaced callback still runs after cuzk_log_configure returned");
    for l in loggers {
        l.join().unwrap();
    }
    assert_eq!(OLD_AFTER_REPLACED.load(Ordering::SeqCst), 0, "the replaced callback was called after its replacement");
    let f = CString::new("warn").unwrap();
    assert_eq!(common::call(|err| unsafe { cuzk_log_configure(f.as_ptr(), None, ptr::null_mut(), err) }).0, Status::Ok);
}
