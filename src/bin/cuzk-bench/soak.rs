//! Soak: many small proofs through one engine, the process's resources sampled as it goes. A
//! leak of threads, file descriptors, memory-budget reservations or heap shows as growth between
//! the first and the last sample (RSS after the first samples' warm-up).

use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::Bls12;
use cuzk::engine::{Engine, EngineConfig, JobState};
use cuzk::error::{Result, ResultExt, Status};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::srs::Srs;
use cuzk::kinds::porep::SealJobInputs;
use cuzk::synth::{Assignment, PartitionCircuits, SizeHint, Toy};

/// One partition: the synthetic PoRep-like circuit.
struct ToySector(Toy);

impl PartitionCircuits for ToySector {
    fn partitions(&self) -> usize {
        1
    }

    fn synthesize(&self, _k: usize, hint: SizeHint) -> Result<Assignment> {
        Assignment::synthesize(self.0.clone(), hint).status(Status::Synthesis, "toy circuit")
    }
}

use crate::sample::sample;

pub fn run(jobs: usize, constraints: usize) {
    let toy = Toy { constraints, inputs: 2, mode: 2 };
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
    let params = bellperson::groth16::generate_random_parameters::<Bls12, _, _>(toy.clone(), &mut rng).expect("params");
    let srs = Arc::new(Srs::from_parameters(RegisteredSealProof::StackedDrg2KiBV1_1, params));
    let circuits: Arc<dyn PartitionCircuits> = Arc::new(ToySector(toy));
    // A short job TTL: finished jobs are forgotten as the run goes, as a long-running node's are.
    let config = EngineConfig { backend: "cpu".into(), verify: false, job_ttl_secs: 20, ..Default::default() };
    let engine = Engine::new(config).expect("engine");
    let inputs = || SealJobInputs {
        proof: RegisteredSealProof::StackedDrg2KiBV1_1,
        comm_r: [1; 32],
        comm_d: [1; 32],
        seed: [1; 32],
        ticket: [1; 32],
        circuits: circuits.clone(),
    };

    let t0 = Instant::now();
    let mut samples = vec![sample(&engine, 0, None)];
    let (mut done, mut cancelled) = (0, 0);
    let mut in_flight = std::collections::VecDeque::new();
    let bar = cuzk::progress::bar::steps(jobs as u64, "soak: jobs ended");
    for i in 0..jobs {
        in_flight.push_back((i, engine.submit_circuits(cuzk::kinds::seal_inputs(inputs(), [0; 32], 0), srs.clone(), 0).expect("submit")));
        if i % 10 == 9 {
            let (_, id) = *in_flight.back().unwrap();
            let _ = engine.cancel(id);
        }
        while in_flight.len() >= 16 || (i + 1 == jobs && !in_flight.is_empty()) {
            let (k, id) = in_flight.pop_front().unwrap();
            let snap = engine.wait(id, Some(Duration::from_secs(600))).expect("wait");
            match snap.state {
                JobState::Done => done += 1,
                JobState::Cancelled => cancelled += 1,
                other => panic!("soak job {k} ended {other:?}: {:?}", snap.error),
            }
            bar.inc(1);
        }
        if (i + 1) % 100 == 0 {
            samples.push(sample(&engine, i + 1, None));
            let s = samples.last().unwrap();
            bar.suspend(|| {
                eprintln!("soak: {} jobs, RSS {} MiB, {} threads, {} fds, {:?}", s.jobs, s.rss_kib >> 10, s.threads, s.fds, t0.elapsed())
            });
        }
    }
    bar.finish_and_clear();
    // Let the deallocator finish, then the last sample.
    let t = Instant::now();
    while sample(&engine, jobs, None).reserved != 0 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let last = sample(&engine, jobs, None);
    samples.push(last);
    // The first sample after 100 jobs is the baseline: thread pools and allocator arenas are up.
    let warm = samples.get(1).copied().unwrap_or(samples[0]);
    let flat = last.threads == warm.threads && last.fds == warm.fds && last.reserved == 0;
    let rss_growth = last.rss_kib as f64 / warm.rss_kib.max(1) as f64;
    println!(
        "{}",
        serde_json::json!({
            "bench": "soak",
            "jobs": jobs,
            "constraints": constraints,
            "done": done,
            "cancelled": cancelled,
            "seconds": t0.elapsed().as_secs_f64(),
            "rss_mib": samples.iter().map(|s| s.rss_kib >> 10).collect::<Vec<_>>(),
            "threads": samples.iter().map(|s| s.threads).collect::<Vec<_>>(),
            "fds": samples.iter().map(|s| s.fds).collect::<Vec<_>>(),
            "reserved_bytes_end": last.reserved,
            "rss_growth_after_warmup": rss_growth,
            "threads_fds_budget_flat": flat,
        })
    );
    if !flat || rss_growth > 1.2 {
        eprintln!("soak: resources grew");
        std::process::exit(1);
    }
}
