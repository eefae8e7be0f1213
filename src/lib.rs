//! cuzk: a Filecoin Groth16 (BLS12-381) proving library with a C ABI — PoRep C2, WinningPoSt,
//! WindowPoSt and SnapDeals.
//!
//! The engine ([`engine::Engine`]) takes a request of any kind ([`kinds`]: filecoin-ffi's C1
//! output, vanilla proofs), synthesizes each partition circuit ([`synth`]: in full, or its
//! witness alone through the circuit recorded once), proves it with a backend ([`prover`])
//! against a resident SRS ([`srs`]), verifies it against the kind's statement and returns the
//! proof bytes with per-stage timings. [`ffi`] is the C ABI, a thin layer over the engine.

#[macro_use]
pub mod error;
pub mod progress;
// Before the modules that use its `with_tree_shape!`.
#[macro_use]
pub mod kinds;
pub mod cancel;
pub mod engine;
pub mod ffi;
mod busy;
mod files;
mod logging;
/// Test and benchmark fixtures (feature `tools`; not in the shipped library).
#[cfg(feature = "tools")]
pub mod fixtures;
mod pages;
pub mod prover;
pub mod srs;
pub mod synth;

/// The log filter used when `RUST_LOG` is not set (the library's logger and the binaries').
pub use logging::DEFAULT_FILTER as DEFAULT_LOG_FILTER;

/// The crate version (from Cargo.toml).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Bumped on every incompatible change of the C ABI (function signatures, enum numbers,
/// ownership rules). Callers compare it against `CUZK_ABI_VERSION` from the header they built with.
pub const ABI_VERSION: u32 = 1;
