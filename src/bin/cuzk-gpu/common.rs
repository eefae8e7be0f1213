//! Shared by the subcommands: their options' type, the backend, the 2 KiB fixture, formatting.

pub(crate) use std::time::Instant;

pub(crate) use bellperson::groth16::{generate_random_parameters, verify_proof, Proof};
pub(crate) use blstrs::{Bls12, Scalar};
pub(crate) use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
pub(crate) use cuzk::fixtures;
pub(crate) use cuzk::prover::cuda_synthetic::{self as synthetic, Shape, Toy, WitnessMix};
pub(crate) use cuzk::prover::{Backend, CpuBackend, CudaBackend, PhaseTimings};
pub(crate) use cuzk::kinds::registry::RegisteredSealProof;
pub(crate) use cuzk::srs::{Srs, Validation};
pub(crate) use cuzk::synth::{Assignment, SizeHint};
pub(crate) use ff::Field;
pub(crate) use rand::SeedableRng;
pub(crate) use rand_chacha::ChaCha20Rng;

pub(crate) use crate::cli::Parsed;

pub(crate) const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

pub(crate) fn backend() -> Option<CudaBackend> {
    backend_within(0)
}

/// The backend using at most `budget_mib` MiB of each device (0: what is free at start, less
/// 2 %), so a smaller card's streamed plan runs on a large one.
pub(crate) fn backend_within(budget_mib: u64) -> Option<CudaBackend> {
    let b = if budget_mib == 0 { CudaBackend::new() } else { CudaBackend::with_budget(None, 0, Some(budget_mib << 20)) };
    match b {
        Ok(b) => Some(b),
        Err(e) => {
            println!("SKIP: {}", e.message);
            None
        }
    }
}

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Phase `name`'s time in ms (0 when the proof did not record it).
pub(crate) fn phase_ms(t: &PhaseTimings, name: &str) -> f64 {
    t.0.iter().find(|(n, _)| *n == name).map_or(0.0, |(_, d)| d.as_secs_f64() * 1e3)
}

pub(crate) fn phases_ms(t: &PhaseTimings) -> String {
    t.0.iter().map(|(n, d)| format!("{n}={:.2}", d.as_secs_f64() * 1e3)).collect::<Vec<_>>().join(" ")
}

pub(crate) fn phases_json(t: &PhaseTimings) -> serde_json::Value {
    serde_json::Value::Object(
        t.0.iter().map(|(n, d)| (n.to_string(), serde_json::json!(d.as_secs_f64() * 1e3))).collect(),
    )
}

pub(crate) fn bytes(p: &Proof<Bls12>) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).expect("proof bytes");
    v
}

pub(crate) fn rs(seed: u64) -> (Scalar, Scalar) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

pub(crate) fn probe() -> bool {
    let Some(gpu) = backend() else { return true };
    for i in 0..gpu.device_count() {
        match gpu.device_info(i) {
            Ok(d) => {
                println!("device {i}: {} free {} MiB of {} MiB", d.name, d.free_bytes >> 20, d.total_bytes >> 20)
            }
            Err(e) => println!("device {i}: {e}"),
        }
    }
    true
}

pub(crate) struct Fixture {
    pub params: std::path::PathBuf,
    pub params_dir: std::path::PathBuf,
    pub sector: fixtures::SectorFixture,
    pub c1: Vec<u8>,
}

impl Fixture {
    /// Submit the fixture's C2 to `engine`.
    pub fn submit(&self, engine: &Engine) -> cuzk::error::Result<cuzk::engine::JobId> {
        engine.submit(SubmitRequest {
            c1_json: &self.c1,
            sector_id: self.sector.sector_id,
            prover_id: self.sector.prover_id,
            priority: 0,
            request_id: None,
        })
    }
}

pub(crate) fn fixture() -> cuzk::error::Result<Fixture> {
    let root = fixtures::default_root();
    let params_dir = fixtures::params_dir(&root);
    let t = Instant::now();
    let params = fixtures::ensure_params(&root, PROOF, fixtures::DEFAULT_SEED)?;
    let sector = fixtures::ensure_sector(&root, PROOF, fixtures::DEFAULT_SEED)?;
    let c1 = sector.c1_json()?;
    println!("fixture: {} ready in {:.1}s", params.display(), t.elapsed().as_secs_f64());
    Ok(Fixture { params, params_dir, sector, c1 })
}

/// The WinningPoSt / WindowPoSt / SnapDeals fixtures (carried from the build machine: their
/// sectors take filecoin-proofs to seal) and their params, made here if missing.
pub(crate) fn fixture_kinds() -> bool {
    let root = fixtures::default_root();
    let t = Instant::now();
    let made = fixtures::ensure_kind_fixtures_and_params(&root, fixtures::DEFAULT_SEED).map(drop);
    match made {
        Ok(()) => println!("kind fixtures ready in {:.1}s", t.elapsed().as_secs_f64()),
        Err(ref e) => println!("FAIL: kind fixtures: {e}"),
    }
    made.is_ok()
}

/// The 2 KiB SRS and the synthesized partition 0.
pub(crate) fn load_2kib(f: &Fixture) -> cuzk::error::Result<(Srs, Assignment, f64)> {
    let srs = Srs::load(PROOF, &f.params, Validation::None)?;
    let inputs = cuzk::kinds::porep::parse_c1(&f.c1, &f.sector.prover_id, f.sector.sector_id)?;
    let t = Instant::now();
    let asg = inputs.circuits.synthesize(0, srs.size_hint())?;
    Ok((srs, asg, t.elapsed().as_secs_f64()))
}

/// The fixture, then `load_2kib`; a failure is printed after `fail` ("" or "FAIL ").
pub(crate) fn fixture_2kib(fail: &str) -> Option<(Fixture, Srs, Assignment, f64)> {
    let loaded = fixture().map_err(|e| format!("fixture: {e}")).and_then(|f| {
        let (srs, asg, synth_s) = load_2kib(&f).map_err(|e| format!("2 KiB: {e}"))?;
        Ok((f, srs, asg, synth_s))
    });
    loaded.map_err(|e| println!("{fail}{e}")).ok()
}

pub(crate) fn stats_2kib() -> bool {
    let Some((_f, _srs, asg, synth_s)) = fixture_2kib("") else { return false };
    print_stats(&asg);
    println!("synthesis {synth_s:.2}s");
    true
}

pub(crate) fn print_stats(asg: &Assignment) {
    let st = cuzk::prover::witness_stats(asg).expect("stats");
    println!("constraints {} inputs {} aux {}", asg.a.len(), asg.input.len(), asg.aux.len());
    for (name, (n, z, o, s)) in ["l", "a", "b"].iter().zip(st) {
        let pct = |x: usize| 100.0 * x as f64 / n.max(1) as f64;
        println!(
            "  {name}: {n} bases: zero {z} ({:.1}%), one {o} ({:.1}%), other {s} ({:.1}%)",
            pct(z),
            pct(o),
            pct(s)
        );
    }
}
