//! The one error type of the engine. Every fallible path returns `Result<T>`; the FFI layer maps
//! [`Status`] to a stable C integer and the message to an owned C string.

use std::fmt;

/// Status codes shared with C. Numbers are part of the ABI: never reuse or renumber one.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ok = 0,
    /// An argument was NULL, empty, out of range or malformed.
    InvalidArgument = 1,
    /// The C1 output could not be parsed or is inconsistent.
    InvalidInput = 2,
    /// No SRS is loaded for the job's registered proof.
    SrsNotLoaded = 3,
    /// A params / vk file is missing, unreadable, truncated or corrupt.
    SrsLoad = 4,
    /// The job id is not known to this engine (never issued, or already forgotten).
    UnknownJob = 5,
    /// The job was cancelled.
    Cancelled = 6,
    /// The wait timed out; the job is still in flight.
    Timeout = 7,
    /// Circuit synthesis failed.
    Synthesis = 8,
    /// The prover backend failed.
    Prover = 9,
    /// A produced proof did not verify.
    Verification = 10,
    /// The engine is shutting down and does not accept work.
    ShuttingDown = 11,
    /// The requested proof type or backend is not supported by this build or machine.
    Unsupported = 12,
    /// A Rust panic was caught at the ABI boundary (a bug in cuzk).
    Panic = 13,
    /// Anything else (I/O, internal invariants).
    Internal = 14,
    /// Some sectors' PoSt vanilla proofs do not verify; the error lists them (`Error::sectors`).
    FaultySectors = 15,
    /// The engine holds as much accepted, unfinished work as its config allows
    /// (`max_queued_jobs`, `max_queued_input_mib`); nothing was accepted. Retry later.
    QueueFull = 16,
}

#[derive(Debug, Clone)]
pub struct Error {
    pub status: Status,
    pub message: String,
    /// The sectors a `FaultySectors` error names (empty otherwise).
    pub sectors: Vec<u64>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Error { status, message: message.into(), sectors: Vec::new() }
    }

    /// Prefix the message with what we were doing, keeping the status.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

/// Build an [`Error`] with `format!` syntax: `err!(InvalidInput, "bad {}", x)`.
#[macro_export]
macro_rules! err {
    ($status:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::Status::$status, format!($($arg)*))
    };
}

/// The message of a caught panic payload.
pub(crate) fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Attach a status to foreign errors (anyhow, io, serde...).
pub trait ResultExt<T> {
    fn status(self, status: Status, what: &str) -> Result<T>;
}

impl<T, E: fmt::Display> ResultExt<T> for std::result::Result<T, E> {
    fn status(self, status: Status, what: &str) -> Result<T> {
        self.map_err(|e| Error::new(status, format!("{what}: {e:#}")))
    }
}
