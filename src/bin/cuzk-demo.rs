//! The main job on an embedded default: generate (or reuse) the 2 KiB test fixtures, load the
//! SRS, prove the sector's C1 output through the engine, verify, print proof and timings.

use std::process::ExitCode;
use std::time::Instant;

use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use cuzk::fixtures;
use cuzk::kinds::registry::{self, RegisteredSealProof};
use cuzk::kinds::porep::SealStatement;

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(cuzk::DEFAULT_LOG_FILTER)).init();
    let proof = RegisteredSealProof::StackedDrg2KiBV1_1;
    let run = || -> cuzk::error::Result<()> {
        let root = fixtures::default_root();
        println!("fixtures: {} (first run generates 2 KiB params: ~2 min on 2 cores)", root.display());
        fixtures::ensure_params(&root, proof, fixtures::DEFAULT_SEED)?;
        let sector = fixtures::ensure_sector(&root, proof, fixtures::DEFAULT_SEED)?;
        let c1 = sector.c1_json()?;

        let engine = Engine::new(EngineConfig { params_dir: Some(fixtures::params_dir(&root)), ..Default::default() })?;
        let srs = engine.srs_load(proof, None)?;
        println!(
            "SRS {} loaded in {:.2}s ({} MiB resident); backend {}",
            registry::seal_name(proof),
            srs.load_time.as_secs_f64(),
            srs.resident_bytes >> 20,
            engine.backend_name()
        );
        let t = Instant::now();
        let id = engine.submit(SubmitRequest {
            c1_json: &c1,
            sector_id: sector.sector_id,
            prover_id: sector.prover_id,
            priority: 0,
            request_id: None,
        })?;
        let snap = engine.wait(id, None)?;
        if snap.state != JobState::Done {
            return Err(snap.error.unwrap_or_else(|| cuzk::err!(Internal, "job ended in state {:?}", snap.state)));
        }
        let result = snap.result.expect("done job has a result");
        let st = SealStatement {
            proof_type: proof,
            comm_r: sector.comm_r,
            comm_d: sector.comm_d,
            prover_id: sector.prover_id,
            sector_id: sector.sector_id,
            ticket: sector.ticket,
            seed: sector.seed,
        };
        let valid = engine.verify_seal(&st, &result.proof)?;
        let hex: String = result.proof.iter().map(|b| format!("{b:02x}")).collect();
        println!("sector {} proved in {:.2}s; verified: {valid}", sector.sector_id, t.elapsed().as_secs_f64());
        println!("proof ({} bytes): {hex}", result.proof.len());
        println!("timings: {}", cuzk::engine::result_json(&result));
        if valid {
            Ok(())
        } else {
            Err(cuzk::err!(Verification, "proof did not verify"))
        }
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cuzk-demo: {e}");
            ExitCode::FAILURE
        }
    }
}
