//! A real 2 KiB PoRep C2 through the exported C functions: the proof verifies with
//! filecoin-proofs, a second proof from the same C1 verifies too (without reloading the SRS),
//! and with fixed r, s the CPU backend is byte-identical to bellperson's create_proof_batch.
//! A SyntheticPoRep sector (registered proof 10) proves and verifies the same way.

mod common;

use std::ffi::CStr;
use std::ptr;

use blstrs::Scalar;
use cuzk::error::Status;
use cuzk::ffi::*;
use cuzk::prover::{Backend, CpuBackend};
use cuzk::srs::{Srs, Validation};
use ff::Field;
use rand::SeedableRng;

fn ok(status: Status, err: *mut cuzk_error) {
    if status != Status::Ok {
        let msg = unsafe { CStr::from_ptr(cuzk_error_message(err)) }.to_string_lossy().into_owned();
        panic!("{status:?}: {msg}");
    }
}

#[test]
fn c2_through_the_c_abi_verifies_with_filecoin_proofs() {
    let f = common::fixture();
    let mut err = ptr::null_mut();
    let mut engine = ptr::null_mut();
    let cfg = std::ffi::CString::new(format!(r#"{{"params_dir": {:?}}}"#, f.params_dir)).unwrap();
    unsafe {
        ok(cuzk_engine_new(cfg.as_ptr(), &mut engine, &mut err), err);
        let mut load_s = 0.0;
        ok(cuzk_srs_load(engine, common::PROOF_NUMBER, ptr::null(), &mut load_s, &mut err), err);
        let (mut loaded, mut bytes) = (false, 0u64);
        ok(cuzk_srs_status(engine, common::PROOF_NUMBER, &mut loaded, &mut bytes, &mut err), err);
        assert!(loaded && bytes > 1 << 30, "resident SRS should be > 1 GiB, got {bytes}");

        let mut proofs = Vec::new();
        for i in 0..2 {
            let proof = prove(engine, &f.c1, &f.sector);
            let bytes = proof_bytes(proof);
            assert_eq!(bytes.len(), 192);
            let mut srs_s = -1.0;
            ok(cuzk_proof_timing(proof, 1, &mut srs_s, &mut err), err);
            assert!(srs_s < 0.1, "proof {i}: SRS lookup took {srs_s}s — it must stay resident");
            let mut json = ptr::null_mut();
            ok(cuzk_proof_timings_json(proof, &mut json, &mut err), err);
            let timings = CStr::from_ptr(json).to_string_lossy().into_owned();
            cuzk_string_free(json);
            assert!(timings.contains("\"verified\":true"), "{timings}");
            eprintln!("proof {i} timings: {timings}");
            assert_timeline(&timings);
            cuzk_proof_free(proof);
            proofs.push(bytes);
        }
        // Two proofs of one C1: both valid, different (fresh r, s each).
        assert_ne!(proofs[0], proofs[1]);
        for p in &proofs {
            assert!(common::filecoin_verify(&f, p), "filecoin-proofs rejected a cuzk proof");
            let (st, m, valid) = common::c_verify_seal(engine, &f.sector, p);
            assert_eq!(st, Status::Ok, "{m}");
            assert!(valid);
        }
        // A tampered proof is rejected by both verifiers (as invalid or as malformed).
        let mut bad = proofs[0].clone();
        bad[100] ^= 1;
        let (st, _, valid) = common::c_verify_seal(engine, &f.sector, &bad);
        assert!(st != cuzk::error::Status::Ok || !valid);

        let mut status = ptr::null_mut();
        ok(cuzk_engine_status_json(engine, &mut status, &mut err), err);
        let s = CStr::from_ptr(status).to_string_lossy().into_owned();
        cuzk_string_free(status);
        assert!(s.contains("\"done\":2"), "{s}");
        // The CPU backend has no devices; with CUDA each device reports its health.
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let devices = v["devices"].as_array().expect("status lists the backend's devices");
        assert_eq!(v["backend"] == "cpu", devices.is_empty(), "{s}");
        assert!(devices.iter().all(|d| d["usable"] == true), "{s}");

        let mut text = ptr::null_mut();
        ok(cuzk_engine_metrics(engine, &mut text, &mut err), err);
        let m = CStr::from_ptr(text).to_string_lossy().into_owned();
        cuzk_string_free(text);
        assert_metrics(&m, 2);
        cuzk_engine_free(engine);
    }
}

/// Submit `c1` as `sector`'s C2 and wait: the finished job's proof (the caller frees it).
unsafe fn prove(engine: *mut cuzk_engine, c1: &[u8], sector: &cuzk::fixtures::SectorFixture) -> *mut cuzk_proof {
    let mut err = ptr::null_mut();
    let mut id = 0u64;
    ok(
        cuzk_submit_porep_c2(engine, c1.as_ptr(), c1.len(), sector.sector_id, sector.prover_id.as_ptr(), 0, ptr::null(), &mut id, &mut err),
        err,
    );
    let (mut state, mut proof) = (-1, ptr::null_mut());
    ok(cuzk_job_wait(engine, id, 600_000, &mut state, &mut proof, &mut err), err);
    assert_eq!(state, cuzk::engine::JobState::Done as i32);
    proof
}

/// A copy of `proof`'s bytes.
unsafe fn proof_bytes(proof: *const cuzk_proof) -> Vec<u8> {
    let mut err = ptr::null_mut();
    let (mut p, mut len) = (ptr::null(), 0usize);
    ok(cuzk_proof_bytes(proof, &mut p, &mut len, &mut err), err);
    std::slice::from_raw_parts(p, len).to_vec()
}

/// SyntheticPoRep (Curio's UseSyntheticPoRep: registered proofs 10–14): a 2 KiB sector sealed
/// with `generate_synth_proofs` before C1 is proved through the C ABI under the proof number
/// its C1 names, and filecoin-proofs' `verify_seal` (and cuzk's) accept the proof.
#[test]
fn synthetic_porep_c2_through_the_c_abi_verifies_with_filecoin_proofs() {
    let f = common::fixture();
    let proof = cuzk::kinds::registry::RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep;
    let sector = cuzk::fixtures::ensure_sector(&cuzk::fixtures::default_root(), proof, cuzk::fixtures::DEFAULT_SEED).expect("synthetic sector");
    let c1 = sector.c1_json().expect("c1");
    let mut err = ptr::null_mut();
    let mut engine = ptr::null_mut();
    let cfg = std::ffi::CString::new(format!(r#"{{"params_dir": {:?}}}"#, f.params_dir)).unwrap();
    unsafe {
        ok(cuzk_engine_new(cfg.as_ptr(), &mut engine, &mut err), err);
        let mut number = -1i64;
        ok(cuzk_c1_registered_proof(c1.as_ptr(), c1.len(), &mut number, &mut err), err);
        assert_eq!(number, 10, "StackedDrg2KiBV1_1_Feat_SyntheticPoRep is filecoin-ffi's 10");
        ok(cuzk_srs_load(engine, number, ptr::null(), ptr::null_mut(), &mut err), err);
        let p = prove(engine, &c1, &sector);
        let bytes = proof_bytes(p);
        cuzk_proof_free(p);
        assert!(common::filecoin_verify_sector(&sector, &bytes), "filecoin-proofs rejected a SyntheticPoRep proof");
        let (st, m, valid) = common::c_verify_seal(engine, &sector, &bytes);
        assert_eq!(st, Status::Ok, "{m}");
        assert!(valid, "cuzk_verify_seal rejected the SyntheticPoRep proof");
        cuzk_engine_free(engine);
    }
}

/// The Prometheus text after `done` jobs succeeded (and none failed): every sample belongs to a
/// family with HELP and TYPE, counters end in `_total`, outcomes are counted once, and the
/// duration histograms saw each job and each partition's stages.
fn assert_metrics(m: &str, done: u64) {
    let mut types = std::collections::HashMap::new();
    let mut helps = std::collections::HashSet::new();
    for l in m.lines() {
        let w: Vec<&str> = l.splitn(4, ' ').collect();
        match w.as_slice() {
            ["#", "TYPE", name, kind] => assert!(types.insert(name.to_string(), kind.to_string()).is_none(), "TYPE twice: {l}"),
            ["#", "HELP", name, _] => assert!(helps.insert(name.to_string()), "HELP twice: {l}"),
            _ => {}
        }
    }
    let sample = |name: &str| -> f64 {
        let line = m.lines().find(|l| l.split([' ', '{']).next() == Some(name)).unwrap_or_else(|| panic!("no {name} in\n{m}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    for l in m.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split([' ', '{']).next().unwrap();
        let family = ["_bucket", "_sum", "_count"].iter().find_map(|s| name.strip_suffix(s)).filter(|f| types.get(*f).is_some_and(|k| k == "histogram")).unwrap_or(name);
        let kind = types.get(family).unwrap_or_else(|| panic!("{name} has no TYPE:\n{m}"));
        assert!(helps.contains(family), "{family} has no HELP");
        assert_eq!(kind == "counter", family.ends_with("_total"), "{family} ({kind}): counters and only counters end in _total");
        assert!(!family.contains("_seconds_") && !family.contains("_bytes_") || family.ends_with("_total"), "unit not last: {family}");
    }
    assert!(m.contains(&format!("cuzk_jobs_submitted_total{{kind=\"porep\"}} {done}\n")), "{m}");
    assert!(m.contains("cuzk_jobs_submitted_total{kind=\"winning_post\"} 0\n"), "{m}");
    assert!(m.contains("cuzk_build_info{version=\"") && m.contains(",cuda_archs=\""), "{m}");
    let finished: f64 = m.lines().filter(|l| l.starts_with("cuzk_jobs_finished_total{")).map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap()).sum();
    assert_eq!(finished as u64, done, "each job counted once among the outcomes");
    assert!(m.contains(&format!("cuzk_jobs_finished_total{{kind=\"porep\",outcome=\"done\"}} {done}\n")), "{m}");
    assert!(m.contains(&format!("cuzk_job_duration_seconds_count{{kind=\"porep\"}} {done}\n")), "{m}");
    assert!(m.contains("cuzk_job_duration_seconds_count{kind=\"snap_deals\"} 0\n"), "kinds apart: {m}");
    assert!(m.contains(&format!("cuzk_job_duration_seconds_bucket{{kind=\"porep\",le=\"+Inf\"}} {done}\n")), "{m}");
    assert!(m.contains(&format!("cuzk_partition_stage_seconds_count{{kind=\"porep\",stage=\"prove\"}} {done}\n")), "one 2 KiB partition per job: {m}");
    assert!(sample("cuzk_job_duration_seconds_sum") > 0.0);
    assert!(m.contains("cuzk_srs_resident_bytes{proof=\"StackedDrg2KiBV1_1\"}"), "{m}");
    assert_eq!(sample("cuzk_partitions_awaiting_prover") as u64, 0);
}

#[test]
fn fixed_r_s_is_byte_identical_to_bellperson() {
    let f = common::fixture();
    let srs = Srs::load(common::PROOF, &f.params, Validation::None).unwrap();
    let inputs = cuzk::kinds::porep::parse_c1(&f.c1, &f.sector.prover_id, f.sector.sector_id).unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(42);
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));

    let reference = cuzk::synth::upstream::of(&*inputs.circuits).unwrap().bellperson_reference(0, &srs.params, r, s).unwrap();
    let asg = inputs.circuits.synthesize(0, srs.size_hint()).unwrap();
    let ours = CpuBackend::default().prove(&srs, asg, r, s).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    reference.write(&mut a).unwrap();
    ours.proof.write(&mut b).unwrap();
    assert_eq!(a, b, "cuzk CPU proof differs from bellperson create_proof_batch for fixed r, s");
    assert!(common::filecoin_verify(&f, &b));
    eprintln!("phases: {:?}", ours.phases);

    // Through the recorded circuit with a, b, c deferred to the backend (the CUDA backend's
    // path; the CPU backend evaluates them itself): the same bytes.
    let r1cs = std::sync::Arc::new(cuzk::synth::R1cs::record(common::PROOF, srs.size_hint(), &|| false).unwrap());
    let deferred = r1cs.defer(inputs.circuits.witness(0, srs.size_hint()).unwrap()).unwrap();
    assert!(deferred.a.is_empty() && deferred.num_constraints() == r1cs.constraints());
    let recorded = CpuBackend::default().prove(&srs, deferred, r, s).unwrap();
    let mut c = Vec::new();
    recorded.proof.write(&mut c).unwrap();
    assert_eq!(a, c, "the recorded-circuit proof differs from bellperson's for fixed r, s");
}

/// The job's timeline: its partition went through synthesis, the prove queue, the prover and
/// the finisher in that order, each span inside the job's total time.
fn assert_timeline(timings: &str) {
    let v: serde_json::Value = serde_json::from_str(timings).unwrap();
    let total = v["total_s"].as_f64().unwrap();
    let spans = v["spans"].as_array().unwrap_or_else(|| panic!("no spans: {timings}"));
    let span = |stage: &str| {
        let s = spans.iter().find(|s| s[1] == stage).unwrap_or_else(|| panic!("no {stage} span: {timings}"));
        assert_eq!(s[0], 0, "{timings}");
        (s[2].as_f64().unwrap(), s[3].as_f64().unwrap())
    };
    let order = ["synthesis", "prove_queue", "prove", "finish"].map(span);
    for (i, (start, end)) in order.iter().enumerate() {
        assert!(start <= end && *end <= total + 1e-3, "span {i} {start}..{end} of {total}: {timings}");
        if i > 0 {
            assert!(order[i - 1].1 <= start + 1e-3, "span {i} starts before span {} ends: {timings}", i - 1);
        }
    }
}
