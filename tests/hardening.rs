//! Hostile and careless input through the C ABI, one test per defect seen on the old main:
//! a forged cache or params file must not make a forged proof valid; a FIFO must not hang a
//! load; a file truncated while it is decoded must not kill the host; absurd config values,
//! reused request ids and C1 outputs of the wrong shape or with non-canonical field elements get
//! a clear status; an evicted SRS is freed when its last job ends.

mod common;

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;
use std::time::{Duration, Instant};

use cuzk::error::Status;
use cuzk::ffi::*;
use group::prime::PrimeCurveAffine;
use group::GroupEncoding;
use serde_json::Value;

use common::call;

fn engine(config: &str) -> *mut cuzk_engine {
    let mut e = ptr::null_mut();
    let cfg = CString::new(config).unwrap();
    let (st, m) = call(|err| unsafe { cuzk_engine_new(cfg.as_ptr(), &mut e, err) });
    assert_eq!(st, Status::Ok, "{m}");
    e
}

fn config(f: &common::Fixture, extra: &str) -> String {
    format!(r#"{{"params_dir": {:?}{extra}}}"#, f.params_dir)
}

fn load(e: *mut cuzk_engine, path: Option<&Path>) -> (Status, String) {
    let c = path.map(|p| CString::new(p.to_str().unwrap()).unwrap());
    call(|err| unsafe { cuzk_srs_load(e, common::PROOF_NUMBER, c.as_ref().map_or(ptr::null(), |c| c.as_ptr()), ptr::null_mut(), err) })
}

fn status_json(e: *mut cuzk_engine) -> String {
    let mut s = ptr::null_mut();
    assert_eq!(unsafe { cuzk_engine_status_json(e, &mut s, ptr::null_mut()) }, Status::Ok);
    let out = unsafe { CStr::from_ptr(s).to_string_lossy().into_owned() };
    unsafe { cuzk_string_free(s) };
    out
}

fn submit(e: *mut cuzk_engine, c1: &[u8], f: &common::Fixture, sector: u64, rid: Option<&str>) -> (Status, String, u64) {
    let rid = rid.map(|r| CString::new(r).unwrap());
    let mut id = 0;
    let (st, m) = call(|err| unsafe {
        cuzk_submit_porep_c2(
            e,
            c1.as_ptr(),
            c1.len(),
            sector,
            f.sector.prover_id.as_ptr(),
            0,
            rid.as_ref().map_or(ptr::null(), |r| r.as_ptr()),
            &mut id,
            err,
        )
    });
    (st, m, id)
}

/// A proof that verifies under a key with gamma = delta = identity: A = alpha, B = beta, C = g.
fn forged_proof(vk: &bellperson::groth16::VerifyingKey<blstrs::Bls12>) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(vk.alpha_g1.to_bytes().as_ref());
    p.extend_from_slice(vk.beta_g2.to_bytes().as_ref());
    p.extend_from_slice(blstrs::G1Affine::generator().to_bytes().as_ref());
    p
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cuzk-hardening-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn edited_cache_cannot_make_a_forged_proof_valid() {
    let f = common::fixture();
    let dir = scratch("cache");
    let cache = cuzk::srs::cache::path_for(&dir, &f.params);
    // A first load writes the cache; then someone edits its verifying key (gamma = delta = 0)
    // and fixes the block's CRC-32.
    let first = cuzk::srs::Srs::load_with(common::PROOF, &f.params, cuzk::srs::Validation::OnCurve, Some(&dir)).unwrap();
    first.wait_cache_write().unwrap();
    let mut forged_vk = first.params.vk.clone();
    forged_vk.gamma_g2 = blstrs::G2Affine::identity();
    forged_vk.delta_g2 = blstrs::G2Affine::identity();
    cuzk::srs::cache::rewrite_vk(&cache, &forged_vk).unwrap();
    let forged = forged_proof(&forged_vk);
    // The forgery is real: under the edited key it verifies for any public inputs.
    let pvk = bellperson::groth16::prepare_verifying_key(&forged_vk);
    let p = bellperson::groth16::Proof::<blstrs::Bls12>::read(&forged[..]).unwrap();
    let inputs = vec![blstrs::Scalar::from(7u64); forged_vk.ic.len() - 1];
    assert!(bellperson::groth16::verify_proof(&pvk, &p, &inputs).unwrap(), "the forged proof should pass under the edited key");

    let e = engine(&config(&f, &format!(r#", "srs_cache_dir": {dir:?}"#)));
    let (st, m) = load(e, None);
    assert_eq!(st, Status::Ok, "{m}");
    assert!(status_json(e).contains(r#""from_cache":false"#), "the edited cache was used: {}", status_json(e));
    let (st, m, valid) = common::c_verify_seal(e, &f.sector, &forged);
    assert!(st == Status::Ok && !valid, "forged proof: {st:?} {m} valid={valid}");
    unsafe { cuzk_engine_free(e) };
    let _ = std::fs::remove_dir_all(&dir); // a background cache write may still be under way
}

#[test]
fn fifo_at_the_cache_path_or_params_path_does_not_hang() {
    let f = common::fixture();
    let dir = scratch("fifo");
    let mkfifo = |p: &Path| {
        let c = CString::new(p.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    mkfifo(&cuzk::srs::cache::path_for(&dir, &f.params));
    let fifo_params = dir.join("v28-fifo.params");
    mkfifo(&fifo_params);
    let cfg = config(&f, &format!(r#", "srs_cache_dir": {dir:?}"#));
    let (from_cache, fifo) = common::within(Duration::from_secs(120), "srs_load with FIFOs", move || {
        let e = engine(&cfg);
        let (st, m) = load(e, None);
        assert_eq!(st, Status::Ok, "a FIFO at the cache path must cost the cache, not the load: {m}");
        let from_cache = status_json(e).contains(r#""from_cache":true"#);
        let fifo = load(e, Some(&fifo_params));
        unsafe { cuzk_engine_free(e) };
        (from_cache, fifo)
    });
    assert!(!from_cache);
    assert_eq!(fifo.0, Status::SrsLoad, "{}", fifo.1);
    assert!(fifo.1.contains("FIFO") && fifo.1.contains("v28-fifo.params"), "{}", fifo.1);
    let _ = std::fs::remove_dir_all(&dir); // a background cache write may still be under way
}

/// The params of the fixture with its verifying key's gamma and delta replaced by the identity
/// (uncompressed encoding with the infinity flag), written to `to`.
fn identity_gamma_delta(from: &Path, to: &Path) {
    let mut bytes = std::fs::read(from).unwrap();
    let (g1, g2) = (96, 192);
    let mut inf = vec![0u8; g2];
    inf[0] = 0x40;
    for at in [2 * g1 + g2, 3 * g1 + 2 * g2] {
        bytes[at..at + g2].copy_from_slice(&inf); // gamma_g2, delta_g2
    }
    std::fs::write(to, &bytes).unwrap();
}

#[test]
fn degenerate_key_truncation_and_foreign_params_are_refused() {
    let f = common::fixture();
    let dir = scratch("params");
    let e = engine(&config(&f, r#", "srs_validation": "none""#));

    // Identity gamma/delta: refused even with validation "none", and no proof is ever judged
    // against such a key.
    let edited = dir.join("identity.params");
    identity_gamma_delta(&f.params, &edited);
    let (st, m) = load(e, Some(&edited));
    assert_eq!(st, Status::SrsLoad, "{m}");
    assert!(m.contains("gamma_g2"), "{m}");

    // Truncated while it is decoded: an error, never SIGBUS (the old mmap decoder died here).
    let victim = dir.join("truncated.params");
    std::fs::copy(&f.params, &victim).unwrap();
    let v = victim.clone();
    let cutter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        let file = std::fs::OpenOptions::new().write(true).open(&v).unwrap();
        file.set_len(4 << 20).unwrap();
    });
    let e2 = engine(&config(&f, ""));
    let (st, m) = load(e2, Some(&victim));
    cutter.join().unwrap();
    assert!(matches!(st, Status::SrsLoad | Status::Ok), "{st:?} {m}");
    if st == Status::SrsLoad {
        assert!(m.contains("truncated"), "{m}");
    }
    // Truncated before the load: a clear error.
    let (st, m) = load(e2, Some(&victim));
    assert_eq!(st, Status::SrsLoad, "{m}");
    assert!(m.contains("truncated"), "{m}");

    // A symbolic link is not followed.
    let link = dir.join("link.params");
    std::os::unix::fs::symlink(&f.params, &link).unwrap();
    let (st, m) = load(e2, Some(&link));
    assert_eq!(st, Status::SrsLoad, "{m}");
    assert!(m.contains("symbolic link"), "{m}");

    // A params file whose .vk beside it differs: refused.
    let swapped = dir.join("v28-swapped.params");
    std::fs::copy(&f.params, &swapped).unwrap();
    let other = bellperson::groth16::VerifyingKey::<blstrs::Bls12> {
        alpha_g1: blstrs::G1Affine::generator(),
        ..cuzk::srs::read_vk(&f.params.with_extension("vk")).unwrap()
    };
    let mut vk_bytes = Vec::new();
    other.write(&mut vk_bytes).unwrap();
    std::fs::write(dir.join("v28-swapped.vk"), &vk_bytes).unwrap();
    let (st, m) = load(e2, Some(&swapped));
    assert_eq!(st, Status::SrsLoad, "{m}");
    assert!(m.contains("v28-swapped.vk"), "{m}");

    unsafe {
        cuzk_engine_free(e);
        cuzk_engine_free(e2);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn absurd_config_values_are_invalid_arguments() {
    for (cfg, key) in [
        (r#"{"prove_queue_depth": 4294967296}"#, "prove_queue_depth"),
        (r#"{"synthesis_workers": 100000}"#, "synthesis_workers"),
        (r#"{"memory_budget_mib": 18446744073709551615}"#, "memory_budget_mib"),
        (r#"{"job_ttl_secs": 18446744073709551615}"#, "job_ttl_secs"),
    ] {
        let mut e = ptr::null_mut();
        let c = CString::new(cfg).unwrap();
        let (st, m) = call(|err| unsafe { cuzk_engine_new(c.as_ptr(), &mut e, err) });
        assert_eq!(st, Status::InvalidArgument, "{cfg}: {m}");
        assert!(m.contains(key), "{cfg}: {m}");
        assert!(e.is_null());
    }
}

#[test]
fn request_ids_are_bound_to_their_content_and_released() {
    let f = common::fixture();
    let e = engine(&config(&f, ""));
    assert_eq!(load(e, None).0, Status::Ok);
    let sector = f.sector.sector_id;
    let (st, m, a) = submit(e, &f.c1, &f, sector, Some("sector-7"));
    assert_eq!(st, Status::Ok, "{m}");
    let (st, _, again) = submit(e, &f.c1, &f, sector, Some("sector-7"));
    assert_eq!((st, again), (Status::Ok, a), "the same request must return the same job");

    // The same key for another sector's request: refused, never the other job's id.
    let (st, m, _) = submit(e, &f.c1, &f, sector + 1, Some("sector-7"));
    assert_eq!(st, Status::InvalidArgument, "{m}");
    assert!(m.contains("sector-7") && m.contains(&format!("job {a}")), "{m}");
    let mut other_c1 = f.c1.clone();
    other_c1.push(b' '); // another byte string, even if the JSON means the same
    let (st, _, _) = submit(e, &other_c1, &f, sector, Some("sector-7"));
    assert_eq!(st, Status::InvalidArgument);

    // A cancelled job releases its key: the retry is a new job that runs.
    assert_eq!(unsafe { cuzk_job_cancel(e, a, ptr::null_mut(), ptr::null_mut()) }, Status::Ok);
    let (st, m, b) = submit(e, &f.c1, &f, sector, Some("sector-7"));
    assert_eq!(st, Status::Ok, "{m}");
    assert_ne!(b, a, "a retry after cancel must not return the dead job");
    let mut state = -1;
    assert_eq!(unsafe { cuzk_job_poll(e, b, &mut state, ptr::null_mut(), ptr::null_mut()) }, Status::Ok);
    assert!(state == 0 || state == 1, "retry state {state}");
    assert_eq!(unsafe { cuzk_job_cancel(e, b, ptr::null_mut(), ptr::null_mut()) }, Status::Ok);
    let (st, m, _) = submit(e, &f.c1, &f, sector, Some(""));
    assert_eq!(st, Status::InvalidArgument, "an empty request id: {m}");
    unsafe { cuzk_engine_free(e) };
}

fn c1_json(f: &common::Fixture) -> Value {
    serde_json::from_slice(&f.c1).unwrap()
}

fn partitions(v: &mut Value) -> &mut Vec<Value> {
    v["vanilla_proofs"].as_object_mut().unwrap().values_mut().next().unwrap().as_array_mut().unwrap()
}

fn max_bytes() -> Value {
    Value::Array(vec![Value::from(255u8); 32])
}

#[test]
fn c1_of_the_wrong_shape_or_with_non_canonical_elements_is_invalid_input() {
    let f = common::fixture();
    let e = engine(&config(&f, ""));
    assert_eq!(load(e, None).0, Status::Ok);
    let sector = f.sector.sector_id;
    let expect = |v: &Value, what: &str, needle: &str| {
        let bytes = serde_json::to_vec(v).unwrap();
        let t = Instant::now();
        let (st, m, _) = submit(e, &bytes, &f, sector, None);
        assert_eq!(st, Status::InvalidInput, "{what}: {m}");
        assert!(m.contains(needle), "{what}: {m}");
        assert!(t.elapsed() < Duration::from_secs(10), "{what}: refused only after {:?}", t.elapsed());
    };

    // Four times the challenges per partition.
    let mut v = c1_json(&f);
    for p in partitions(&mut v).iter_mut() {
        let c = p.as_array().unwrap().clone();
        *p = Value::Array(c.iter().cycle().take(4 * c.len()).cloned().collect());
    }
    expect(&v, "4x challenges", "challenges has 8 entries, 2 expected");

    // Fewer layers in a column, a shorter Merkle path, a missing parent, an index out of range.
    let mut v = c1_json(&f);
    partitions(&mut v)[0][1]["replica_column_proofs"]["c_x"]["column"]["rows"].as_array_mut().unwrap().pop();
    expect(&v, "short column", "c_x column rows has 1 entries, 2 expected");
    let mut v = c1_json(&f);
    partitions(&mut v)[0][0]["comm_d_proofs"]["data"]["Single"]["path"]["path"].as_array_mut().unwrap().pop();
    expect(&v, "short comm_d path", "comm_d_proofs path has 5 entries, 6 expected");
    let mut v = c1_json(&f);
    partitions(&mut v)[0][0]["replica_column_proofs"]["drg_parents"].as_array_mut().unwrap().pop();
    expect(&v, "missing drg parent", "drg_parents has 5 entries, 6 expected");
    let mut v = c1_json(&f);
    partitions(&mut v)[0][0]["labeling_proofs"][0]["node"] = Value::from(1u64 << 40);
    expect(&v, "node out of range", "out of range");

    // Non-canonical field elements: the replica id, a Merkle root, a label parent.
    let mut v = c1_json(&f);
    v["replica_id"] = max_bytes();
    expect(&v, "non-canonical replica_id", "replica_id is not a canonical field element");
    let mut v = c1_json(&f);
    partitions(&mut v)[0][1]["comm_r_last_proof"]["data"]["Single"]["root"] = max_bytes();
    expect(&v, "non-canonical Merkle root", "partition 0 challenge 1: comm_r_last_proof root is not a canonical");
    let mut v = c1_json(&f);
    partitions(&mut v)[0][0]["labeling_proofs"][1]["parents"][36] = max_bytes();
    expect(&v, "non-canonical label parent", "parents[36] is not a canonical");

    // An oversized C1 is refused before it is parsed.
    let mut huge = f.c1.clone();
    huge.truncate(huge.len() - 1); // drop the closing brace, pad, close again
    huge.extend(std::iter::repeat(b' ').take(cuzk::kinds::porep::validate::max_c1_bytes(common::PROOF).unwrap()));
    huge.push(b'}');
    let (st, m, _) = submit(e, &huge, &f, sector, None);
    assert_eq!(st, Status::InvalidInput, "{m}");
    assert!(m.contains("at most"), "{m}");

    // The untouched C1 still passes.
    let (st, m, id) = submit(e, &f.c1, &f, sector, None);
    assert_eq!(st, Status::Ok, "{m}");
    unsafe {
        cuzk_job_cancel(e, id, ptr::null_mut(), ptr::null_mut());
        cuzk_engine_free(e);
    }
}

#[test]
fn an_evicted_srs_is_freed_when_its_last_job_ends() {
    let f = common::fixture();
    let engine = cuzk::engine::Engine::new(cuzk::engine::EngineConfig {
        params_dir: Some(f.params_dir.clone()),
        ..Default::default()
    })
    .unwrap();
    let srs = std::sync::Arc::downgrade(&engine.srs_load(common::PROOF, None).unwrap());
    let id = common::submit(&engine, &f);
    assert!(engine.srs_evict(common::PROOF).unwrap());
    assert!(srs.upgrade().is_some(), "the running job still holds the SRS");
    engine.cancel(id).unwrap();
    // The job stays in the table for poll/wait (job_ttl_secs), but lets go of the SRS now.
    let t = Instant::now();
    while srs.upgrade().is_some() {
        assert!(t.elapsed() < Duration::from_secs(60), "the evicted SRS is still alive after its job ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(engine.poll(id).unwrap().state, cuzk::engine::JobState::Cancelled);
}

/// A first-use SRS load can be given up: a triggered token stops it (CUZK_STATUS_CANCELLED,
/// nothing resident), NULL tokens are refused by name, and a fresh token loads.
#[test]
fn a_cancelled_srs_load_returns_cancelled_and_keeps_nothing() {
    let f = common::fixture();
    let e = engine(&config(&f, ""));
    let new_token = || {
        let mut t = ptr::null_mut();
        let (st, m) = call(|err| unsafe { cuzk_cancel_new(&mut t, err) });
        assert_eq!(st, Status::Ok, "{m}");
        t
    };
    let load = |t: *const cuzk_cancel| {
        let mut secs = -1.0;
        let r = call(|err| unsafe { cuzk_srs_load_cancellable(e, 0, common::PROOF_NUMBER, ptr::null(), t, &mut secs, err) });
        (r, secs)
    };
    let loaded = || {
        let mut l = true;
        let (st, m) = call(|err| unsafe { cuzk_srs_status(e, common::PROOF_NUMBER, &mut l, ptr::null_mut(), err) });
        assert_eq!(st, Status::Ok, "{m}");
        l
    };

    let t = new_token();
    let (st, m) = call(|err| unsafe { cuzk_cancel_trigger(t, err) });
    assert_eq!(st, Status::Ok, "{m}");
    let ((st, m), secs) = load(t);
    assert_eq!(st, Status::Cancelled, "{m}");
    assert!(m.contains("was cancelled"), "{m}");
    assert_eq!(secs, -1.0, "out-params are written only on success");
    assert!(!loaded(), "nothing of a cancelled load is resident");
    unsafe { cuzk_cancel_free(t) };

    let ((st, m), _) = load(ptr::null());
    assert_eq!((st, m.as_str()), (Status::InvalidArgument, "cancel is NULL"));
    let (st, m) = call(|err| unsafe { cuzk_cancel_trigger(ptr::null(), err) });
    assert_eq!((st, m.as_str()), (Status::InvalidArgument, "cancel is NULL"));
    let (st, m) = call(|err| unsafe { cuzk_cancel_new(ptr::null_mut(), err) });
    assert_eq!((st, m.as_str()), (Status::InvalidArgument, "out_cancel is NULL"));
    unsafe { cuzk_cancel_free(ptr::null_mut()) };

    // Triggered from another thread while the decode runs (the 2 KiB test SRS is a 1 GB decode:
    // over a second on 2 cores, far longer than the 30 ms before the trigger).
    let t = new_token();
    let t_addr = t as usize;
    let trigger = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        let (st, m) = call(|err| unsafe { cuzk_cancel_trigger(t_addr as *const cuzk_cancel, err) });
        assert_eq!(st, Status::Ok, "{m}");
    });
    let ((st, m), _) = load(t);
    trigger.join().unwrap();
    assert_eq!(st, Status::Cancelled, "{m}");
    assert!(!loaded(), "nothing of a load cancelled mid-decode is resident");
    unsafe { cuzk_cancel_free(t) };

    let t = new_token();
    let ((st, m), secs) = load(t);
    assert_eq!(st, Status::Ok, "{m}");
    assert!(secs >= 0.0 && loaded());
    unsafe {
        cuzk_cancel_free(t);
        cuzk_engine_free(e);
    }
}
