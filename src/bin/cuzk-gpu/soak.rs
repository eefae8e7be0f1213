//! `soak-2kib`: many real 2 KiB C2 jobs through one CUDA engine (16 in flight, every tenth
//! cancelled), sampling the process (RSS, threads, open files), the memory budget and the
//! device's free memory every 100 jobs: all must stay flat after the first 100.

use std::time::Duration;

use crate::common::*;
#[path = "../cuzk-bench/sample.rs"]
mod sample;
use sample::{sample, Sample};

pub(crate) fn soak_2kib(args: &Parsed) -> bool {
    let jobs: usize = args.num("jobs", 1000);
    let Some(gpu) = backend() else { return true };
    let res = (|| -> cuzk::error::Result<(serde_json::Value, bool)> {
        let f = fixture()?;
        let engine = Engine::new(EngineConfig {
            backend: "cuda".into(),
            params_dir: Some(f.params_dir.clone()),
            prove_queue_depth: 2,
            job_ttl_secs: 20,
            ..Default::default()
        })?;
        engine.srs_load(PROOF, None)?;
        let free = || gpu.device_info(0).ok().map(|d| d.free_bytes);
        let t0 = Instant::now();
        let mut samples: Vec<Sample> = vec![sample(&engine, 0, free())];
        let (mut done, mut cancelled) = (0usize, 0usize);
        let mut in_flight = std::collections::VecDeque::new();
        for i in 0..jobs {
            let id = f.submit(&engine)?;
            if i % 10 == 9 {
                let _ = engine.cancel(id);
            }
            in_flight.push_back(id);
            while in_flight.len() >= 16 || (i + 1 == jobs && !in_flight.is_empty()) {
                let id = in_flight.pop_front().unwrap();
                let snap = engine.wait(id, Some(Duration::from_secs(300)))?;
                match snap.state {
                    JobState::Done if snap.result.as_ref().is_some_and(|r| r.verified) => done += 1,
                    JobState::Cancelled => cancelled += 1,
                    other => return Err(snap.error.unwrap_or_else(|| cuzk::err!(Internal, "job ended {other:?}"))),
                }
            }
            if (i + 1) % 100 == 0 {
                let s = sample(&engine, i + 1, free());
                println!(
                    "soak: {} jobs, RSS {} MiB, {} threads, {} fds, device free {} MiB, {:.1}s",
                    s.jobs,
                    s.rss_kib >> 10,
                    s.threads,
                    s.fds,
                    s.device_free.unwrap_or(0) >> 20,
                    t0.elapsed().as_secs_f64()
                );
                samples.push(s);
            }
        }
        let t = Instant::now();
        while sample(&engine, jobs, None).reserved != 0 && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let last = sample(&engine, jobs, free());
        samples.push(last);
        let warm = samples.get(1).copied().unwrap_or(samples[0]);
        let flat = last.threads == warm.threads && last.fds == warm.fds && last.reserved == 0 && last.device_free == warm.device_free;
        let growth = last.rss_kib as f64 / warm.rss_kib.max(1) as f64;
        let v = serde_json::json!({
            "bench": "soak-2kib-cuda", "jobs": jobs, "done": done, "cancelled": cancelled,
            "seconds": t0.elapsed().as_secs_f64(), "per_proof_s": t0.elapsed().as_secs_f64() / done.max(1) as f64,
            "rss_mib": samples.iter().map(|s| s.rss_kib >> 10).collect::<Vec<_>>(),
            "threads": samples.iter().map(|s| s.threads).collect::<Vec<_>>(),
            "fds": samples.iter().map(|s| s.fds).collect::<Vec<_>>(),
            "device_free_mib": samples.iter().map(|s| s.device_free.unwrap_or(0) >> 20).collect::<Vec<_>>(),
            "rss_growth_after_warmup": growth, "threads_fds_budget_device_flat": flat,
        });
        Ok((v, flat && growth < 1.2))
    })();
    match res {
        Ok((v, ok)) => {
            println!("{v}");
            println!("{} soak-2kib", if ok { "PASS" } else { "FAIL" });
            ok
        }
        Err(e) => {
            println!("FAIL soak-2kib: {e}");
            false
        }
    }
}
