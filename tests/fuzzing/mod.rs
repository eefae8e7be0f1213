//! The fuzz targets, shared by the cargo-fuzz crate in `fuzz/` (libFuzzer, nightly, long runs)
//! and by `tests/fuzz.rs` (a bounded mutational run on stable Rust in `make test`). Each takes
//! arbitrary bytes and must return — an error is fine, a panic, hang or huge allocation is a bug.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bellperson::groth16::Parameters;
use blstrs::Bls12;
use cuzk::srs::{cache, Validation};

/// A tiny circuit's parameters (random, seeded), the seed of the decoder and cache targets.
pub fn tiny_params() -> &'static Parameters<Bls12> {
    static P: OnceLock<Parameters<Bls12>> = OnceLock::new();
    P.get_or_init(|| {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
        bellperson::groth16::generate_random_parameters::<Bls12, _, _>(Tiny, &mut rng).expect("tiny params")
    })
}

pub fn tiny_params_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    tiny_params().write(&mut b).expect("write");
    b
}

#[derive(Clone)]
struct Tiny;
impl bellperson::Circuit<blstrs::Scalar> for Tiny {
    fn synthesize<CS: bellperson::ConstraintSystem<blstrs::Scalar>>(self, cs: &mut CS) -> Result<(), bellperson::SynthesisError> {
        let mut x = cs.alloc(|| "x", || Ok(blstrs::Scalar::from(3u64)))?;
        let y = cs.alloc_input(|| "y", || Ok(blstrs::Scalar::from(9u64)))?;
        for _ in 0..5 {
            let z = cs.alloc(|| "z", || Ok(blstrs::Scalar::from(9u64)))?;
            cs.enforce(|| "x*x=z", |lc| lc + x, |lc| lc + x, |lc| lc + z);
            x = z;
        }
        cs.enforce(|| "x*1=y", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + y);
        Ok(())
    }
}

/// Params decoder: any bytes as a params image, every validation level.
pub fn params(data: &[u8]) {
    for v in [Validation::None, Validation::OnCurve] {
        let _ = cuzk::srs::decode_params(data, data.len() as u64, v, Path::new("fuzz.params"));
    }
}

/// A private scratch directory for the cache target's files, and the params identity its
/// caches are checked against (fixed, so a corpus written by one process fits every other).
fn cache_dir() -> &'static (PathBuf, cache::Source) {
    static D: OnceLock<(PathBuf, cache::Source)> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("cuzk-fuzz-cache-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        (d, cache::Source::fixed_for_fuzzing())
    })
}

/// A valid cache file of the tiny params (the cache target's seed).
pub fn tiny_cache_bytes() -> Vec<u8> {
    let (d, src) = cache_dir();
    let path = d.join("seed.cuzk-srs");
    cache::store(&path, *src, Validation::OnCurve, tiny_params()).expect("store");
    std::fs::read(&path).unwrap()
}

/// Decoded-SRS cache reader: any bytes as the cache file of the tiny params.
pub fn cache(data: &[u8]) {
    let (d, src) = cache_dir();
    let p = tiny_params();
    let path = d.join(format!("t{:?}.cuzk-srs", std::thread::current().id()).replace(['(', ')'], ""));
    std::fs::write(&path, data).unwrap();
    let counts = [p.vk.ic.len(), p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()];
    let want = cache::Expect { source: *src, counts, vk: &p.vk, validation: Validation::OnCurve };
    if let Some((got, _)) = cache::load(&path, &want, cuzk::cancel::CancelToken::never()) {
        assert!(got == *p, "a cache that passed every check decoded to other parameters");
    }
}

/// Engine config parser: any bytes as the JSON config.
pub fn config(data: &[u8]) {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(c) = cuzk::engine::EngineConfig::from_json(s) {
            c.validate().expect("a parsed config validates");
        }
    }
}

/// The prover and sector the C1 target's input is checked against (the 2 KiB fixture's, when
/// it exists; any fixed pair otherwise — the parser must hold up either way).
pub fn c1_identity() -> &'static ([u8; 32], u64) {
    static ID: OnceLock<([u8; 32], u64)> = OnceLock::new();
    ID.get_or_init(|| {
        let root = cuzk::fixtures::default_root();
        match cuzk::fixtures::ensure_sector(&root, cuzk::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1, cuzk::fixtures::DEFAULT_SEED) {
            Ok(s) => (s.prover_id, s.sector_id),
            Err(_) => ([1; 32], 1),
        }
    })
}

/// C1 parser and validator: any bytes as filecoin-ffi's C1 output.
pub fn c1(data: &[u8]) {
    let (prover, sector) = c1_identity();
    let _ = cuzk::kinds::porep::parse_c1(data, prover, *sector);
    let _ = cuzk::kinds::porep::c1_registered_proof(data);
}

/// The 2 KiB kind fixtures' real vanilla proofs (sealed sectors, no params: parsing needs none).
pub fn kinds() -> &'static cuzk::fixtures::KindFixtures {
    static K: OnceLock<cuzk::fixtures::KindFixtures> = OnceLock::new();
    K.get_or_init(|| cuzk::fixtures::ensure_kind_fixtures(&cuzk::fixtures::default_root(), cuzk::fixtures::DEFAULT_SEED).expect("kind fixtures"))
}

/// A parsed request's partition 0 synthesized (a mutation rarely leaves a proof that checks out;
/// when it does, the circuit built from it must not panic either).
fn synthesize_first(request: cuzk::kinds::ProofRequest<'_>) {
    if let Ok(inputs) = request.parse() {
        let _ = inputs.circuits.synthesize(0, cuzk::synth::SizeHint::default());
    }
}

/// 32 bytes of `data` (from `at`, zero-padded): a stranger's commitment for the verify calls.
fn bytes32(data: &[u8], at: usize) -> [u8; 32] {
    let mut b = [0u8; 32];
    let tail = data.get(at..).unwrap_or_default();
    let n = tail.len().min(32);
    b[..n].copy_from_slice(&tail[..n]);
    b
}

/// WinningPoSt: any bytes as the vanilla proof of the challenged sector (submit's parse and
/// checks), and as the sector's comm_r given to the verifier.
pub fn vanilla_winning(data: &[u8]) {
    let k = kinds();
    let mut r = k.winning.request();
    r.vanilla_proofs = vec![data];
    synthesize_first(cuzk::kinds::ProofRequest::WinningPoSt(r));
    let replica = cuzk::kinds::post::PublicReplica { sector_id: k.winning.sectors[0].0, comm_r: bytes32(data, 8) };
    let _ = cuzk::kinds::post::winning_statement(k.winning.proof, &k.winning.randomness, &k.winning.prover_id, &[replica]);
}

/// WindowPoSt: any bytes as the second sector's vanilla proof, for every partition and for
/// partition 0 alone; and as a comm_r given to the verifier.
pub fn vanilla_window(data: &[u8]) {
    let k = kinds();
    let mut r = k.window.request();
    r.vanilla_proofs[1] = data;
    let mut one = k.window.request();
    one.vanilla_proofs.truncate(2);
    one.vanilla_proofs[1] = data;
    synthesize_first(cuzk::kinds::ProofRequest::WindowPoSt { post: r, partition: None });
    synthesize_first(cuzk::kinds::ProofRequest::WindowPoSt { post: one, partition: Some(0) });
    let replicas: Vec<_> = k.window.sectors.iter().map(|(id, comm_r)| cuzk::kinds::post::PublicReplica { sector_id: *id, comm_r: *comm_r }).collect();
    let mut replicas = replicas;
    replicas[1].comm_r = bytes32(data, 8);
    let _ = cuzk::kinds::post::window_statement(k.window.proof, &k.window.randomness, &k.window.prover_id, &replicas);
}

/// SnapDeals: any bytes as the partition vanilla proof; and as comm_r_old / comm_d_new given
/// to the verifier.
pub fn vanilla_update(data: &[u8]) {
    let k = kinds();
    let mut r = k.update.request();
    r.vanilla_proofs[0] = data;
    synthesize_first(cuzk::kinds::ProofRequest::SnapDeals(r));
    let u = &k.update;
    let c = cuzk::kinds::update::UpdateCommitments { comm_r_old: bytes32(data, 0), comm_r_new: u.comm_r_new, comm_d_new: bytes32(data, 32) };
    let _ = cuzk::kinds::update::update_statement(u.proof, &c);
}
