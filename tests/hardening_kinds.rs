//! Hostile and careless input, round 2, through the C ABI: strangers' PoSt and SnapDeals vanilla
//! proofs (a WindowPoSt partition index that allocated without bound, proofs that reached
//! upstream code which panics, WinningPoSt checked at one challenge of 66, paths that do not
//! end at the proof's comm_r_last), another kind's params file, an SRS evicted while its
//! circuit was being recorded, an unbounded job queue, and config that is not an object or
//! names a device that does not exist. Each test failed on the main before its fix.
//!
//! The malformed proofs are the real 2 KiB fixtures edited in place: [`Layout`] walks
//! upstream's bincode layout to find each field, and checks the walk against the decoded proof.

mod common;

use std::ffi::{CStr, CString};
use std::ptr;
use std::time::{Duration, Instant};

use cuzk::error::Status;
use cuzk::ffi::*;
use cuzk::fixtures::{KindFixtures, PoStFixture, UpdateFixture};
use cuzk::kinds::registry::{post_to_number, update_to_number};
use serde_json::Value;

// ---- the bincode layout of vanilla proofs (fixint, little-endian, as filecoin-ffi hands them over)

/// One single-tree Merkle proof (2 KiB trees have no sub or top level) inside a vanilla proof.
struct Merkle {
    start: usize,
    end: usize,
    leaf: usize,
    /// Per path level: (offset of the first sibling, sibling count, offset of the u64 index).
    levels: Vec<(usize, usize, usize)>,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u64(&mut self) -> usize {
        let v = u64::from_le_bytes(self.b[self.at..self.at + 8].try_into().unwrap());
        self.at += 8;
        v as usize
    }
    fn element(&mut self) -> usize {
        self.at += 32;
        self.at - 32
    }
    /// `MerkleProof { data: ProofData::Single(SingleProof { root, leaf, path }) }`.
    fn merkle(&mut self) -> Merkle {
        let start = self.at;
        assert_eq!(&self.b[self.at..self.at + 4], &[0, 0, 0, 0], "a Single proof (variant 0)");
        self.at += 4;
        self.element(); // root
        let leaf = self.element();
        let n = self.u64();
        let levels = (0..n)
            .map(|_| {
                let count = self.u64();
                let first = self.at;
                self.at += 32 * count;
                let index = self.at;
                self.at += 8;
                (first, count, index)
            })
            .collect();
        Merkle { start, end: self.at, leaf, levels }
    }
}

/// `FallbackPoStSectorProof { sector_id, comm_r, vanilla_proof: { sectors: [SectorProof {
/// inclusion_proofs, comm_c, comm_r_last }] } }`.
struct PoStLayout {
    comm_r: usize,
    proofs_count: usize,
    proofs: Vec<Merkle>,
    comm_c: usize,
    comm_r_last: usize,
}

fn post_layout(b: &[u8]) -> PoStLayout {
    let mut r = Reader { b, at: 8 };
    let comm_r = r.element();
    assert_eq!(r.u64(), 1, "one sector proof");
    let proofs_count = r.at;
    let n = r.u64();
    let proofs = (0..n).map(|_| r.merkle()).collect();
    let (comm_c, comm_r_last) = (r.element(), r.element());
    assert_eq!(r.at, b.len(), "the walk covers the whole vanilla proof");
    PoStLayout { comm_r, proofs_count, proofs, comm_c, comm_r_last }
}

/// `PartitionProof { comm_c, apex_leafs, challenge_proofs: [{ proof_r_old, proof_d_new, proof_r_new }] }`.
struct UpdateLayout {
    comm_c: usize,
    apex: Vec<usize>,
    challenges: Vec<[Merkle; 3]>,
}

fn update_layout(b: &[u8]) -> UpdateLayout {
    let mut r = Reader { b, at: 0 };
    let comm_c = r.element();
    let apex = (0..r.u64()).map(|_| r.element()).collect();
    let challenges = (0..r.u64()).map(|_| [r.merkle(), r.merkle(), r.merkle()]).collect();
    assert_eq!(r.at, b.len(), "the walk covers the whole partition proof");
    UpdateLayout { comm_c, apex, challenges }
}

/// The walk agrees with upstream's decoding of the fixtures.
fn check_layouts(k: &KindFixtures) {
    use filecoin_proofs::constants::SectorShapeBase;
    use storage_proofs_core::merkle::MerkleProofTrait;
    for b in k.winning.vanilla_proofs.iter().chain(&k.window.vanilla_proofs) {
        let p: filecoin_proofs::types::FallbackPoStSectorProof<SectorShapeBase> = bincode::deserialize(b).unwrap();
        let l = post_layout(b);
        let sp = &p.vanilla_proof.sectors[0];
        assert_eq!(&b[l.comm_c..l.comm_c + 32], AsRef::<[u8]>::as_ref(&sp.comm_c));
        assert_eq!(&b[l.comm_r..l.comm_r + 32], AsRef::<[u8]>::as_ref(&p.comm_r));
        for (m, ip) in l.proofs.iter().zip(&sp.inclusion_proofs) {
            assert_eq!(&b[m.leaf..m.leaf + 32], AsRef::<[u8]>::as_ref(&ip.leaf()));
            assert_eq!(m.levels.iter().map(|(_, _, i)| b[*i] as usize).collect::<Vec<_>>(), ip.path().iter().map(|(_, i)| *i).collect::<Vec<_>>());
        }
    }
    let p: storage_proofs_update::PartitionProof<SectorShapeBase> = bincode::deserialize(&k.update.vanilla_proofs[0]).unwrap();
    let l = update_layout(&k.update.vanilla_proofs[0]);
    assert_eq!(l.apex.len(), p.apex_leafs.len());
    assert_eq!(l.challenges.len(), p.challenge_proofs.len());
}

fn set(b: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    v[at..at + bytes.len()].copy_from_slice(bytes);
    v
}

/// 32 bytes that are not a field element (above the BLS12-381 scalar modulus).
const NOT_A_FIELD_ELEMENT: [u8; 32] = [0xff; 32];

// ---- the engine through the C ABI

struct Engine(*mut cuzk_engine);

impl Drop for Engine {
    fn drop(&mut self) {
        unsafe { cuzk_engine_free(self.0) };
    }
}

fn engine(extra: &str) -> Engine {
    let params_dir = cuzk::fixtures::params_dir(&cuzk::fixtures::default_root());
    let cfg = CString::new(format!(r#"{{"backend": "cpu", "params_dir": {:?}{extra}}}"#, params_dir.display().to_string())).unwrap();
    let mut e = ptr::null_mut();
    let (st, m) = common::call(|err| unsafe { cuzk_engine_new(cfg.as_ptr(), &mut e, err) });
    assert_eq!(st, Status::Ok, "{m}");
    Engine(e)
}

/// An engine with the three kinds' SRSes loaded, and the fixtures.
fn setup() -> (Engine, KindFixtures) {
    let k = common::kind_fixtures();
    let e = engine("");
    for (kind, n) in [
        (CUZK_KIND_WINNING_POST, post_to_number(k.winning.proof)),
        (CUZK_KIND_WINDOW_POST, post_to_number(k.window.proof)),
        (CUZK_KIND_SNAP_DEALS, update_to_number(k.update.proof)),
    ] {
        let (st, m) = common::call(|err| unsafe { cuzk_srs_load_kind(e.0, kind, n, ptr::null(), ptr::null_mut(), err) });
        assert_eq!(st, Status::Ok, "{m}");
    }
    check_layouts(&k);
    (e, k)
}

/// (status, message, faulty sectors, job id) of a call that may fail with a sector list.
fn call_listing(f: impl FnOnce(*mut *mut cuzk_error) -> Status) -> (Status, String, Vec<u64>) {
    let mut err = ptr::null_mut();
    let st = f(&mut err);
    if err.is_null() {
        return (st, String::new(), Vec::new());
    }
    let m = unsafe { CStr::from_ptr(cuzk_error_message(err)).to_string_lossy().into_owned() };
    let (mut p, mut n) = (ptr::null(), 0usize);
    let sectors = match unsafe { cuzk_error_sectors(err, &mut p, &mut n) } {
        Status::Ok if n > 0 => unsafe { std::slice::from_raw_parts(p, n) }.to_vec(),
        _ => Vec::new(),
    };
    unsafe { cuzk_error_free(err) };
    (st, m, sectors)
}

fn bytes_list(v: &[Vec<u8>]) -> Vec<cuzk_bytes> {
    v.iter().map(|b| cuzk_bytes { ptr: b.as_ptr(), len: b.len() }).collect()
}

fn winning(e: &Engine, w: &PoStFixture, vanilla: &[Vec<u8>]) -> (Status, String, Vec<u64>, u64) {
    let v = bytes_list(vanilla);
    let mut id = 0;
    let (st, m, s) = call_listing(|err| unsafe {
        cuzk_submit_winning_post(e.0, post_to_number(w.proof), w.randomness.as_ptr(), w.prover_id.as_ptr(), v.as_ptr(), v.len(), CUZK_PRIORITY_DEFAULT, ptr::null(), &mut id, err)
    });
    (st, m, s, id)
}

fn window(e: &Engine, d: &PoStFixture, vanilla: &[Vec<u8>], partition: i64) -> (Status, String, Vec<u64>, u64) {
    let v = bytes_list(vanilla);
    let mut id = 0;
    let (st, m, s) = call_listing(|err| unsafe {
        cuzk_submit_window_post(
            e.0,
            post_to_number(d.proof),
            d.randomness.as_ptr(),
            d.prover_id.as_ptr(),
            v.as_ptr(),
            v.len(),
            partition,
            CUZK_PRIORITY_DEFAULT,
            ptr::null(),
            &mut id,
            err,
        )
    });
    (st, m, s, id)
}

fn update(e: &Engine, u: &UpdateFixture, vanilla: &[Vec<u8>]) -> (Status, String) {
    let v = bytes_list(vanilla);
    let mut id = 0;
    let (st, m, _) = call_listing(|err| unsafe {
        cuzk_submit_snap_deals(e.0, update_to_number(u.proof), v.as_ptr(), v.len(), u.comm_r_old.as_ptr(), u.comm_r_new.as_ptr(), u.comm_d_new.as_ptr(), 0, ptr::null(), &mut id, err)
    });
    if st == Status::Ok {
        unsafe { cuzk_job_cancel(e.0, id, ptr::null_mut(), ptr::null_mut()) };
    }
    (st, m)
}

fn wait_done(e: &Engine, id: u64) {
    let (mut proof, mut state) = (ptr::null_mut(), -1);
    let (st, m) = common::call(|err| unsafe { cuzk_job_wait(e.0, id, 600_000, &mut state, &mut proof, err) });
    assert_eq!(st, Status::Ok, "{m}");
    unsafe { cuzk_proof_free(proof) };
}

fn status(e: &Engine) -> Value {
    let mut s = ptr::null_mut();
    assert_eq!(unsafe { cuzk_engine_status_json(e.0, &mut s, ptr::null_mut()) }, Status::Ok);
    let v = serde_json::from_str(&unsafe { CStr::from_ptr(s) }.to_string_lossy()).unwrap();
    unsafe { cuzk_string_free(s) };
    v
}

// ---- the tests

/// A partition index is bounded by the partitions a deadline holds (3000) and checked before
/// anything is allocated; partition k's public inputs need no placeholder for the k × 2349
/// sectors before it, so the last partition a deadline holds proves like the first.
#[test]
fn a_window_post_partition_index_is_bounded_before_any_allocation() {
    let (e, k) = setup();
    let d = &k.window;
    for index in [3000i64, 1 << 20, 1 << 40, 1 << 62, i64::MAX] {
        let (st, m, _, _) = window(&e, d, &d.vanilla_proofs[..1], index);
        assert_eq!(st, Status::InvalidArgument, "partition {index}: {m}");
        assert!(m.contains("partition index") && m.contains("2999"), "{m}");
    }
    // V1_2 challenges do not depend on the partition: the fixture's first two sectors are a
    // valid partition 2999; the engine proves and verifies it against upstream's inputs.
    let (st, m, _, id) = window(&e, d, &d.vanilla_proofs[..2], 2999);
    assert_eq!(st, Status::Ok, "{m}");
    wait_done(&e, id);
}

/// Malformed vanilla proofs — counts, path shapes, indices, elements that are not field
/// elements — are INVALID_INPUT naming where, before any upstream code reads them; malformed
/// commitments at verify are INVALID_ARGUMENT. None of them may reach a panic.
#[test]
fn malformed_vanilla_proofs_are_invalid_input_never_panic() {
    let (e, k) = setup();
    let (w, d, u) = (&k.winning, &k.window, &k.update);

    // WinningPoSt.
    let b = &w.vanilla_proofs[0];
    let l = post_layout(b);
    let m0 = &l.proofs[0];
    let (level0_first, _, level0_index) = m0.levels[0];
    let mut none = b[..l.proofs_count].to_vec(); // no inclusion proofs at all
    none.extend_from_slice(&0u64.to_le_bytes());
    none.extend_from_slice(&b[l.comm_c..]);
    let mut fewer = b[..l.proofs_count].to_vec(); // one inclusion proof short
    fewer.extend_from_slice(&(l.proofs.len() as u64 - 1).to_le_bytes());
    fewer.extend_from_slice(&b[l.proofs[0].start..l.proofs[l.proofs.len() - 2].end]);
    fewer.extend_from_slice(&b[l.comm_c..]);
    let mut no_level = b[..m0.start + 68].to_vec(); // the first proof's path without its levels
    no_level.extend_from_slice(&0u64.to_le_bytes());
    no_level.extend_from_slice(&b[m0.end..]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("no inclusion proofs", none, "0 inclusion proofs"),
        ("one inclusion proof short", fewer, "inclusion proofs"),
        ("a path without levels", no_level, "path levels"),
        ("index past its level", set(b, level0_index, &8u64.to_le_bytes()), "index 8"),
        ("huge index", set(b, level0_index, &u64::MAX.to_le_bytes()), "level 0"),
        ("leaf", set(b, m0.leaf, &NOT_A_FIELD_ELEMENT), "leaf"),
        ("sibling", set(b, level0_first, &NOT_A_FIELD_ELEMENT), "sibling"),
        ("comm_c", set(b, l.comm_c, &NOT_A_FIELD_ELEMENT), "comm_c"),
        ("comm_r_last", set(b, l.comm_r_last, &NOT_A_FIELD_ELEMENT), "comm_r_last"),
        ("comm_r", set(b, l.comm_r, &NOT_A_FIELD_ELEMENT), "comm_r"),
        ("a sub-tree proof for a 2 KiB tree", set(b, m0.start, &1u32.to_le_bytes()), ""),
    ];
    for (what, bad, names) in cases {
        let (st, m, _, _) = winning(&e, w, &[bad]);
        assert_eq!(st, Status::InvalidInput, "WinningPoSt, {what}: {m}");
        assert!(m.contains(names), "WinningPoSt, {what}: {m}");
    }

    // WindowPoSt: the second sector's proof broken, every partition and one by index.
    let b = &d.vanilla_proofs[1];
    let l = post_layout(b);
    let (_, _, index) = l.proofs[3].levels[1];
    for (what, bad) in [
        ("comm_c", set(b, l.comm_c, &NOT_A_FIELD_ELEMENT)),
        ("index", set(b, index, &9u64.to_le_bytes())),
        ("leaf", set(b, l.proofs[9].leaf, &NOT_A_FIELD_ELEMENT)),
    ] {
        let mut v = d.vanilla_proofs.clone();
        v[1] = bad;
        for partition in [-1, 0] {
            let v = if partition < 0 { &v[..] } else { &v[..2] };
            let (st, m, _, _) = window(&e, d, v, partition);
            assert_eq!(st, Status::InvalidInput, "WindowPoSt {partition}, {what}: {m}");
            assert!(m.contains("vanilla proof 1") && m.contains(what), "WindowPoSt, {what}: {m}");
        }
    }

    // SnapDeals.
    let b = &u.vanilla_proofs[0];
    let l = update_layout(b);
    let c = &l.challenges[2];
    for (what, bad) in [
        ("comm_c", set(b, l.comm_c, &NOT_A_FIELD_ELEMENT)),
        ("apex leaf 1", set(b, l.apex[1], &NOT_A_FIELD_ELEMENT)),
        ("challenge 2 proof_r_old leaf", set(b, c[0].leaf, &NOT_A_FIELD_ELEMENT)),
        ("challenge 2 proof_d_new level 0", set(b, c[1].levels[0].2, &2u64.to_le_bytes())),
        ("challenge 2 proof_r_new level 1 sibling", set(b, c[2].levels[1].0, &NOT_A_FIELD_ELEMENT)),
    ] {
        let (st, m) = update(&e, u, &[bad]);
        assert_eq!(st, Status::InvalidInput, "SnapDeals, {what}: {m}");
        assert!(m.contains(what), "SnapDeals, {what}: {m}");
    }

    // Verification: commitments that are not field elements.
    let proof = [0u8; 192];
    let mut valid = false;
    for kind in ["winning", "window"] {
        let p = if kind == "winning" { w } else { d };
        let s = vec![cuzk_sector { sector_id: p.sectors[0].0, comm_r: NOT_A_FIELD_ELEMENT }];
        let (st, m) = common::call(|err| unsafe {
            let f = if kind == "winning" { cuzk_verify_winning_post } else { cuzk_verify_window_post };
            f(e.0, post_to_number(p.proof), p.randomness.as_ptr(), p.prover_id.as_ptr(), s.as_ptr(), s.len(), proof.as_ptr(), 192, &mut valid, err)
        });
        assert_eq!(st, Status::InvalidArgument, "{kind}: {m}");
        assert!(m.contains("comm_r"), "{m}");
    }
    for which in 0..3 {
        let mut c = [u.comm_r_old, u.comm_r_new, u.comm_d_new];
        c[which] = NOT_A_FIELD_ELEMENT;
        let (st, m) = common::call(|err| unsafe {
            cuzk_verify_snap_deals(e.0, update_to_number(u.proof), c[0].as_ptr(), c[1].as_ptr(), c[2].as_ptr(), proof.as_ptr(), 192, &mut valid, err)
        });
        assert_eq!(st, Status::InvalidArgument, "commitment {which}: {m}");
        assert!(m.contains(["comm_r_old", "comm_r_new", "comm_d_new"][which]), "{m}");
    }
}

/// Every challenge of a WinningPoSt sector, and that every path ends at the comm_r_last the
/// circuit is given, are checked before synthesis: a bad sector is FAULTY_SECTORS listing it
/// (and only it), not a job that fails VERIFICATION after a whole proof.
#[test]
fn every_challenge_and_comm_r_last_are_checked_before_synthesis() {
    let (e, k) = setup();
    let (w, d) = (&k.winning, &k.window);

    // WinningPoSt: challenge 5's path replaced by a valid path of the same sector to another
    // leaf (from its WindowPoSt vanilla proof). Upstream's vanilla check looks at challenge 0.
    let sector = w.sectors[0].0;
    let at = d.sectors.iter().position(|s| s.0 == sector).expect("the winning sector is among the window fixture's");
    let (wb, db) = (&w.vanilla_proofs[0], &d.vanilla_proofs[at]);
    let (wl, dl) = (post_layout(wb), post_layout(db));
    let (dst, src) = (&wl.proofs[5], &dl.proofs[0]);
    assert_eq!(dst.end - dst.start, src.end - src.start);
    let swapped = set(wb, dst.start, &db[src.start..src.end]);
    let (st, m, sectors, _) = winning(&e, w, &[swapped]);
    assert_eq!((st, sectors), (Status::FaultySectors, vec![sector]), "{m}");

    // WindowPoSt: one sector's comm_r_last is not where its paths lead (comm_r = H(comm_c,
    // root) still holds for the paths' root); only that sector is listed.
    let b = &d.vanilla_proofs[1];
    let l = post_layout(b);
    let mut v = d.vanilla_proofs.clone();
    v[1] = set(b, l.comm_r_last, &b[l.comm_c..l.comm_c + 32].to_vec());
    let (st, m, sectors, _) = window(&e, d, &v, -1);
    assert_eq!((st, sectors), (Status::FaultySectors, vec![d.sectors[1].0]), "{m}");
    // The untouched proofs still prove.
    let (st, m, _, id) = window(&e, d, &d.vanilla_proofs, -1);
    assert_eq!(st, Status::Ok, "{m}");
    wait_done(&e, id);
}

/// `cuzk_srs_load_kind` refuses a params file of another circuit for every kind.
#[test]
fn another_circuits_params_are_refused_at_load() {
    let k = common::kind_fixtures();
    let f = common::fixture();
    let e = engine("");
    let file = |c: cuzk::kinds::CircuitId| CString::new(f.params_dir.join(c.params_file_name().unwrap()).to_str().unwrap()).unwrap();
    let (winning, window, snap) = (k.winning.proof.into(), k.window.proof.into(), k.update.proof.into());
    let seal: cuzk::kinds::CircuitId = common::PROOF.into();
    for (kind, number, loads) in [
        (CUZK_KIND_WINNING_POST, post_to_number(k.winning.proof), window),
        (CUZK_KIND_WINDOW_POST, post_to_number(k.window.proof), snap),
        (CUZK_KIND_SNAP_DEALS, update_to_number(k.update.proof), winning),
        (CUZK_KIND_POREP, common::PROOF_NUMBER, winning),
        (CUZK_KIND_WINNING_POST, post_to_number(k.winning.proof), seal),
    ] {
        let path = file(loads);
        let (st, m) = common::call(|err| unsafe { cuzk_srs_load_kind(e.0, kind, number, path.as_ptr(), ptr::null_mut(), err) });
        assert_eq!(st, Status::SrsLoad, "kind {kind} given {}'s params: {m}", loads.name());
        assert!(m.contains("not the params of"), "{m}");
    }
}

/// Evicting an SRS while its circuit is being recorded stops the recording and leaves nothing
/// resident: the circuit never lands (before, it stayed for good and could be uploaded to VRAM).
#[test]
fn evicting_while_the_circuit_is_recorded_leaves_nothing_behind() {
    let f = common::fixture();
    let e = engine("");
    let (st, m) = common::call(|err| unsafe { cuzk_srs_load(e.0, common::PROOF_NUMBER, ptr::null(), ptr::null_mut(), err) });
    assert_eq!(st, Status::Ok, "{m}");
    let mut id = 0;
    let (st, m) = common::call(|err| unsafe {
        cuzk_submit_porep_c2(e.0, f.c1.as_ptr(), f.c1.len(), f.sector.sector_id, f.sector.prover_id.as_ptr(), 0, ptr::null(), &mut id, err)
    });
    assert_eq!(st, Status::Ok, "{m}");
    let circuits = |e: &Engine| status(e)["circuits"].as_array().unwrap().clone();
    assert_eq!(circuits(&e)[0]["state"], "recording", "the first job starts the recording");
    let (st, m) = common::call(|err| unsafe { cuzk_srs_evict(e.0, common::PROOF_NUMBER, ptr::null_mut(), err) });
    assert_eq!(st, Status::Ok, "{m}");
    unsafe { cuzk_job_cancel(e.0, id, ptr::null_mut(), ptr::null_mut()) };
    let t = Instant::now();
    loop {
        let c = circuits(&e);
        assert!(c.iter().all(|c| c["state"] != "ready"), "an evicted SRS's circuit landed: {c:?}");
        if c.is_empty() {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(300), "the recording never ended: {c:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Accepted, unfinished work is bounded (jobs and input bytes): past a bound a submit is
/// QUEUE_FULL, counted in status and metrics, and nothing accepted is lost; a job that ends
/// makes room; the same request id still answers with its job.
#[test]
fn the_queue_is_bounded_and_loses_nothing() {
    let f = common::fixture();
    let e = engine(r#", "max_queued_jobs": 3, "synthesis_workers": 1"#);
    let (st, m) = common::call(|err| unsafe { cuzk_srs_load(e.0, common::PROOF_NUMBER, ptr::null(), ptr::null_mut(), err) });
    assert_eq!(st, Status::Ok, "{m}");
    let submit = |rid: &str| {
        let rid = CString::new(rid).unwrap();
        let mut id = 0;
        let (st, m) = common::call(|err| unsafe {
            cuzk_submit_porep_c2(e.0, f.c1.as_ptr(), f.c1.len(), f.sector.sector_id, f.sector.prover_id.as_ptr(), 0, rid.as_ptr(), &mut id, err)
        });
        (st, m, id)
    };
    let ids: Vec<u64> = (0..3).map(|i| submit(&format!("job-{i}"))).map(|(st, m, id)| if st == Status::Ok { id } else { panic!("{m}") }).collect();
    let (st, m, _) = submit("job-3");
    assert_eq!(st, Status::QueueFull, "{m}");
    assert!(m.contains("max_queued_jobs"), "{m}");
    assert_eq!(submit("job-1").2, ids[1], "a known request id still answers with its job");
    let s = status(&e);
    assert_eq!((s["queue"]["jobs"].as_u64(), s["queue"]["max_jobs"].as_u64(), s["queue"]["refused"].as_u64()), (Some(3), Some(3), Some(1)), "{s}");
    let mut text = ptr::null_mut();
    assert_eq!(unsafe { cuzk_engine_metrics(e.0, &mut text, ptr::null_mut()) }, Status::Ok);
    let metrics = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    unsafe { cuzk_string_free(text) };
    assert!(metrics.contains("cuzk_jobs_refused_total 1") && metrics.contains("cuzk_queue_jobs 3"), "{metrics}");
    // Nothing accepted was lost: the three jobs are still there; cancelling one makes room.
    for id in &ids {
        let mut state = -1;
        let (st, _) = common::call(|err| unsafe { cuzk_job_poll(e.0, *id, &mut state, ptr::null_mut(), err) });
        assert!(st == Status::Ok && (state == 0 || state == 1), "job {id}: {st:?} {state}");
    }
    unsafe { cuzk_job_cancel(e.0, ids[2], ptr::null_mut(), ptr::null_mut()) };
    let t = Instant::now();
    let id = loop {
        match submit("job-4") {
            (Status::Ok, _, id) => break id,
            (Status::QueueFull, _, _) if t.elapsed() < Duration::from_secs(30) => std::thread::sleep(Duration::from_millis(20)),
            (st, m, _) => panic!("{st:?}: {m}"),
        }
    };
    for id in [ids[0], ids[1], id] {
        unsafe { cuzk_job_cancel(e.0, id, ptr::null_mut(), ptr::null_mut()) };
    }

    // The input-bytes bound: 1 MiB holds a few 2 KiB C1 outputs, not more.
    let e = engine(r#", "max_queued_input_mib": 1"#);
    let (st, m) = common::call(|err| unsafe { cuzk_srs_load(e.0, common::PROOF_NUMBER, ptr::null(), ptr::null_mut(), err) });
    assert_eq!(st, Status::Ok, "{m}");
    let fits = (1 << 20) / f.c1.len();
    for i in 0..=fits {
        let mut id = 0;
        let (st, m) = common::call(|err| unsafe {
            cuzk_submit_porep_c2(e.0, f.c1.as_ptr(), f.c1.len(), f.sector.sector_id, f.sector.prover_id.as_ptr(), 0, ptr::null(), &mut id, err)
        });
        if i < fits {
            assert_eq!(st, Status::Ok, "job {i} of {fits}: {m}");
        } else {
            assert_eq!(st, Status::QueueFull, "job {i} of {fits}: {m}");
            assert!(m.contains("max_queued_input_mib"), "{m}");
        }
    }
}

/// The config is a JSON object, never filled by position from an array; a device that does not
/// exist is an error on every path (also where no CUDA device, or no CUDA backend, is there).
#[test]
fn config_is_an_object_and_devices_must_exist() {
    for (cfg, names) in [("[]", "object"), (r#"["cpu"]"#, "object"), (r#"["auto", [0]]"#, "object"), ("7", "object"), (r#"{"devices": [7]}"#, "devices")] {
        let c = CString::new(cfg).unwrap();
        let mut e = ptr::null_mut();
        let (st, m) = common::call(|err| unsafe { cuzk_engine_new(c.as_ptr(), &mut e, err) });
        assert_eq!(st, Status::InvalidArgument, "{cfg}: {m}");
        assert!(m.contains(names), "{cfg}: {m}");
        assert!(e.is_null());
    }
}

/// The header's out-param rule: a failed call leaves every out-param as it was, except that
/// poll and wait also report the state of a job whose own failure they return.
#[test]
fn out_params_are_written_only_on_success_but_a_failed_jobs_state() {
    let e = engine("");
    let (mut id, mut state, mut proof) = (77u64, -9i32, 0x5 as *mut cuzk_proof);
    let bad = [1u8; 10];
    let zero = [0u8; 32];
    let (st, _) = common::call(|err| unsafe { cuzk_submit_porep_c2(e.0, bad.as_ptr(), bad.len(), 1, zero.as_ptr(), 0, ptr::null(), &mut id, err) });
    assert_ne!(st, Status::Ok);
    assert_eq!(id, 77, "a failed submit wrote its out-param");
    let (st, _) = common::call(|err| unsafe { cuzk_job_poll(e.0, 424242, &mut state, &mut proof, err) });
    assert_eq!(st, Status::UnknownJob);
    assert_eq!((state, proof as usize), (-9, 0x5), "a failed poll wrote its out-params");
    // A cancelled job: poll returns CANCELLED and still says so in *out_state; no proof.
    let f = common::fixture();
    let (st, m) = common::call(|err| unsafe { cuzk_srs_load(e.0, common::PROOF_NUMBER, ptr::null(), ptr::null_mut(), err) });
    assert_eq!(st, Status::Ok, "{m}");
    let (st, m) = common::call(|err| unsafe {
        cuzk_submit_porep_c2(e.0, f.c1.as_ptr(), f.c1.len(), f.sector.sector_id, f.sector.prover_id.as_ptr(), 0, ptr::null(), &mut id, err)
    });
    assert_eq!(st, Status::Ok, "{m}");
    unsafe { cuzk_job_cancel(e.0, id, ptr::null_mut(), ptr::null_mut()) };
    let (st, _) = common::call(|err| unsafe { cuzk_job_poll(e.0, id, &mut state, &mut proof, err) });
    assert_eq!((st, state, proof as usize), (Status::Cancelled, 4, 0x5));
    assert_eq!(CUZK_PROOF_BYTES, 192);
}
