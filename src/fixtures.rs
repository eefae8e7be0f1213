//! Test-sector fixtures: Groth16 params generated offline the way filecoin-proofs' `paramcache`
//! does (bellperson `generate_random_parameters` on the blank circuit, but from a seeded RNG so
//! the files are reproducible), and a sector sealed to C1 with deterministic data and seeds.
//!
//! Everything lives under one cache directory (default `/var/tmp/cuzk-fixtures`, or
//! `CUZK_FIXTURES_DIR`), outside any repository, and is reused when present: 2 KiB params take
//! about 11 minutes on 2 cores. Writers take a file lock and publish with an atomic rename, so
//! concurrent tests and processes never see half a file.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Cursor, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use blstrs::Bls12;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::types::MerkleTreeTrait;
use filecoin_proofs_api::seal;
use filecoin_proofs_api::{PaddedBytesAmount, UnpaddedBytesAmount};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

use crate::error::{Result, ResultExt, Status};
use crate::registry::{self, RegisteredSealProof};

/// Seed of the default fixtures (params and sector).
pub const DEFAULT_SEED: u64 = 0x00c0_ffee;

pub fn default_root() -> PathBuf {
    std::env::var_os("CUZK_FIXTURES_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/cuzk-fixtures"))
}

/// The params directory inside a fixture root (a filecoin-proofs parameter cache layout).
pub fn params_dir(root: &Path) -> PathBuf {
    root.join("params")
}

/// A sealed test sector.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SectorFixture {
    pub registered_proof: String,
    pub sector_id: u64,
    pub prover_id: [u8; 32],
    pub ticket: [u8; 32],
    pub seed: [u8; 32],
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    /// Path of the C1 output JSON (filecoin-ffi's `seal_commit_phase1` bytes).
    pub c1_path: PathBuf,
}

impl SectorFixture {
    pub fn proof(&self) -> Result<RegisteredSealProof> {
        registry::parse(&self.registered_proof)
    }

    pub fn c1_json(&self) -> Result<Vec<u8>> {
        fs::read(&self.c1_path).map_err(|e| err!(Internal, "reading {}: {e}", self.c1_path.display()))
    }
}

/// A prover id the way filecoin-ffi's `toProverID` derives it from an actor id: the payload
/// of the ID address `f0<id>` (the id as an unsigned LEB128 varint), zero-padded to 32 bytes.
pub fn prover_id_from_actor(actor: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let (mut v, mut i) = (actor, 0);
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            id[i] = byte;
            return id;
        }
        id[i] = byte | 0x80;
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn prover_id_is_the_id_address_payload() {
        assert_eq!(super::prover_id_from_actor(1000)[..3], [0xe8, 0x07, 0]);
        assert_eq!(super::prover_id_from_actor(1430)[..3], [0x96, 0x0b, 0]);
        assert_eq!(super::prover_id_from_actor(5)[..2], [5, 0]);
    }
}

/// Exclusive cross-process lock held while a fixture is generated.
struct Lock(File);

impl Lock {
    fn take(path: &Path) -> Result<Lock> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| err!(Internal, "lock {}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(err!(Internal, "flock {}: {}", path.display(), std::io::Error::last_os_error()));
        }
        Ok(Lock(f))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Write through a temp file and rename into place.
fn write_atomic(path: &Path, f: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<()> {
    let tmp = path.with_extension("partial");
    let mut w = BufWriter::new(File::create(&tmp).map_err(|e| err!(Internal, "create {}: {e}", tmp.display()))?);
    f(&mut w).and_then(|_| w.flush()).map_err(|e| err!(Internal, "write {}: {e}", tmp.display()))?;
    w.get_ref().sync_all().map_err(|e| err!(Internal, "sync {}: {e}", tmp.display()))?;
    fs::rename(&tmp, path).map_err(|e| err!(Internal, "rename to {}: {e}", path.display()))
}

/// Ensure `v28-<id>.params`, `.vk` and `.meta` for `proof` exist under `params_dir(root)`,
/// generating them from `seed` if not. Returns the params file path.
pub fn ensure_params(root: &Path, proof: RegisteredSealProof, seed: u64) -> Result<PathBuf> {
    let dir = params_dir(root);
    fs::create_dir_all(&dir).map_err(|e| err!(Internal, "create {}: {e}", dir.display()))?;
    let params = dir.join(registry::params_file_name(proof)?);
    let vk = dir.join(registry::vk_file_name(proof)?);
    let meta = dir.join(registry::meta_file_name(proof)?);
    let ready = || params.is_file() && vk.is_file() && meta.is_file();
    if ready() {
        return Ok(params);
    }
    let _lock = Lock::take(&dir.join(format!(".{}.lock", registry::circuit_identifier(proof)?)))?;
    if ready() {
        return Ok(params);
    }
    log::warn!("generating Groth16 params for {} into {} (minutes)", registry::name(proof), dir.display());
    let generated = with_tree_shape!(proof, generate_params, proof, seed)?;
    write_atomic(&vk, |w| generated.vk.write(w))?;
    write_atomic(&params, |w| generated.write(w))?;
    let sector_size = u64::from(proof.sector_size());
    write_atomic(&meta, |w| w.write_all(serde_json::json!({ "sector_size": sector_size }).to_string().as_bytes()))?;
    Ok(params)
}

fn generate_params<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    seed: u64,
) -> Result<bellperson::groth16::Parameters<Bls12>> {
    let config = proof.as_v1_config();
    let public_params =
        filecoin_proofs::parameters::public_params::<Tree>(&config).status(Status::Internal, "public params")?;
    let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&public_params);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    bellperson::groth16::generate_random_parameters::<Bls12, _, _>(circuit, &mut rng)
        .status(Status::Internal, "generating parameters")
}

/// Ensure a sector of `proof` sealed from `seed` has its C1 output under `root`.
pub fn ensure_sector(root: &Path, proof: RegisteredSealProof, seed: u64) -> Result<SectorFixture> {
    let dir = root.join("sectors").join(format!("{}-{seed:x}", registry::name(proof)));
    let meta_path = dir.join("sector.json");
    let load = || -> Option<SectorFixture> { serde_json::from_slice(&fs::read(&meta_path).ok()?).ok() };
    if let Some(f) = load() {
        return Ok(f);
    }
    fs::create_dir_all(&dir).map_err(|e| err!(Internal, "create {}: {e}", dir.display()))?;
    let _lock = Lock::take(&dir.join(".lock"))?;
    if let Some(f) = load() {
        return Ok(f);
    }
    let fixture = seal_sector(&dir, proof, seed)?;
    write_atomic(&meta_path, |w| serde_json::to_writer_pretty(w, &fixture).map_err(Into::into))?;
    Ok(fixture)
}

fn seal_sector(dir: &Path, proof: RegisteredSealProof, seed: u64) -> Result<SectorFixture> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5ec7_0000);
    let work = dir.join("work");
    let _ = fs::remove_dir_all(&work);
    let cache = work.join("cache");
    fs::create_dir_all(&cache).map_err(|e| err!(Internal, "create {}: {e}", cache.display()))?;
    let (staged, sealed) = (work.join("staged"), work.join("sealed"));
    let io = |e: std::io::Error| err!(Internal, "sealing fixture in {}: {e}", work.display());

    let sector_id = 1 + (seed % 1000);
    let prover_id = prover_id_from_actor(1000 + (seed % 1000));
    let mut ticket = [0u8; 32];
    let mut chal_seed = [0u8; 32];
    rng.fill_bytes(&mut ticket);
    rng.fill_bytes(&mut chal_seed);
    ticket[31] &= 0x3f;
    chal_seed[31] &= 0x3f;

    let piece_size = UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(proof.sector_size())));
    let mut data = vec![0u8; u64::from(piece_size) as usize];
    rng.fill_bytes(&mut data);
    let staged_file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&staged).map_err(io)?;
    let (piece, _) = seal::add_piece(proof, Cursor::new(&data), staged_file, piece_size, &[])
        .status(Status::Internal, "add_piece")?;
    File::create(&sealed).map_err(io)?;
    let pieces = [piece];
    let pc1 = seal::seal_pre_commit_phase1(proof, &cache, &staged, &sealed, prover_id, sector_id.into(), ticket, &pieces)
        .status(Status::Internal, "seal_pre_commit_phase1")?;
    let pc2 = seal::seal_pre_commit_phase2(pc1, &cache, &sealed).status(Status::Internal, "seal_pre_commit_phase2")?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal::seal_commit_phase1(&cache, &sealed, prover_id, sector_id.into(), ticket, chal_seed, pc2, &pieces)
        .status(Status::Internal, "seal_commit_phase1")?;
    let c1_path = dir.join("c1.json");
    write_atomic(&c1_path, |w| serde_json::to_writer(w, &c1).map_err(Into::into))?;
    let _ = fs::remove_dir_all(&work);
    Ok(SectorFixture {
        registered_proof: registry::name(proof),
        sector_id,
        prover_id,
        ticket,
        seed: chal_seed,
        comm_r,
        comm_d,
        c1_path,
    })
}
