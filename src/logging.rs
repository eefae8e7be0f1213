//! Where the library's `log` records go. A Rust host that installed its own logger first keeps
//! it (cuzk's records go there). C and Go hosts get cuzk's logger, installed once by the first
//! engine or `cuzk_log_configure` call: stderr, filtered by `RUST_LOG` (default [`DEFAULT_FILTER`]), as
//! filecoin-ffi does; `cuzk_log_configure` changes the filter or sends records to a callback.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Condvar, Mutex, Once, OnceLock, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use env_filter::Filter;
use log::{Level, Log, Metadata, Record};

use crate::error::Result;

/// A host's log sink: level (1 = error … 5 = trace), target and message, both NUL-terminated
/// and valid only during the call; `user` as registered. Called from any cuzk thread.
pub type LogCallback = unsafe extern "C" fn(level: c_int, target: *const c_char, message: *const c_char, user: *mut c_void);

struct Sink {
    filter: Filter,
    /// The callback and its user pointer (as an address: the host promises it is thread-safe).
    callback: Option<(LogCallback, usize)>,
    /// Bumped whenever the callback is replaced: deliveries are counted per generation.
    generation: u64,
}

struct Logger {
    sink: RwLock<Sink>,
    /// Calls into a host callback in progress, per callback generation. No lock is held during
    /// such a call (the callback may call back into cuzk, which logs); `configure` waits here
    /// instead until the callback it replaced has returned on every other thread, so the host
    /// may free what `user` points to once `cuzk_log_configure` returns.
    delivering: Mutex<HashMap<u64, usize>>,
    delivered: Condvar,
}

thread_local! {
    /// Whether this thread is inside a host callback (a `configure` from there does not wait:
    /// two callbacks reconfiguring at once would wait for each other).
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Without `RUST_LOG`: cuzk's own info records (backend choice, SRS loads and their progress,
/// VRAM uploads, circuit recordings) and every crate's warnings and errors — what an operator
/// wants to see without setting anything; the proving crates' chatty info lines stay out.
pub const DEFAULT_FILTER: &str = "warn,cuzk=info";

static LOGGER: OnceLock<Logger> = OnceLock::new();
static INSTALL: Once = Once::new();
static OURS: OnceLock<bool> = OnceLock::new();

fn parse(spec: &str) -> Result<Filter> {
    let mut b = env_filter::Builder::new();
    b.try_parse(spec).map_err(|e| err!(InvalidArgument, "log filter {spec:?} is not RUST_LOG syntax: {e}"))?;
    Ok(b.build())
}

fn logger() -> &'static Logger {
    LOGGER.get_or_init(|| {
        let spec = std::env::var("RUST_LOG").ok().filter(|s| !s.trim().is_empty());
        let filter = spec.as_deref().and_then(|s| parse(s).ok()).unwrap_or_else(|| parse(DEFAULT_FILTER).expect("a valid filter"));
        Logger {
            sink: RwLock::new(Sink { filter, callback: None, generation: 0 }),
            delivering: Mutex::new(HashMap::new()),
            delivered: Condvar::new(),
        }
    })
}

/// Install cuzk's logger unless the process has one already. Idempotent and cheap.
pub fn init() {
    INSTALL.call_once(|| {
        let l = logger();
        let ours = log::set_logger(l).is_ok();
        if ours {
            log::set_max_level(l.sink.read().unwrap_or_else(|e| e.into_inner()).filter.filter());
        }
        let _ = OURS.set(ours);
    });
}

/// Change the filter (`None`: keep it) and the destination (`None`: stderr). Unsupported when
/// another logger was installed before cuzk's: cuzk's records then go to it. Returns once the
/// replaced callback is no longer running on any other thread (at once when called from inside
/// a callback).
pub fn configure(filter: Option<&str>, callback: Option<(LogCallback, *mut c_void)>) -> Result<()> {
    let filter = filter.map(parse).transpose()?;
    init();
    if OURS.get() != Some(&true) {
        return Err(err!(Unsupported, "the process installed its own Rust logger before cuzk; cuzk's log records go to it"));
    }
    let l = logger();
    let replaced = {
        let mut s = l.sink.write().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = filter {
            log::set_max_level(f.filter());
            s.filter = f;
        }
        s.callback = callback.map(|(cb, user)| (cb, user as usize));
        s.generation += 1;
        s.generation - 1
    };
    if !IN_CALLBACK.with(Cell::get) {
        let mut d = l.delivering.lock().unwrap_or_else(|e| e.into_inner());
        while d.get(&replaced).is_some_and(|&n| n > 0) {
            d = l.delivered.wait(d).unwrap_or_else(|e| e.into_inner());
        }
    }
    Ok(())
}

fn level_number(l: Level) -> c_int {
    match l {
        Level::Error => 1,
        Level::Warn => 2,
        Level::Info => 3,
        Level::Debug => 4,
        Level::Trace => 5,
    }
}

impl Log for Logger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        self.sink.read().unwrap_or_else(|e| e.into_inner()).filter.enabled(m)
    }

    fn log(&self, r: &Record<'_>) {
        // Decide and copy the destination under the lock, then let go of it: the host's callback
        // may call back into cuzk (and log) while another thread waits to reconfigure, and a
        // reader that blocks a waiting writer while it waits for itself never returns.
        let callback = {
            let s = self.sink.read().unwrap_or_else(|e| e.into_inner());
            if !s.filter.matches(r) {
                return;
            }
            // Counted before the sink lock goes, so a `configure` that replaces it sees this call.
            if s.callback.is_some() {
                *self.delivering.lock().unwrap_or_else(|e| e.into_inner()).entry(s.generation).or_default() += 1;
            }
            s.callback.map(|c| (c, s.generation))
        };
        match callback {
            Some(((cb, user), generation)) => {
                let text = |t: String| CString::new(t.replace('\0', " ")).unwrap_or_default();
                let (target, message) = (text(r.target().to_owned()), text(r.args().to_string()));
                let outer = IN_CALLBACK.with(|c| c.replace(true));
                // SAFETY: the host registered `cb` for exactly this signature; the strings live
                // for the call.
                unsafe { cb(level_number(r.level()), target.as_ptr(), message.as_ptr(), user as *mut c_void) };
                IN_CALLBACK.with(|c| c.set(outer));
                let mut d = self.delivering.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(n) = d.get_mut(&generation) {
                    *n -= 1;
                    if *n == 0 {
                        d.remove(&generation);
                    }
                }
                drop(d);
                self.delivered.notify_all();
            }
            None => {
                let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "[{}.{:03} {:<5} {}] {}",
                    t.as_secs(),
                    t.subsec_millis(),
                    r.level(),
                    r.target(),
                    r.args()
                );
            }
        }
    }

    fn flush(&self) {
        let _ = std::io::stderr().flush();
    }
}

#[cfg(test)]
mod tests {
    use log::{Level, MetadataBuilder};

    #[test]
    fn default_filter_shows_cuzk_info_and_only_warnings_of_others() {
        let f = super::parse(super::DEFAULT_FILTER).unwrap();
        let m = |target: &str, level: Level| f.enabled(&MetadataBuilder::new().target(target).level(level).build());
        assert!(m("cuzk::srs", Level::Info) && !m("cuzk::srs", Level::Debug));
        assert!(!m("bellperson::groth16", Level::Info) && m("bellperson::groth16", Level::Warn));
    }
}
