//! cuzk-daemon: the cuzk proving engine behind `cuzk.v1.ProvingEngine` over gRPC (the service
//! Curio's `[Cuzk] Address` client calls), on a unix socket and/or a loopback TCP port, with a
//! Prometheus endpoint. One process owns the GPUs and SRSes for every caller on the host, and
//! a crash in it cannot take the node down with it.
//!
//! `cuzk-daemon --config FILE` serves; `cuzk-daemon --config FILE --check-config` validates the
//! file and exits. SIGTERM or SIGINT drain: new proofs are refused with UNAVAILABLE, accepted ones
//! finish (up to `drain_grace_secs`, then they are cancelled), then the daemon exits.

mod circuits;
mod config;
mod deadline;
mod jobs;
mod metrics_http;
mod requests;
mod serve;
mod service;

/// The code generated from proto/cuzk/v1/proving.proto.
pub mod pb {
    tonic::include_proto!("cuzk.v1");
}

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: cuzk-daemon --config FILE [--check-config]
  --config FILE    the daemon's TOML config (listen addresses, drain grace, [engine] keys);
                   see daemon/cuzk-daemon.example.toml
  --check-config   validate FILE and exit (0: valid; 2: the error, naming the key)
  --version        print the version and exit
Logs go to stderr; RUST_LOG sets the filter (default: info).";

/// What the command line asks for.
struct Args {
    config: Option<PathBuf>,
    check: bool,
}

/// Ok(None): --help or --version answered (printed); Err: the problem, for usage().
fn parse_args() -> Result<Option<Args>, String> {
    use lexopt::prelude::*;
    let mut a = Args { config: None, check: false };
    let mut p = lexopt::Parser::from_env();
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Long("config") => a.config = Some(p.value().map_err(|e| e.to_string())?.into()),
            Long("check-config") => a.check = true,
            Long("version") => {
                println!("cuzk-daemon {} (library {})", env!("CARGO_PKG_VERSION"), cuzk::VERSION);
                return Ok(None);
            }
            Short('h') | Long("help") => {
                println!("{USAGE}");
                return Ok(None);
            }
            other => return Err(other.unexpected().to_string()),
        }
    }
    Ok(Some(a))
}

fn main() -> ExitCode {
    let (config, check) = match parse_args() {
        Ok(Some(a)) => (a.config, a.check),
        Ok(None) => return ExitCode::SUCCESS,
        Err(problem) => return usage(&problem),
    };
    let Some(path) = config else { return usage("--config is required") };
    let cfg = match config::DaemonConfig::read(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cuzk-daemon: {e}");
            return ExitCode::from(2);
        }
    };
    if check {
        println!("{}: valid", path.display());
        return ExitCode::SUCCESS;
    }
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).format_timestamp_millis().init();
    match serve::run(cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("cuzk-daemon: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("cuzk-daemon: {problem}\n{USAGE}");
    ExitCode::from(2)
}
