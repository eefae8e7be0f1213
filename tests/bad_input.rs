//! Bad input through the C ABI: every case gets the right status and a message naming the
//! problem, loses nothing, and never crashes the process.

mod common;

use std::ffi::{CStr, CString};
use std::ptr;

use cuzk::error::Status;
use cuzk::ffi::*;

/// Run a call that must fail; return (status, message) and free the error.
fn fails(f: impl FnOnce(*mut *mut cuzk_error) -> Status) -> (Status, String) {
    let mut err = ptr::null_mut();
    let st = f(&mut err);
    assert_ne!(st, Status::Ok, "call unexpectedly succeeded");
    assert!(!err.is_null(), "failure without an error object");
    unsafe {
        assert_eq!(cuzk_error_code(err), st);
        let msg = CStr::from_ptr(cuzk_error_message(err)).to_string_lossy().into_owned();
        cuzk_error_free(err);
        (st, msg)
    }
}

fn engine(extra: &str) -> *mut cuzk_engine {
    let mut e = ptr::null_mut();
    let cfg = CString::new(extra).unwrap();
    let st = unsafe { cuzk_engine_new(cfg.as_ptr(), &mut e, ptr::null_mut()) };
    assert_eq!(st, Status::Ok);
    e
}

fn submit(e: *mut cuzk_engine, c1: &[u8], f: &cuzk::fixtures::SectorFixture) -> (Status, String, u64) {
    let mut id = 0;
    let mut err = ptr::null_mut();
    let st = unsafe {
        cuzk_submit_porep_c2(e, c1.as_ptr(), c1.len(), f.sector_id, f.prover_id.as_ptr(), 0, ptr::null(), &mut id, &mut err)
    };
    let msg = if err.is_null() {
        String::new()
    } else {
        unsafe {
            let m = CStr::from_ptr(cuzk_error_message(err)).to_string_lossy().into_owned();
            cuzk_error_free(err);
            m
        }
    };
    (st, msg, id)
}

fn sector() -> (cuzk::fixtures::SectorFixture, Vec<u8>) {
    // Sealing a 2 KiB sector takes well under a second and needs no params.
    let s = cuzk::fixtures::ensure_sector(&cuzk::fixtures::default_root(), common::PROOF, cuzk::fixtures::DEFAULT_SEED)
        .unwrap();
    let c1 = s.c1_json().unwrap();
    (s, c1)
}

#[test]
fn null_pointers_and_empty_buffers() {
    let (s, c1) = sector();
    let e = engine("");
    unsafe {
        let (st, m) = fails(|err| cuzk_engine_new(ptr::null(), ptr::null_mut(), err));
        assert_eq!((st, m.as_str()), (Status::InvalidArgument, "out_engine is NULL"));
        let (st, m) = fails(|err| cuzk_srs_load(ptr::null(), 5, ptr::null(), ptr::null_mut(), err));
        assert_eq!((st, m.as_str()), (Status::InvalidArgument, "engine is NULL"));
        let mut id = 0;
        let (st, m) = fails(|err| {
            cuzk_submit_porep_c2(e, ptr::null(), 10, 1, s.prover_id.as_ptr(), 0, ptr::null(), &mut id, err)
        });
        assert_eq!((st, m.as_str()), (Status::InvalidArgument, "c1_json is NULL"));
        let (st, m) = fails(|err| cuzk_submit_porep_c2(e, c1.as_ptr(), 0, 1, s.prover_id.as_ptr(), 0, ptr::null(), &mut id, err));
        assert_eq!(st, Status::InvalidArgument);
        assert!(m.contains("c1_json is empty"), "{m}");
        let (st, m) = fails(|err| cuzk_submit_porep_c2(e, c1.as_ptr(), c1.len(), 1, ptr::null(), 0, ptr::null(), &mut id, err));
        assert_eq!(st, Status::InvalidArgument);
        assert!(m.contains("prover_id is NULL"), "{m}");
        let (st, m) = fails(|err| {
            cuzk_submit_porep_c2(e, c1.as_ptr(), c1.len(), 1, s.prover_id.as_ptr(), 0, ptr::null(), ptr::null_mut(), err)
        });
        assert_eq!((st, m.as_str()), (Status::InvalidArgument, "out_job_id is NULL"));
        let (st, _) = fails(|err| cuzk_proof_bytes(ptr::null(), ptr::null_mut(), ptr::null_mut(), err));
        assert_eq!(st, Status::InvalidArgument);
        let (st, _) = fails(|err| cuzk_engine_status_json(e, ptr::null_mut(), err));
        assert_eq!(st, Status::InvalidArgument);
        // A NULL err out-param is allowed: the status alone comes back.
        assert_eq!(cuzk_job_poll(e, 12345, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()), Status::UnknownJob);
        // Free functions accept NULL; error accessors tolerate NULL.
        cuzk_engine_free(ptr::null_mut());
        cuzk_error_free(ptr::null_mut());
        cuzk_proof_free(ptr::null_mut());
        cuzk_string_free(ptr::null_mut());
        assert_eq!(cuzk_error_code(ptr::null()), Status::InvalidArgument);
        assert_eq!(CStr::from_ptr(cuzk_error_message(ptr::null())).to_bytes(), b"");
        assert_eq!(CStr::from_ptr(cuzk_status_name(3)).to_str().unwrap(), "SRS not loaded");
        assert_eq!(CStr::from_ptr(cuzk_status_name(999)).to_str().unwrap(), "unknown status");
        assert_eq!(CStr::from_ptr(cuzk_registered_proof_name(8)).to_str().unwrap(), "StackedDrg32GiBV1_1");
        assert!(cuzk_registered_proof_name(20).is_null());
        let mut n = -1;
        let name = CString::new("StackedDrg512MiBV1").unwrap();
        assert_eq!(cuzk_registered_proof_parse(name.as_ptr(), &mut n, ptr::null_mut()), Status::Ok);
        assert_eq!(n, 2);
        let bad = CString::new("StackedDrg1TiB").unwrap();
        let (st, m) = fails(|err| cuzk_registered_proof_parse(bad.as_ptr(), &mut n, err));
        assert_eq!(st, Status::InvalidArgument);
        assert!(m.contains("StackedDrg1TiB"), "{m}");
        let (st, _) = fails(|err| cuzk_registered_proof_parse(ptr::null(), &mut n, err));
        assert_eq!(st, Status::InvalidArgument);
        cuzk_engine_free(e);
    }
}

#[test]
fn bad_config_and_unknown_ids() {
    unsafe {
        let mut e = ptr::null_mut();
        let cfg = CString::new(r#"{"verfy": false}"#).unwrap();
        let (st, m) = fails(|err| cuzk_engine_new(cfg.as_ptr(), &mut e, err));
        assert_eq!(st, Status::InvalidArgument);
        assert!(m.contains("verfy"), "{m}");
        assert!(e.is_null(), "out-param written on failure");
        let cfg = CString::new(r#"{"backend": "cuda"}"#).unwrap();
        let (st, _) = fails(|err| cuzk_engine_new(cfg.as_ptr(), &mut e, err));
        assert!(matches!(st, Status::Unsupported | Status::Ok), "{st:?}");

        let e = engine("");
        let (st, m) = fails(|err| cuzk_job_poll(e, 777, ptr::null_mut(), ptr::null_mut(), err));
        assert_eq!(st, Status::UnknownJob);
        assert!(m.contains("777"), "{m}");
        let (st, _) = fails(|err| cuzk_job_wait(e, 778, 10, ptr::null_mut(), ptr::null_mut(), err));
        assert_eq!(st, Status::UnknownJob);
        let (st, _) = fails(|err| cuzk_job_cancel(e, 779, ptr::null_mut(), err));
        assert_eq!(st, Status::UnknownJob);
        let (st, m) = fails(|err| cuzk_srs_load(e, 42, ptr::null(), ptr::null_mut(), err));
        assert_eq!(st, Status::InvalidArgument);
        assert!(m.contains("42"), "{m}");
        let (st, m) = fails(|err| cuzk_srs_load(e, 15, ptr::null(), ptr::null_mut(), err));
        assert_eq!(st, Status::Unsupported, "{m}");
        let mut secs = 0.0;
        let (st, _) = fails(|err| cuzk_proof_timing(ptr::null(), 99, &mut secs, err));
        assert_eq!(st, Status::InvalidArgument);
        cuzk_engine_free(e);
    }
}

#[test]
fn malformed_truncated_and_mismatched_c1() {
    let (s, c1) = sector();
    let e = engine("");
    unsafe {
        let mut n = -1i64;
        assert_eq!(cuzk_c1_registered_proof(c1.as_ptr(), c1.len(), &mut n, ptr::null_mut()), Status::Ok);
        assert_eq!(n, common::PROOF_NUMBER);
        let (st, m) = fails(|err| cuzk_c1_registered_proof(b"{}".as_ptr(), 2, &mut n, err));
        assert_eq!(st, Status::InvalidInput, "{m}");
        assert!(m.contains("registered_proof"), "{m}");
    }
    let (st, m, _) = submit(e, b"{not json", &s);
    assert_eq!(st, Status::InvalidInput, "{m}");
    assert!(m.contains("C1 output is not valid"), "{m}");
    let (st, m, _) = submit(e, &c1[..c1.len() / 2], &s);
    assert_eq!(st, Status::InvalidInput, "{m}");
    // The same vanilla proofs under another sector size's registered proof.
    let other = String::from_utf8(c1.clone()).unwrap().replace("\"StackedDrg2KiBV1_1\"", "\"StackedDrg8MiBV1_1\"");
    let (st, m, _) = submit(e, other.as_bytes(), &s);
    assert_eq!(st, Status::InvalidInput, "{m}");
    assert!(m.contains("StackedDrg8MiBV1_1"), "{m}");
    // Right C1, wrong prover id.
    let mut wrong = s.clone();
    wrong.prover_id[0] ^= 1;
    let (st, m, _) = submit(e, &c1, &wrong);
    assert_eq!(st, Status::InvalidInput, "{m}");
    assert!(m.contains("replica id"), "{m}");
    // Valid C1, no SRS loaded: the message names the file to load.
    let (st, m, _) = submit(e, &c1, &s);
    assert_eq!(st, Status::SrsNotLoaded, "{m}");
    assert!(m.contains("StackedDrg2KiBV1_1") && m.contains(".params"), "{m}");
    unsafe { cuzk_engine_free(e) };
}

#[test]
fn missing_truncated_and_corrupt_params() {
    let dir = std::env::temp_dir().join(format!("cuzk-bad-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = engine(&format!(r#"{{"params_dir": {:?}}}"#, dir));
    unsafe {
        let (st, m) = fails(|err| cuzk_srs_load(e, 5, ptr::null(), ptr::null_mut(), err));
        assert_eq!(st, Status::SrsLoad);
        let expected = cuzk::kinds::CircuitId::Seal(common::PROOF).params_path(&dir).unwrap();
        assert!(m.contains(&expected.display().to_string()), "{m}");

        // A small but well-formed params image, then damaged copies of it.
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let params = bellperson::groth16::generate_random_parameters::<blstrs::Bls12, _, _>(Tiny, &mut rng).unwrap();
        let mut good = Vec::new();
        params.write(&mut good).unwrap();
        let path = dir.join("broken.params");
        let cpath = CString::new(path.to_str().unwrap()).unwrap();

        std::fs::write(&path, &good[..good.len() - 7]).unwrap();
        let (st, m) = fails(|err| cuzk_srs_load(e, 5, cpath.as_ptr(), ptr::null_mut(), err));
        assert_eq!(st, Status::SrsLoad);
        assert!(m.contains("truncated") && m.contains("broken.params"), "{m}");

        // Well-formed, but the params of another circuit: refused from the section headers,
        // before anything is decoded (point corruption: srs::decode's unit tests).
        std::fs::write(&path, &good).unwrap();
        let (st, m) = fails(|err| cuzk_srs_load(e, 5, cpath.as_ptr(), ptr::null_mut(), err));
        assert_eq!(st, Status::SrsLoad);
        assert!(m.contains("not the params of StackedDrg2KiBV1_1") && m.contains("section ic"), "{m}");

        std::fs::write(&path, b"").unwrap();
        let (st, m) = fails(|err| cuzk_srs_load(e, 5, cpath.as_ptr(), ptr::null_mut(), err));
        assert_eq!(st, Status::SrsLoad, "{m}");
        cuzk_engine_free(e);

        // A submit that loads its SRS on demand names the missing file, as a load does (the
        // daemon's tests prove through this path).
        let e = engine(&format!(r#"{{"params_dir": {:?}, "load_srs_on_demand": true}}"#, dir));
        let (f, c1) = sector();
        let (st, m, _) = submit(e, &c1, &f);
        assert_eq!(st, Status::SrsLoad, "{m}");
        assert!(m.contains(&expected.display().to_string()), "{m}");
        cuzk_engine_free(e);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[derive(Clone)]
struct Tiny;
impl bellperson::Circuit<blstrs::Scalar> for Tiny {
    fn synthesize<CS: bellperson::ConstraintSystem<blstrs::Scalar>>(self, cs: &mut CS) -> Result<(), bellperson::SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(blstrs::Scalar::from(3u64)))?;
        let y = cs.alloc_input(|| "y", || Ok(blstrs::Scalar::from(9u64)))?;
        cs.enforce(|| "x*x=y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        Ok(())
    }
}

#[test]
fn cancel_twice_and_request_id_dedupe() {
    let f = common::fixture();
    let e = engine(&format!(r#"{{"params_dir": {:?}}}"#, f.params_dir));
    unsafe {
        assert_eq!(cuzk_srs_load(e, 5, ptr::null(), ptr::null_mut(), ptr::null_mut()), Status::Ok);
        let rid = CString::new("sector-431-attempt-1").unwrap();
        let (mut a, mut b) = (0u64, 0u64);
        for out in [&mut a, &mut b] {
            let st = cuzk_submit_porep_c2(
                e,
                f.c1.as_ptr(),
                f.c1.len(),
                f.sector.sector_id,
                f.sector.prover_id.as_ptr(),
                0,
                rid.as_ptr(),
                out,
                ptr::null_mut(),
            );
            assert_eq!(st, Status::Ok);
        }
        assert_eq!(a, b, "same request id must return the same job");
        let mut cancelled = false;
        assert_eq!(cuzk_job_cancel(e, a, &mut cancelled, ptr::null_mut()), Status::Ok);
        assert!(cancelled);
        assert_eq!(cuzk_job_cancel(e, a, &mut cancelled, ptr::null_mut()), Status::Ok);
        assert!(!cancelled, "second cancel must report the job already ended");
        let mut state = -1;
        let (st, m) = fails(|err| cuzk_job_wait(e, a, 60_000, &mut state, ptr::null_mut(), err));
        assert_eq!(st, Status::Cancelled, "{m}");
        assert_eq!(state, cuzk::engine::JobState::Cancelled as i32);
        // The engine keeps serving after a cancel, and free with a job in flight returns.
        let mut id = 0;
        assert_eq!(
            cuzk_submit_porep_c2(e, f.c1.as_ptr(), f.c1.len(), f.sector.sector_id, f.sector.prover_id.as_ptr(), 0, ptr::null(), &mut id, ptr::null_mut()),
            Status::Ok
        );
        assert_ne!(id, a);
        let (st, _) = fails(|err| cuzk_job_wait(e, id, 1, ptr::null_mut(), ptr::null_mut(), err));
        assert_eq!(st, Status::Timeout);
        cuzk_engine_free(e);
    }
}
