//! The decoded-SRS cache with the real 2 KiB params: the first engine decodes and writes the
//! cache, a second engine loads from it (identical parameters) and proves a real C2 that
//! filecoin-proofs verifies; a corrupted cache is refused and the params file decoded again.

mod common;

use std::fs;

use cuzk::engine::{Engine, EngineConfig, JobState};
use cuzk::srs::cache;

fn engine(f: &common::Fixture, cache_dir: &std::path::Path) -> Engine {
    Engine::new(EngineConfig {
        params_dir: Some(f.params_dir.clone()),
        srs_cache_dir: Some(cache_dir.to_owned()),
        ..Default::default()
    })
    .expect("engine")
}

#[test]
fn cached_srs_is_identical_and_proves() {
    let f = common::fixture();
    let dir = std::env::temp_dir().join(format!("cuzk-test-srs-cache-{}", std::process::id()));
    let cache_file = cache::path_for(&dir, &f.params);

    let first = engine(&f, &dir);
    let decoded = first.srs_load(common::PROOF, None).unwrap();
    assert!(!decoded.from_cache);
    decoded.wait_cache_write().expect("cache written");
    assert!(cache_file.is_file(), "no cache at {}", cache_file.display());

    let second = engine(&f, &dir);
    let cached = second.srs_load(common::PROOF, None).unwrap();
    assert!(cached.from_cache, "the cache was not used");
    assert!(cached.params == decoded.params, "cached parameters differ from the decoded ones");
    assert!(second.status_json().contains("\"from_cache\":true"), "{}", second.status_json());
    drop(first);

    let id = common::submit(&second, &f);
    let snap = second.wait(id, None).unwrap();
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    let proof = snap.result.unwrap().proof.clone();
    assert!(common::filecoin_verify(&f, &proof), "proof from the cached SRS does not verify");
    drop(second);

    // One flipped byte in the h section: refused, decoded again, and the cache rewritten.
    let mut bytes = fs::read(&cache_file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    fs::write(&cache_file, &bytes).unwrap();
    let third = engine(&f, &dir);
    let again = third.srs_load(common::PROOF, None).unwrap();
    assert!(!again.from_cache, "a corrupt cache was used");
    assert!(again.params == decoded.params);
    again.wait_cache_write().expect("cache rewritten");
    drop(third);
    let fourth = engine(&f, &dir);
    assert!(fourth.srs_load(common::PROOF, None).unwrap().from_cache, "the rewritten cache was not used");
    drop(fourth);
    fs::remove_dir_all(&dir).unwrap();
}
