//! What the engine keeps resident: loading, evicting and adopting SRSes and recorded circuits,
//! and putting them on the backend's devices ahead of the first proof.

use std::path::Path;
use std::sync::Arc;

use super::shared::preload;
use super::Engine;
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::kinds::CircuitId;
use crate::srs::Srs;

impl Engine {
    /// Load the SRS of `circuit` from `path`, or from the configured params dir by its v28 name.
    pub fn srs_load(&self, circuit: impl Into<CircuitId>, path: Option<&Path>) -> Result<Arc<Srs>> {
        self.srs_load_cancellable(circuit, path, CancelToken::never())
    }

    /// [`Self::srs_load`] that `cancel` stops (`Cancelled`), also while it waits behind another
    /// load; nothing of a stopped load stays resident.
    pub fn srs_load_cancellable(&self, circuit: impl Into<CircuitId>, path: Option<&Path>, cancel: &CancelToken) -> Result<Arc<Srs>> {
        let circuit = circuit.into();
        circuit.ensure_supported()?;
        let path = match path {
            Some(p) => p.to_owned(),
            None => circuit.params_path(&self.shared.config.params_dir())?,
        };
        if matches!(std::fs::symlink_metadata(&path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            return Err(err!(SrsLoad, "params file for {} not found: expected {}", circuit.name(), path.display()));
        }
        let config = &self.shared.config;
        let (srs, loaded) = self.shared.srs.load(circuit, &path, config.validation(), config.srs_cache_dir.as_deref(), cancel)?;
        if loaded {
            self.preload(&srs);
        }
        Ok(srs)
    }

    /// Put `srs` where the backend proves (VRAM for CUDA) now rather than at its first proof,
    /// with its proof's recorded circuit if that is ready (else the circuit follows when its
    /// recording ends). A failure (VRAM full, say) is logged, not returned: the first proof
    /// uploads then. `srs_load` does this; benchmarks that make their own SRS call it themselves.
    pub fn preload(&self, srs: &Srs) {
        let circuit = self.shared.circuits.get(srs.circuit);
        preload(&self.shared, srs, circuit.as_ref());
    }

    /// Forget the SRS of `circuit`; its memory goes once running jobs finish. Ok(false): none loaded.
    pub fn srs_evict(&self, circuit: impl Into<CircuitId>) -> Result<bool> {
        let circuit = circuit.into();
        match self.shared.srs.evict(circuit)? {
            Some(srs) => {
                let bytes = srs.resident_bytes;
                self.shared.dealloc.free(srs, bytes);
                if let Some(r1cs) = self.shared.circuits.evict(circuit) {
                    let bytes = r1cs.stats().bytes as u64;
                    self.shared.dealloc.free(r1cs, bytes);
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    pub fn srs_get(&self, circuit: impl Into<CircuitId>) -> Result<Option<Arc<Srs>>> {
        self.shared.srs.get(circuit.into())
    }

    /// Use `r1cs` for jobs of its circuit, also those given to [`Self::submit_circuits`]
    /// (benchmarks at real shapes record it while they make their SRS).
    #[doc(hidden)]
    pub fn adopt_circuit(&self, r1cs: Arc<crate::synth::R1cs>) {
        self.shared.circuits.adopt(r1cs);
    }

    /// Use `srs`, made in memory (a generated test SRS at a size whose params this machine does
    /// not have, a benchmark's random one), for jobs of its circuit as if `srs_load` had loaded
    /// it: submissions find it, proofs are verified against its verifying key.
    #[doc(hidden)]
    pub fn adopt_srs(&self, srs: Arc<Srs>) -> Result<()> {
        self.shared.srs.adopt(srs.clone())?;
        // With its recorded circuit, as srs_load preloads: without it the device's plan differed
        // from the proofs' (a 32 GiB WindowPoSt's SRS went up whole, then was evicted and went up
        // again for the first proof).
        self.preload(&srs);
        Ok(())
    }
}
