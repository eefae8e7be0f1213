//! Shared by the integration tests: the cached 2 KiB fixture (generated on first use, a few
//! minutes on 2 cores; then reused from /var/tmp/cuzk-fixtures or CUZK_FIXTURES_DIR).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Once;

use cuzk::fixtures::{self, SectorFixture};
use cuzk::kinds::registry::RegisteredSealProof;

pub const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;
pub const PROOF_NUMBER: i64 = 5;

pub struct Fixture {
    pub params_dir: PathBuf,
    pub params: PathBuf,
    pub sector: SectorFixture,
    pub c1: Vec<u8>,
}

static ENV: Once = Once::new();

/// The 2 KiB fixture. Also points filecoin-proofs' parameter cache at it (before any
/// filecoin-proofs setting is read), so its `verify_seal` finds the `.vk`.
pub fn fixture() -> Fixture {
    let root = fixtures::default_root();
    let params_dir = fixtures::params_dir(&root);
    ENV.call_once(|| std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir));
    let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED).expect("params fixture");
    let sector = fixtures::ensure_sector(&root, PROOF, fixtures::DEFAULT_SEED).expect("sector fixture");
    let c1 = sector.c1_json().expect("c1");
    Fixture { params_dir, params, sector, c1 }
}

/// filecoin-proofs' own verifier, through filecoin-proofs-api.
pub fn filecoin_verify(f: &Fixture, proof: &[u8]) -> bool {
    filecoin_verify_sector(&f.sector, proof)
}

/// filecoin-proofs' verifier for a proof of sector `s` (of its registered proof).
pub fn filecoin_verify_sector(s: &SectorFixture, proof: &[u8]) -> bool {
    filecoin_proofs_api::seal::verify_seal(
        s.proof().expect("the fixture's registered proof"),
        s.comm_r,
        s.comm_d,
        s.prover_id,
        s.sector_id.into(),
        s.ticket,
        s.seed,
        proof,
    )
    .expect("filecoin-proofs verify_seal errored")
}

/// A second sealed 2 KiB sector (another seed: other data, ticket and seed), for tests that
/// must tell two sectors' jobs apart. Sealing takes well under a second; no params needed.
pub fn other_sector() -> (SectorFixture, Vec<u8>) {
    let s = fixtures::ensure_sector(&fixtures::default_root(), PROOF, fixtures::DEFAULT_SEED + 1).expect("second sector");
    let c1 = s.c1_json().expect("c1");
    (s, c1)
}

/// Submit the fixture's C2 to `engine` (priority 0, no request id).
pub fn submit(engine: &cuzk::engine::Engine, f: &Fixture) -> cuzk::engine::JobId {
    try_submit(engine, f).expect("submit")
}

/// [`submit`], returning the engine's answer.
pub fn try_submit(engine: &cuzk::engine::Engine, f: &Fixture) -> cuzk::error::Result<cuzk::engine::JobId> {
    engine.submit(cuzk::engine::SubmitRequest {
        c1_json: &f.c1,
        sector_id: f.sector.sector_id,
        prover_id: f.sector.prover_id,
        priority: 0,
        request_id: None,
    })
}

/// Run a C call taking an error out-param; return its status and the error's message (empty
/// when none), freeing the error.
pub fn call(f: impl FnOnce(*mut *mut cuzk::ffi::cuzk_error) -> cuzk::error::Status) -> (cuzk::error::Status, String) {
    let mut err = std::ptr::null_mut();
    let st = f(&mut err);
    if err.is_null() {
        return (st, String::new());
    }
    // SAFETY: a non-NULL error written by the library, freed once here.
    unsafe {
        let m = std::ffi::CStr::from_ptr(cuzk::ffi::cuzk_error_message(err)).to_string_lossy().into_owned();
        cuzk::ffi::cuzk_error_free(err);
        (st, m)
    }
}

/// `cuzk_verify_seal` of `proof` against sector `s`'s statement: (status, message, valid).
pub fn c_verify_seal(engine: *const cuzk::ffi::cuzk_engine, s: &SectorFixture, proof: &[u8]) -> (cuzk::error::Status, String, bool) {
    let mut valid = false;
    let (st, m) = call(|err| unsafe {
        cuzk::ffi::cuzk_verify_seal(
            engine,
            cuzk::kinds::registry::seal_to_number(s.proof().expect("the fixture's registered proof")),
            s.comm_r.as_ptr(),
            s.comm_d.as_ptr(),
            s.prover_id.as_ptr(),
            s.sector_id,
            s.ticket.as_ptr(),
            s.seed.as_ptr(),
            proof.as_ptr(),
            proof.len(),
            &mut valid,
            err,
        )
    });
    (st, m, valid)
}

/// The 2 KiB kind fixtures with every kind's params made (also points filecoin-proofs' parameter
/// cache at them, through [`fixture`]).
pub fn kind_fixtures() -> cuzk::fixtures::KindFixtures {
    let _ = fixture();
    fixtures::ensure_kind_fixtures_and_params(&fixtures::default_root(), fixtures::DEFAULT_SEED).expect("kind fixtures")
}

/// A PoSt fixture's sectors as filecoin-proofs' verifiers take them.
pub fn replicas(p: &cuzk::fixtures::PoStFixture) -> std::collections::BTreeMap<filecoin_proofs_api::SectorId, filecoin_proofs_api::PublicReplicaInfo> {
    p.sectors.iter().map(|(id, comm_r)| ((*id).into(), filecoin_proofs_api::PublicReplicaInfo::new(p.proof, *comm_r))).collect()
}

/// filecoin-proofs' own verifier of the kind fixture request `name` (as in `KindFixtures::requests`).
pub fn filecoin_verify_kind(k: &cuzk::fixtures::KindFixtures, name: &str, proof: &[u8]) -> bool {
    use filecoin_proofs_api::{post, update};
    let r = match name {
        "winning_post" => post::verify_winning_post(&k.winning.randomness, proof, &replicas(&k.winning), k.winning.prover_id),
        "window_post" => post::verify_window_post(&k.window.randomness, &[(k.window.proof, proof)], &replicas(&k.window), k.window.prover_id),
        "snap_deals" => update::verify_empty_sector_update_proof(k.update.proof, proof, k.update.comm_r_old, k.update.comm_r_new, k.update.comm_d_new),
        other => panic!("no kind fixture named {other}"),
    };
    r.expect("filecoin-proofs verifier errored")
}

/// The three density trackers of an assignment (bits and totals).
pub fn densities(a: &cuzk::synth::Assignment) -> [(Vec<bool>, usize); 3] {
    [&a.a_aux_density, &a.b_aux_density, &a.b_input_density].map(|d| (d.bv.iter().by_vals().collect(), d.total_density))
}

/// Two syntheses of one partition agree value for value: a, b, c, the witness, the densities.
pub fn assert_same_assignment(seq: &cuzk::synth::Assignment, par: &cuzk::synth::Assignment, what: &str) {
    assert_eq!(seq.num_constraints(), par.num_constraints(), "{what}: constraint counts differ");
    assert!(seq.input == par.input, "{what}: public inputs differ");
    assert!(seq.aux == par.aux, "{what}: witness differs");
    assert!(seq.a == par.a, "{what}: A evaluations differ");
    assert!(seq.b == par.b, "{what}: B evaluations differ");
    assert!(seq.c == par.c, "{what}: C evaluations differ");
    assert!(densities(seq) == densities(par), "{what}: densities differ");
}

/// Run `f` on a thread; fail (instead of hanging the suite) if it takes longer than `limit`.
pub fn within<T: Send + 'static>(limit: std::time::Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| panic!("{what} did not return within {limit:?}"))
}
