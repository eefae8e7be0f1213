//! The daemon's TOML config: where it listens, how it drains, which SRSes it loads at start,
//! and an `[engine]` table holding every key of the library's engine config (the same names
//! and bounds as the C ABI's JSON config). Unknown keys are refused with their name.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use cuzk::engine::EngineConfig;

/// Curio allows gRPC messages up to 256 MiB (a 64 GiB C1 is ~80 MB, base64 in an envelope more).
pub const DEFAULT_MAX_MESSAGE_MIB: usize = 256;
/// Largest accepted `max_message_mib`: beyond it one request could hold gigabytes of RAM.
const MAX_MAX_MESSAGE_MIB: usize = 4096;
/// Longest drain: a 64 GiB C2 on a slow GPU takes minutes, not hours.
const MAX_DRAIN_GRACE_SECS: u64 = 24 * 3600;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaemonConfig {
    /// Unix socket path to serve gRPC on (Curio: `[Cuzk] Address = "unix:///run/cuzk/cuzk.sock"`).
    pub listen_unix: Option<PathBuf>,
    /// The socket file's permission bits, octal: 0660 lets the daemon's group (the node's user)
    /// connect and nobody else.
    pub unix_socket_mode: String,
    /// TCP address to serve gRPC on, e.g. "127.0.0.1:9820". The service has no authentication:
    /// a non-loopback address needs `allow_remote = true`.
    pub listen_tcp: Option<SocketAddr>,
    /// Serve on a non-loopback TCP address (only behind a firewall or a private network).
    pub allow_remote: bool,
    /// HTTP address of the Prometheus endpoint (`GET /metrics`), e.g. "127.0.0.1:9821".
    pub metrics_listen: Option<SocketAddr>,
    /// Seconds SIGTERM / SIGINT wait for accepted proofs to finish before cancelling the rest.
    pub drain_grace_secs: u64,
    /// Largest gRPC message accepted or sent, MiB.
    pub max_message_mib: usize,
    /// SRSes loaded at start, by Curio's circuit ids ("porep-32g", "snap-32g", "wpost-32g",
    /// "winning-32g", … see `circuits::parse`) or the library's registered-proof names.
    pub preload: Vec<String>,
    /// The engine's config (`[engine]`): every key of `EngineConfig`.
    pub engine: EngineConfig,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        DaemonConfig {
            listen_unix: None,
            unix_socket_mode: "0660".into(),
            listen_tcp: None,
            allow_remote: false,
            metrics_listen: None,
            drain_grace_secs: 600,
            max_message_mib: DEFAULT_MAX_MESSAGE_MIB,
            preload: Vec::new(),
            engine: EngineConfig { load_srs_on_demand: true, ..EngineConfig::default() },
        }
    }
}

impl DaemonConfig {
    pub fn read(path: &Path) -> Result<DaemonConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("reading config {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("config {}: {e}", path.display()))
    }

    /// Parse and validate: the error names the key at fault.
    pub fn parse(text: &str) -> Result<DaemonConfig, String> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
        // The daemon's clients never load SRSes: a job loads its own unless the config says not to.
        if let Some(toml::Value::Table(engine)) = table.get_mut("engine") {
            engine.entry("load_srs_on_demand").or_insert(toml::Value::Boolean(true));
        }
        let c: DaemonConfig = table.try_into().map_err(|e: toml::de::Error| e.to_string().trim_end().to_owned())?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<(), String> {
        self.engine.validate().map_err(|e| format!("[engine] {}", e.message))?;
        if self.listen_unix.is_none() && self.listen_tcp.is_none() {
            return Err("nothing to listen on: set listen_unix (a socket path) and/or listen_tcp (host:port)".into());
        }
        if let Some(p) = &self.listen_unix {
            if p.as_os_str().is_empty() || !p.is_absolute() {
                return Err(format!("listen_unix must be an absolute socket path, got {:?}", p.display().to_string()));
            }
        }
        self.socket_mode()?;
        if let Some(a) = self.listen_tcp {
            if !a.ip().is_loopback() && !self.allow_remote {
                return Err(format!(
                    "listen_tcp {a} is not a loopback address and the service has no authentication: set allow_remote = true to serve it anyway"
                ));
            }
        }
        if let Some(a) = self.metrics_listen {
            if !a.ip().is_loopback() && !self.allow_remote {
                return Err(format!("metrics_listen {a} is not a loopback address: set allow_remote = true to serve it anyway"));
            }
        }
        if self.drain_grace_secs > MAX_DRAIN_GRACE_SECS {
            return Err(format!("drain_grace_secs must be at most {MAX_DRAIN_GRACE_SECS}, got {}", self.drain_grace_secs));
        }
        if !(1..=MAX_MAX_MESSAGE_MIB).contains(&self.max_message_mib) {
            return Err(format!("max_message_mib must be between 1 and {MAX_MAX_MESSAGE_MIB}, got {}", self.max_message_mib));
        }
        for id in &self.preload {
            crate::circuits::parse(id).map_err(|e| format!("preload: {e}"))?;
        }
        Ok(())
    }

    /// `unix_socket_mode` as permission bits.
    pub fn socket_mode(&self) -> Result<u32, String> {
        let s = self.unix_socket_mode.trim_start_matches("0o");
        match u32::from_str_radix(s, 8) {
            Ok(m) if m <= 0o777 => Ok(m),
            _ => Err(format!("unix_socket_mode must be octal permission bits like \"0660\", got {:?}", self.unix_socket_mode)),
        }
    }

    pub fn max_message_bytes(&self) -> usize {
        self.max_message_mib << 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_need_an_address() {
        assert!(DaemonConfig::parse("").unwrap_err().contains("listen_unix"));
        let c = DaemonConfig::parse("listen_unix = \"/run/cuzk.sock\"").unwrap();
        assert_eq!(c.socket_mode().unwrap(), 0o660);
        assert_eq!(c.max_message_bytes(), 256 << 20);
    }

    #[test]
    fn errors_name_the_key() {
        let e = DaemonConfig::parse("listen_unix = \"/s\"\nlisten_unixx = \"/s\"").unwrap_err();
        assert!(e.contains("listen_unixx"), "{e}");
        let e = DaemonConfig::parse("listen_unix = \"/s\"\n[engine]\nsynthesis_workerz = 2").unwrap_err();
        assert!(e.contains("synthesis_workerz"), "{e}");
        let e = DaemonConfig::parse("listen_unix = \"/s\"\n[engine]\ngpu_lanes = 9").unwrap_err();
        assert!(e.contains("gpu_lanes"), "{e}");
        let e = DaemonConfig::parse("listen_tcp = \"0.0.0.0:9820\"").unwrap_err();
        assert!(e.contains("allow_remote"), "{e}");
        let e = DaemonConfig::parse("listen_unix = \"/s\"\nunix_socket_mode = \"rw\"").unwrap_err();
        assert!(e.contains("unix_socket_mode"), "{e}");
        let e = DaemonConfig::parse("listen_unix = \"/s\"\npreload = [\"porep-33g\"]").unwrap_err();
        assert!(e.contains("porep-33g"), "{e}");
        let e = DaemonConfig::parse("listen_unix = \"relative.sock\"").unwrap_err();
        assert!(e.contains("absolute"), "{e}");
    }

    #[test]
    fn the_example_config_is_valid() {
        let c = DaemonConfig::parse(include_str!("../cuzk-daemon.example.toml")).unwrap();
        assert_eq!(c.preload, ["porep-32g"]);
        assert_eq!(c.socket_mode().unwrap(), 0o660);
    }

    #[test]
    fn engine_keys_pass_through() {
        let c = DaemonConfig::parse("listen_tcp = \"127.0.0.1:9820\"\n[engine]\nbackend = \"cpu\"\nsynthesis_workers = 3").unwrap();
        assert_eq!(c.engine.backend, "cpu");
        assert_eq!(c.engine.synthesis_workers, 3);
        assert!(c.engine.load_srs_on_demand);
        assert!(DaemonConfig::parse("listen_unix = \"/s\"").unwrap().engine.load_srs_on_demand);
        let c = DaemonConfig::parse("listen_unix = \"/s\"\n[engine]\nload_srs_on_demand = false").unwrap();
        assert!(!c.engine.load_srs_on_demand);
    }
}
