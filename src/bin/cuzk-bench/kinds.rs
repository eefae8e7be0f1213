//! `cuzk-bench kinds`: each proof kind at 2 KiB through the cuzk engine vs filecoin-proofs'
//! `*_with_vanilla` on the same inputs, interleaved; then WinningPoSt latency alone and
//! submitted behind a queue of C2 jobs.

use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest, Submission};
use cuzk::fixtures::{self, KindFixtures};
use cuzk::kinds::{CircuitId, PoStRequest, ProofRequest, UpdateRequest};

fn post(p: &fixtures::PoStFixture) -> PoStRequest<'_> {
    PoStRequest {
        proof: p.proof,
        randomness: p.randomness,
        prover_id: p.prover_id,
        vanilla_proofs: p.vanilla_proofs.iter().map(|v| &v[..]).collect(),
    }
}

fn requests(k: &KindFixtures) -> Vec<(&'static str, ProofRequest<'_>)> {
    let u = &k.update;
    vec![
        ("winning_post", ProofRequest::WinningPoSt(post(&k.winning))),
        ("window_post", ProofRequest::WindowPoSt { post: post(&k.window), partition: None }),
        (
            "snap_deals",
            ProofRequest::SnapDeals(UpdateRequest {
                proof: u.proof,
                vanilla_proofs: u.vanilla_proofs.iter().map(|v| &v[..]).collect(),
                comm_r_old: u.comm_r_old,
                comm_r_new: u.comm_r_new,
                comm_d_new: u.comm_d_new,
            }),
        ),
    ]
}

/// filecoin-proofs' own prover on the same inputs.
fn upstream(name: &str, k: &KindFixtures) -> Vec<u8> {
    use filecoin_proofs_api::{post, update, PartitionProofBytes};
    let r = match name {
        "winning_post" => post::generate_winning_post_with_vanilla(k.winning.proof, &k.winning.randomness, k.winning.prover_id, &k.winning.vanilla_proofs)
            .map(|mut v| v.remove(0).1),
        "window_post" => post::generate_window_post_with_vanilla(k.window.proof, &k.window.randomness, k.window.prover_id, &k.window.vanilla_proofs)
            .map(|mut v| v.remove(0).1),
        _ => {
            let u = &k.update;
            let parts = u.vanilla_proofs.iter().cloned().map(PartitionProofBytes).collect();
            update::generate_empty_sector_update_proof_with_vanilla(u.proof, parts, u.comm_r_old, u.comm_r_new, u.comm_d_new).map(|p| p.0)
        }
    };
    r.expect("filecoin-proofs prover")
}

fn prove(engine: &Engine, request: ProofRequest<'_>) -> Duration {
    let t = Instant::now();
    let id = engine.submit_proof(Submission { request, priority: None, request_id: None }).expect("submit");
    let snap = engine.wait(id, None).expect("wait");
    assert_eq!(snap.state, JobState::Done, "{:?}", snap.error);
    t.elapsed()
}

pub fn run(runs: usize) {
    let root = fixtures::default_root();
    let params_dir = fixtures::params_dir(&root);
    // filecoin-proofs reads its params from here (set before its first use).
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
    let k = fixtures::ensure_kind_fixtures(&root, fixtures::DEFAULT_SEED).expect("kind fixtures");
    let circuits: [CircuitId; 3] = [k.winning.proof.into(), k.window.proof.into(), k.update.proof.into()];
    let config = EngineConfig { params_dir: Some(params_dir.clone()), ..Default::default() };
    let engine = Engine::new(config).expect("engine");
    for c in circuits {
        fixtures::ensure_params(&root, c, fixtures::DEFAULT_SEED).expect("params");
        engine.srs_load(c, None).expect("srs");
    }
    let mut summary = serde_json::Map::new();
    summary.insert("backend".into(), engine.backend_name().into());
    for (i, (name, _)) in requests(&k).into_iter().enumerate() {
        let _ = upstream(name, &k); // warm filecoin-proofs' params cache: its first call reads the file
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            ours.push(prove(&engine, requests(&k).swap_remove(i).1).as_secs_f64());
            let t = Instant::now();
            let _ = upstream(name, &k);
            theirs.push(t.elapsed().as_secs_f64());
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (o, t) = (med(&mut ours), med(&mut theirs));
        println!("{name}: cuzk {o:.3} s (proved + verified), filecoin-proofs {t:.3} s (proved), ratio {:.2}x", t / o);
        summary.insert(name.into(), serde_json::json!({"cuzk_s": o, "filecoin_proofs_s": t, "speedup": t / o}));
    }

    // WinningPoSt alone, and behind C2 jobs (submitted first, at their default priority).
    let f = (fixtures::ensure_params(&root, RegisteredProof, fixtures::DEFAULT_SEED), fixtures::ensure_sector(&root, RegisteredProof, fixtures::DEFAULT_SEED));
    let sector = f.1.expect("sector");
    engine.srs_load(RegisteredProof, Some(&f.0.expect("params"))).expect("c2 srs");
    let c1 = sector.c1_json().expect("c1");
    let alone = prove(&engine, requests(&k).swap_remove(0).1).as_secs_f64();
    let c2_jobs = 4;
    let ids: Vec<u64> = (0..c2_jobs)
        .map(|_| {
            engine
                .submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None })
                .expect("c2 submit")
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500)); // the C2 partitions are in synthesis
    let behind = prove(&engine, requests(&k).swap_remove(0).1).as_secs_f64();
    let c2_pending = ids.iter().filter(|id| !engine.poll(**id).map(|s| s.state.is_final()).unwrap_or(true)).count();
    for id in ids {
        let _ = engine.wait(id, None);
    }
    println!("winning_post latency: alone {alone:.3} s, behind {c2_jobs} C2 jobs {behind:.3} s ({c2_pending} C2 jobs still unfinished when it was done)");
    summary.insert("winning_behind_c2".into(), serde_json::json!({"alone_s": alone, "behind_s": behind, "c2_jobs": c2_jobs, "c2_unfinished_at_winning_done": c2_pending}));
    println!("{}", serde_json::Value::Object(summary));
}

#[allow(non_upper_case_globals)]
const RegisteredProof: cuzk::registry::RegisteredSealProof = cuzk::registry::RegisteredSealProof::StackedDrg2KiBV1_1;
