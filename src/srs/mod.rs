//! The SRS (Groth16 parameters) of each registered proof: decoded once, kept resident, shared
//! by every job through an `Arc`, evicted only on request.

pub mod cache;
mod decode;
mod shape;
mod vk;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bellperson::groth16::{prepare_verifying_key, Parameters, PreparedVerifyingKey};
use blstrs::Bls12;

pub use decode::{check_vk, decode_params, ReadAt, Validation};
pub use vk::{read_prepared_vk, read_vk};
pub use shape::expected as expected_shape;
pub use shape::expected_size_hint;
pub use shape::expected_seal as expected_sections;

use crate::cancel::CancelToken;
use crate::error::Result;
use crate::files::{self, Trust};
use crate::kinds::CircuitId;

/// The default parameter directory, as filecoin-proofs finds it: `FIL_PROOFS_PARAMETER_CACHE`,
/// else `/var/tmp/filecoin-proof-parameters` (read, never written).
pub fn default_params_dir() -> PathBuf {
    std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/filecoin-proof-parameters"))
}

/// The `.vk` file beside a params file (`v28-<id>.params` → `v28-<id>.vk`), when there is one,
/// must hold the same verifying key: a params file edited or swapped behind its `.vk` is refused.
fn check_vk_file(params: &Path, vk: &bellperson::groth16::VerifyingKey<Bls12>) -> Result<()> {
    let vk_path = params.with_extension("vk");
    if vk_path == params || matches!(std::fs::symlink_metadata(&vk_path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(());
    }
    let theirs = vk::read_vk(&vk_path)?;
    if theirs != *vk {
        return Err(err!(
            SrsLoad,
            "{}: its verifying key differs from {} beside it (params file replaced or edited?)",
            params.display(),
            vk_path.display()
        ));
    }
    Ok(())
}

/// A decoded, resident SRS.
pub struct Srs {
    pub circuit: CircuitId,
    pub path: PathBuf,
    pub params: Parameters<Bls12>,
    pub pvk: PreparedVerifyingKey<Bls12>,
    pub resident_bytes: u64,
    pub file_bytes: u64,
    pub load_time: Duration,
    pub validation: Validation,
    /// Read from the decoded-SRS cache rather than decoded from the params file.
    pub from_cache: bool,
    /// The background write of the decoded-SRS cache, when this load started one.
    cache_writer: Mutex<Option<JoinHandle<Result<()>>>>,
}

impl Srs {
    /// Wrap parameters already in memory (synthetic circuits, tests).
    pub fn from_parameters(circuit: impl Into<CircuitId>, params: Parameters<Bls12>) -> Srs {
        let resident_bytes = decode::resident_bytes(&params);
        let pvk = prepare_verifying_key(&params.vk);
        Srs {
            circuit: circuit.into(),
            path: PathBuf::from("<memory>"),
            params,
            pvk,
            resident_bytes,
            file_bytes: 0,
            load_time: Duration::ZERO,
            validation: Validation::None,
            from_cache: false,
            cache_writer: Mutex::new(None),
        }
    }

    /// Capacity hints for synthesizing a circuit proved against this SRS.
    pub fn size_hint(&self) -> crate::synth::SizeHint {
        let p = &self.params;
        crate::synth::SizeHint { constraints: p.h.len() + 1, inputs: p.vk.ic.len(), aux: p.l.len() }
    }

    /// Memory one partition proved against this SRS holds from synthesis until its buffers are
    /// freed: a, b, c at the domain size, the witness, and a quarter more for the prover's
    /// working buffers and density bitmaps.
    pub fn partition_bytes(&self) -> u64 {
        let h = self.size_hint();
        let scalars = 3 * h.constraints as u64 + h.aux as u64 + h.inputs as u64;
        scalars * 32 / 4 * 5
    }

    /// Memory one partition holds when a, b, c are evaluated on the device from a recorded
    /// circuit: the witness twice (the challenges' pieces are copied into place), the CUDA
    /// backend's classification of it (a bitmap and the few other scalars), and the densities.
    pub fn witness_bytes(&self) -> u64 {
        let h = self.size_hint();
        let scalars = (h.aux + h.inputs) as u64;
        scalars * 32 * 2 + scalars / 2
    }

    /// Read and decode `path` as the SRS of `circuit`.
    pub fn load(circuit: impl Into<CircuitId>, path: &Path, validation: Validation) -> Result<Srs> {
        Self::load_with(circuit, path, validation, None)
    }

    /// As [`Srs::load`], through the decoded-SRS cache in `cache_dir` (see [`cache`]): a usable
    /// cache is read instead of decoding `path`; otherwise `path` is decoded and the cache
    /// written by a background thread ([`Srs::wait_cache_write`] waits for it).
    pub fn load_with(
        circuit: impl Into<CircuitId>,
        path: &Path,
        validation: Validation,
        cache_dir: Option<&Path>,
    ) -> Result<Srs> {
        Self::load_cancellable(circuit, path, validation, cache_dir, CancelToken::never())
    }

    /// [`Srs::load_with`] that `cancel` stops between chunks of the read (`Cancelled`).
    pub fn load_cancellable(
        circuit: impl Into<CircuitId>,
        path: &Path,
        validation: Validation,
        cache_dir: Option<&Path>,
        cancel: &CancelToken,
    ) -> Result<Srs> {
        let circuit = circuit.into();
        let shape = shape::expected(circuit)?;
        Self::load_shaped(circuit, path, validation, cache_dir, Some(shape), cancel)
    }

    /// [`Srs::load_with`] for a params file whose sections must have `shape` points (when known).
    fn load_shaped(
        circuit: CircuitId,
        path: &Path,
        validation: Validation,
        cache_dir: Option<&Path>,
        shape: Option<[usize; 6]>,
        cancel: &CancelToken,
    ) -> Result<Srs> {
        let start = Instant::now();
        let what = || format!("params file {} for {}", path.display(), circuit.name());
        let file = files::open_regular(path, Trust::Params).map_err(|why| err!(SrsLoad, "{} {why}", what()))?;
        let meta = file.metadata().map_err(|e| err!(SrsLoad, "cannot stat {}: {e}", what()))?;
        let (file_bytes, source) = (meta.len(), cache::Source::of(&meta));
        let sections = decode::layout(&file, file_bytes, path)?;
        if let Some(shape) = shape {
            shape::check(circuit, &sections, shape, path)?;
        }
        // The trust root: always from the params file, fully checked, equal to the `.vk` beside it.
        let vk = decode::read_vk(&file, sections[0], path)?;
        check_vk_file(path, &vk)?;
        let cache_path = cache_dir.map(|d| cache::path_for(d, path));
        if let Some(c) = cache_path.as_deref() {
            let want = cache::Expect { source, counts: sections.map(|s| s.count), vk: &vk, validation };
            if let Some((params, cached_with)) = cache::load(c, &want, cancel) {
                return Ok(Self::assemble(circuit, path, params, file_bytes, start, cached_with, true));
            }
        }
        let params = decode::decode_points(&file, &sections, vk, validation, path, cancel)?;
        drop(file);
        let writer = match cache_path {
            Some(c) => {
                let copy = params.clone(); // the big vectors are shared, not copied
                let spawned = std::thread::Builder::new()
                    .name("cuzk-srs-cache".into())
                    .spawn(move || {
                        let t = Instant::now();
                        let r = cache::store(&c, source, validation, &copy);
                        match &r {
                            Ok(()) => log::info!("wrote SRS cache {} in {:?}", c.display(), t.elapsed()),
                            Err(e) => log::warn!("{}", e.message),
                        }
                        r
                    });
                match spawned {
                    Ok(h) => Some(h),
                    Err(e) => {
                        log::warn!("not writing the SRS cache: cannot start its thread: {e}");
                        None
                    }
                }
            }
            None => None,
        };
        let srs = Self::assemble(circuit, path, params, file_bytes, start, validation, false);
        *srs.cache_writer.lock().unwrap_or_else(|e| e.into_inner()) = writer;
        Ok(srs)
    }

    fn assemble(
        circuit: CircuitId,
        path: &Path,
        params: Parameters<Bls12>,
        file_bytes: u64,
        start: Instant,
        validation: Validation,
        from_cache: bool,
    ) -> Srs {
        let resident_bytes = decode::resident_bytes(&params);
        let pvk = prepare_verifying_key(&params.vk);
        let load_time = start.elapsed();
        log::info!(
            "loaded SRS for {} from {}{} in {:?} ({} MiB resident)",
            circuit.name(),
            path.display(),
            if from_cache { " (decoded-SRS cache)" } else { "" },
            load_time,
            resident_bytes >> 20
        );
        Srs {
            circuit,
            path: path.to_owned(),
            params,
            pvk,
            resident_bytes,
            file_bytes,
            load_time,
            validation,
            from_cache,
            cache_writer: Mutex::new(None),
        }
    }

    /// Wait for the background write of the decoded-SRS cache this load started, if any, and
    /// return its outcome (a failed write only costs the next load a decode).
    pub fn wait_cache_write(&self) -> Result<()> {
        let h = self.cache_writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        match h {
            Some(h) => h.join().map_err(|_| err!(Internal, "the SRS cache writer panicked"))?,
            None => Ok(()),
        }
    }
}

/// Resident SRSes keyed by circuit identifier (V1 and V1_1 of one size share one file).
#[derive(Default)]
pub struct SrsManager {
    loaded: Mutex<HashMap<String, Arc<Srs>>>,
    /// Serializes loads so two callers never decode the same gigabytes twice.
    loading: Mutex<()>,
}

impl SrsManager {
    /// Load the SRS of `proof` from `path` (through the decoded-SRS cache in `cache_dir`, if
    /// given) unless the same file is already resident; the flag says whether this call loaded it.
    pub fn load(
        &self,
        circuit: CircuitId,
        path: &Path,
        validation: Validation,
        cache_dir: Option<&Path>,
        cancel: &CancelToken,
    ) -> Result<(Arc<Srs>, bool)> {
        let id = circuit.identifier()?;
        let _guard = self.wait_turn(circuit, cancel)?;
        if let Some(s) = self.get_by_id(&id) {
            if s.path == path {
                return Ok((s, false));
            }
        }
        let srs = Arc::new(Srs::load_cancellable(circuit, path, validation, cache_dir, cancel)?);
        self.loaded.lock().unwrap_or_else(|e| e.into_inner()).insert(id, srs.clone());
        Ok((srs, true))
    }

    /// The loading lock, waited for in steps so that `cancel` also stops a load still queued
    /// behind another (a cancelled waiter leaves the running load alone).
    fn wait_turn(&self, circuit: CircuitId, cancel: &CancelToken) -> Result<std::sync::MutexGuard<'_, ()>> {
        loop {
            match self.loading.try_lock() {
                Ok(g) => return Ok(g),
                Err(std::sync::TryLockError::Poisoned(e)) => return Ok(e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => {
                    cancel.check(|| format!("the SRS load of {} (waiting for another load)", circuit.name()))?;
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// Make `srs` (built in memory) the resident SRS of its circuit, replacing any loaded one.
    pub fn adopt(&self, srs: Arc<Srs>) -> Result<()> {
        let id = srs.circuit.identifier()?;
        self.loaded.lock().unwrap_or_else(|e| e.into_inner()).insert(id, srs);
        Ok(())
    }

    fn get_by_id(&self, id: &str) -> Option<Arc<Srs>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    /// The resident SRS for `circuit`, if any.
    pub fn get(&self, circuit: CircuitId) -> Result<Option<Arc<Srs>>> {
        Ok(self.get_by_id(&circuit.identifier()?))
    }

    /// Drop the manager's reference; memory is freed when the last in-flight job lets go.
    /// Returns whether anything was resident.
    pub fn evict(&self, circuit: CircuitId) -> Result<Option<Arc<Srs>>> {
        let id = circuit.identifier()?;
        Ok(self.loaded.lock().unwrap_or_else(|e| e.into_inner()).remove(&id))
    }

    pub fn all(&self) -> Vec<Arc<Srs>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect()
    }
}

/// Parameters made of generator points, with `counts` = (ic, h, l, a, b) points (tests).
#[cfg(test)]
pub(crate) fn generator_parameters(counts: [usize; 5]) -> Parameters<Bls12> {
    use group::{prime::PrimeCurveAffine, Group};
    let (g1, g2) = (blstrs::G1Affine::generator(), blstrs::G2Affine::generator());
    // delta differs from gamma: `check_vk` refuses keys with gamma = delta.
    let (d1, d2) = (blstrs::G1Affine::from(blstrs::G1Projective::from(g1).double()), blstrs::G2Affine::from(blstrs::G2Projective::from(g2).double()));
    let [ic, h, l, a, b] = counts;
    Parameters {
        vk: bellperson::groth16::VerifyingKey {
            alpha_g1: g1,
            beta_g1: g1,
            beta_g2: g2,
            gamma_g2: g2,
            delta_g1: d1,
            delta_g2: d2,
            ic: vec![g1; ic],
        },
        h: Arc::new(vec![g1; h]),
        l: Arc::new(vec![g1; l]),
        a: Arc::new(vec![g1; a]),
        b_g1: Arc::new(vec![g1; b]),
        b_g2: Arc::new(vec![g2; b]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiny generator-point params written as `<temp>/cuzk-srs-<tag>-<pid>/tiny.params`:
    /// (the parameters, their directory, the file).
    fn tiny_params_file(tag: &str) -> (Parameters<Bls12>, PathBuf, PathBuf) {
        let p = generator_parameters([2, 3, 2, 2, 2]);
        let dir = std::env::temp_dir().join(format!("cuzk-srs-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let params = dir.join("tiny.params");
        let mut bytes = Vec::new();
        p.write(&mut bytes).unwrap();
        std::fs::write(&params, &bytes).unwrap();
        (p, dir, params)
    }

    /// A cache directory that cannot be written costs the cache, never the load.
    #[test]
    fn unwritable_cache_dir_still_loads() {
        let (p, dir, params) = tiny_params_file("unwritable");
        // A regular file where the cache directory should be: nothing can be created below it.
        let not_a_dir = dir.join("cache-is-a-file");
        std::fs::write(&not_a_dir, b"x").unwrap();

        let proof = crate::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1;
        let srs = Srs::load_shaped(proof.into(), &params, Validation::OnCurve, Some(&not_a_dir), Some([2, 3, 2, 2, 2, 2]), CancelToken::never()).expect("load");
        assert!(!srs.from_cache);
        assert!(srs.params == p);
        let e = srs.wait_cache_write().expect_err("the cache write should fail");
        assert!(e.message.contains("SRS cache"), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A cancelled load stops where it is, reading or queued behind another load, and leaves
    /// nothing resident; a fresh token then gets its turn.
    #[test]
    fn a_cancelled_load_stops_and_keeps_nothing() {
        let (_, dir, params) = tiny_params_file("cancel");
        let proof = crate::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1;
        let shape = Some([2, 3, 2, 2, 2, 2]);

        // Reading: the decode checks the token before each chunk of points.
        let cancelled = CancelToken::new();
        cancelled.cancel();
        let e = Srs::load_shaped(proof.into(), &params, Validation::OnCurve, None, shape, &cancelled).err().expect("cancelled");
        assert_eq!(e.status, crate::error::Status::Cancelled, "{}", e.message);

        // Queued: another load holds the lock; a trigger from another thread ends the wait.
        let m = SrsManager::default();
        let held = m.loading.lock().unwrap();
        let token = Arc::new(CancelToken::new());
        let trigger = {
            let token = token.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                token.cancel();
            })
        };
        let t = Instant::now();
        let e = m.load(proof.into(), &params, Validation::OnCurve, None, &token).err().expect("cancelled while queued");
        assert_eq!(e.status, crate::error::Status::Cancelled, "{}", e.message);
        assert!(e.message.contains("waiting for another load"), "{}", e.message);
        assert!(t.elapsed() < Duration::from_secs(5), "the wait ended {:?} after the trigger", t.elapsed());
        trigger.join().unwrap();
        assert!(m.get(proof.into()).unwrap().is_none(), "nothing of a cancelled load is resident");
        drop(held);

        // With a fresh token the same call gets its turn and reads the file (whose tiny shape
        // the manager then refuses as no real 2 KiB SRS: the point is that it got that far).
        let e = m.load(proof.into(), &params, Validation::OnCurve, None, &CancelToken::new()).err().expect("shape refused");
        assert!(e.message.contains("its circuit needs"), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
