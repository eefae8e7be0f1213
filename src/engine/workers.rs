//! The engine's threads: synthesis workers feed the prover threads (one per backend lane)
//! through a bounded priority hand-off; a prover hands each started proof's CPU tail to the
//! finisher thread, so the next partition's device work starts meanwhile. Panics inside a stage fail that job only; the threads keep
//! serving.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::handoff;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use blstrs::Scalar;
use ff::Field;

use super::job::{Job, JobResult, JobState, JobWork, Stage};
use super::memory::Reservation;
use super::Shared;
use crate::error::{Error, Result, Status};
use crate::prover::Begun;
use crate::synth::{Assignment, R1cs};

pub(crate) struct Synthesized {
    job: Arc<Job>,
    partition: usize,
    assignment: Assignment,
    /// Released once the deallocator has freed the partition's buffers.
    memory: Reservation,
    ready_at: Instant,
}

/// A partition whose proof has been started; the finisher completes it.
struct Started {
    job: Arc<Job>,
    partition: usize,
    memory: Reservation,
    /// Time it waited for the prover.
    waited: Duration,
    /// When the prover took it, and when the backend's first stage returned.
    at: Instant,
    started: Instant,
    begun: Begun,
}

/// Start every stage thread. If one cannot be started, those already running are stopped and
/// joined before the error returns: a failed engine start leaves nothing behind.
pub(super) fn spawn(shared: &Arc<Shared>) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut threads = Vec::new();
    match spawn_into(shared, &mut threads) {
        Ok(()) => Ok(threads),
        Err(e) => {
            shared.queue.close();
            for t in threads {
                let _ = t.join();
            }
            Err(e)
        }
    }
}

fn spawn_into(shared: &Arc<Shared>, threads: &mut Vec<JoinHandle<()>>) -> std::io::Result<()> {
    let (tx, rx) = handoff::channel::<Synthesized>(shared.config.prove_queue_depth);
    // One tail in flight: a finisher that falls behind holds the prover back instead of memory piling up.
    let (ftx, frx) = sync_channel::<Started>(1);
    let stage = |name: String, f: Box<dyn FnOnce() + Send>| {
        let sh = shared.clone();
        std::thread::Builder::new().name(name).spawn(move || {
            let _watch = StageWatch(&sh);
            f()
        })
    };
    for i in 0..shared.config.synthesis_threads() {
        let (sh, tx) = (shared.clone(), tx.clone());
        threads.push(stage(format!("cuzk-synth-{i}"), Box::new(move || synth_loop(&sh, tx, Pop::Any)))?);
    }
    // One more worker for work above the default priority (PoSt: deadlines), with its own
    // thread pool: it starts at once however many C2 partitions fill the other workers, and its
    // parallel synthesis does not queue behind theirs on the shared pool.
    let urgent = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(shared.witness_gate.cores())
            .thread_name(|i| format!("cuzk-urgent-{i}"))
            .build()
            .map_err(std::io::Error::other)?,
    );
    let (sh, utx, pool) = (shared.clone(), tx.clone(), urgent.clone());
    threads.push(stage("cuzk-synth-urgent".into(), Box::new(move || pool.install(|| synth_loop(&sh, utx, Pop::Urgent))))?);
    drop(tx);
    // One prover thread per backend lane (a CUDA device proves one partition's stage H under
    // another's MSMs); they share the hand-off, highest priority first.
    let rx = Arc::new(rx);
    let urgent_lane = shared.lanes.len() - 1;
    for k in 0..urgent_lane {
        let (sh, rx, ftx) = (shared.clone(), rx.clone(), ftx.clone());
        threads.push(stage(format!("cuzk-prove-{k}"), Box::new(move || prove_loop(&sh, k, &rx, Some(ftx))))?);
    }
    // And the urgent prover, for work above the default priority only: a WinningPoSt whose
    // partition is ready does not wait for a lane to finish a C2 partition (seconds at 32 GiB).
    // It finishes its own proofs (no queue behind the lanes' tails) on the urgent pool, where a
    // backend's CPU work does not queue behind synthesis on the shared one.
    let (sh, urx) = (shared.clone(), rx.clone());
    threads.push(stage("cuzk-prove-urgent".into(), Box::new(move || urgent.install(|| prove_loop(&sh, urgent_lane, &urx, None))))?);
    drop((rx, ftx));
    let sh = shared.clone();
    threads.push(stage("cuzk-finish".into(), Box::new(move || finish_loop(&sh, frx)))?);
    Ok(())
}

/// Lives on each stage thread's stack. If the thread unwinds (a panic outside the per-job
/// guards), the engine can no longer promise progress: every unfinished job fails with an
/// error saying so, new submits are refused, and waiters wake instead of blocking forever.
struct StageWatch<'a>(&'a Arc<Shared>);

impl Drop for StageWatch<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let name = std::thread::current().name().unwrap_or("a stage thread").to_owned();
            log::error!("cuzk engine thread {name} panicked; failing every unfinished job");
            self.0.break_engine(&format!("engine thread {name} panicked (a bug in cuzk); the engine must be recreated"));
        }
    }
}

/// Run a stage, turning a panic into an error.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(err!(Internal, "panic during {what}: {}", crate::error::panic_message(p))))
}

fn fail(shared: &Shared, job: &Job, e: Error) {
    let mut ended = false;
    shared.update(job, |j| {
        ended = !j.state().is_final();
        j.fail(e);
    });
    if ended {
        shared.job_ended(job, JobState::Failed);
        shared.retire(job);
    }
}

/// A partition that will not be proved: its buffers, then its memory reservation, go to the
/// deallocator.
fn discard(shared: &Shared, assignment: Assignment, memory: Reservation) {
    let bytes = assignment.heap_bytes() as u64;
    shared.dealloc.free((assignment, memory), bytes);
}

/// Which work a synthesis worker takes.
#[derive(Clone, Copy)]
enum Pop {
    Any,
    /// Only work above the default priority.
    Urgent,
}

fn synth_loop(shared: &Shared, tx: super::ProveSender, which: Pop) {
    let next = || match which {
        Pop::Any => shared.queue.pop(),
        Pop::Urgent => shared.queue.pop_urgent(),
    };
    while let Some((item, popped)) = next() {
        let job = item.job;
        // None once the job has ended (cancelled, failed): nothing left to do for it.
        let Some(work) = job.work() else { continue };
        if job.is_cancelled() {
            shared.dealloc.free(work, 0);
            continue;
        }
        shared.update(&job, |j| {
            let mut g = j.lock();
            if !g.started {
                g.started = true;
                g.timings.queue = popped.duration_since(j.submitted);
            }
            if g.state == JobState::Queued {
                g.state = JobState::Running;
            }
        });
        let limit = || shared.memory_limit();
        // Through the circuit's recording when it is ready: with a backend that evaluates a, b,
        // c on its device, a partition holds only its witness on the host.
        let r1cs = shared.circuits.get(work.inputs.circuit);
        let on_device = r1cs.as_ref().is_some_and(|r| shared.backend.evaluates_recorded(&work.srs, r));
        // A witness-only partition spreads over every core: a few at a time each finish sooner.
        // Not the urgent worker's: it has a thread pool of its own, and behind the gate a
        // WinningPoSt waited for 32 GiB partitions' witnesses (its latency's 1.3–5 s gap beside
        // 1.2 s of proving at 2026-12-07 03:02).
        let t = Instant::now();
        let pass = match r1cs {
            None => None,
            Some(_) if matches!(which, Pop::Urgent) => None,
            Some(_) => {
                match shared.witness_gate.enter(work.inputs.circuits.sub_circuits(), &|| job.is_cancelled()) {
                    Some(p) => Some(p),
                    None => {
                        shared.dealloc.free(work, 0);
                        continue; // cancelled while waiting
                    }
                }
            }
        };
        waited(&job, item.partition, Stage::GateWait, "witness_gate_wait", t);
        let t = Instant::now();
        let bytes = shared.partition_reservation(&work.srs, on_device);
        let Some(memory) = shared.memory.reserve(bytes, &limit, &|| job.is_cancelled()) else {
            shared.dealloc.free(work, 0);
            continue; // cancelled while waiting for room
        };
        waited(&job, item.partition, Stage::MemoryWait, "memory_wait", t);
        let t = Instant::now();
        let res = guarded("synthesis", || synthesize(&job, &work, item.partition, r1cs.as_ref(), on_device));
        // Our reference goes to the deallocator: if the job ended meanwhile it is the last one,
        // and dropping it here would free the job's inputs (or an evicted SRS) on this thread.
        shared.dealloc.free(work, 0);
        let took = t.elapsed();
        {
            let mut g = job.lock();
            g.timings.synthesis += took;
            g.timings.span(job.submitted, item.partition, Stage::Synthesis, t, t + took);
        }
        log::debug!("{} partition {} synthesized in {took:?}", job.label, item.partition);
        match res {
            Err(e) => fail(shared, &job, e.context(format!("job {} partition {}", job.id, item.partition))),
            Ok(a) if job.is_cancelled() => discard(shared, a, memory),
            Ok(mut assignment) => {
                let t = Instant::now();
                match guarded("preparing for the prover", || shared.backend.prepare(&mut assignment)) {
                    Ok(Some(took)) => {
                        let mut g = job.lock();
                        g.timings.phases.add("prover_prepare", took);
                        g.timings.span(job.submitted, item.partition, Stage::Prepare, t, Instant::now());
                    }
                    Ok(None) => {}
                    // Not fatal: the backend proves an unprepared assignment too (more slowly).
                    Err(e) => log::warn!("{} partition {}: {e}", job.label, item.partition),
                }
                drop(pass); // the next partition may synthesize while this one waits for the prover
                let key = (job.priority, std::cmp::Reverse(job.id), std::cmp::Reverse(item.partition));
                let s = Synthesized { job, partition: item.partition, assignment, memory, ready_at: Instant::now() };
                shared.awaiting_prover.fetch_add(1, Ordering::Relaxed);
                if let Err(back) = tx.send(key, s) {
                    shared.awaiting_prover.fetch_sub(1, Ordering::Relaxed);
                    // Prover gone (shutdown): free and stop.
                    let Synthesized { assignment, memory, .. } = back;
                    discard(shared, assignment, memory);
                    return;
                }
            }
        }
    }
}

/// A wait of `partition` that began at `since`, as a timeline span and a phase, when it lasted.
fn waited(job: &Job, partition: usize, stage: Stage, phase: &'static str, since: Instant) {
    let took = since.elapsed();
    if took > Duration::from_millis(1) {
        let mut g = job.lock();
        g.timings.phases.add(phase, took);
        g.timings.span(job.submitted, partition, stage, since, since + took);
    }
}

/// One partition: through `r1cs` (the circuit's recording) when given — the witness,
/// then a, b, c from its matrices here, or left to the backend's device (`on_device`) — else in
/// full.
fn synthesize(job: &Job, work: &JobWork, k: usize, r1cs: Option<&Arc<R1cs>>, on_device: bool) -> Result<Assignment> {
    let hint = work.srs.size_hint();
    let Some(r1cs) = r1cs else {
        return work.inputs.circuits.synthesize(k, hint);
    };
    let t = Instant::now();
    let witness = match work.inputs.circuits.witness(k, hint) {
        Err(e) if e.status == Status::Unsupported => return work.inputs.circuits.synthesize(k, hint),
        r => r?,
    };
    job.lock().timings.phases.add("synthesis_witness", t.elapsed());
    let context = |e: crate::error::Error| e.context(format!("partition {k}"));
    if on_device {
        return r1cs.defer(witness).map_err(context);
    }
    let t = Instant::now();
    let asg = r1cs.evaluate(witness).map_err(context)?;
    job.lock().timings.phases.add("synthesis_abc", t.elapsed());
    Ok(asg)
}

/// A prover lane: takes the highest-priority partition and starts its proof, handing the tail to
/// the finisher (`ftx`). The urgent prover (`ftx` None) takes only work above the default
/// priority, through the backend's urgent path, and finishes its proofs itself.
fn prove_loop(shared: &Shared, lane: usize, rx: &handoff::Receiver<Synthesized>, ftx: Option<SyncSender<Started>>) {
    let urgent = ftx.is_none();
    let next = || if urgent { rx.recv_if(|&(priority, ..)| priority > 0) } else { rx.recv() };
    while let Some(s) = next() {
        shared.awaiting_prover.fetch_sub(1, Ordering::Relaxed);
        let Synthesized { job, partition, assignment, memory, ready_at } = s;
        if job.is_cancelled() {
            discard(shared, assignment, memory);
            continue;
        }
        let waited = ready_at.elapsed();
        let at = Instant::now();
        let mut rng = rand::rngs::OsRng;
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let Some(work) = job.work() else {
            discard(shared, assignment, memory);
            continue;
        };
        let mut busy = shared.lanes.begin(lane);
        let cancelled = || job.is_cancelled();
        let res = guarded("proving", || match urgent {
            true => shared.backend.start_urgent(&work.srs, assignment, r, s, &cancelled),
            false => shared.backend.start(&work.srs, assignment, r, s, &cancelled),
        });
        if res.is_err() {
            busy.failed();
        }
        drop(busy);
        shared.dealloc.free(work, 0);
        match res {
            Err(e) => {
                shared.dealloc.free(memory, 0); // after whatever the backend handed the deallocator
                if !job.is_cancelled() {
                    fail(shared, &job, e.context(format!("job {} partition {partition}", job.id)));
                } // else already reported as cancelled or failed
            }
            Ok(begun) => {
                let started = Started { job, partition, memory, waited, at, started: Instant::now(), begun };
                match &ftx {
                    None => finish_one(shared, started),
                    Some(ftx) => {
                        if ftx.send(started).is_err() {
                            return; // finisher gone (shutdown)
                        }
                    }
                }
            }
        }
    }
}

fn finish_loop(shared: &Shared, rx: Receiver<Started>) {
    for st in rx {
        finish_one(shared, st);
    }
}

/// A started proof's tail, then the job's proof once every partition is proved.
fn finish_one(shared: &Shared, st: Started) {
    let Started { job, partition, memory, waited, at, started, begun } = st;
    let finishing = Instant::now();
    let res = match (begun, job.work()) {
        (Begun::Done(pp), _) => Ok(pp),
        (Begun::Tail(tail), Some(work)) => {
            let r = guarded("finishing the proof", || tail.finish(&work.srs));
            shared.dealloc.free(work, 0);
            r
        }
        (Begun::Tail(tail), None) => {
            shared.dealloc.free(tail, 0); // the job ended: its proof is not needed
            Err(err!(Cancelled, "job {} ended", job.id))
        }
    };
    let took = at.elapsed();
    match res {
        Err(e) => {
            shared.dealloc.free(memory, 0);
            if !job.is_cancelled() {
                fail(shared, &job, e.context(format!("job {} partition {partition}", job.id)));
            } // else already reported as cancelled or failed
        }
        Ok(pp) => {
            for (g, bytes) in pp.garbage {
                shared.dealloc.free(g, bytes);
            }
            // After the buffers in the deallocator's FIFO: the room is given back once they are freed.
            shared.dealloc.free(memory, 0);
            let done = {
                let mut g = job.lock();
                g.timings.prove_queue += waited;
                g.timings.prove += took;
                let sub = job.submitted;
                g.timings.span(sub, partition, Stage::ProveQueue, at - waited, at);
                g.timings.span(sub, partition, Stage::Prove, at, started);
                g.timings.span(sub, partition, Stage::Finish, finishing, at + took);
                g.timings.phases.accumulate(&pp.phases);
                g.cpu_fallback_partitions += pp.cpu_fallback as usize;
                g.proofs[partition] = Some(pp.proof);
                g.proofs.iter().all(Option::is_some)
            };
            if done && !job.is_cancelled() {
                finish(shared, &job);
            }
        }
    }
}

/// All partitions proved: concatenate, verify, publish.
fn finish(shared: &Shared, job: &Job) {
    let Some(work) = job.work() else { return }; // ended meanwhile
    let res = guarded("assembling the proof", || {
        let mut bytes = Vec::with_capacity(192 * job.partitions());
        for p in job.lock().proofs.iter().flatten() {
            p.write(&mut bytes).map_err(|e| err!(Internal, "serializing proof: {e}"))?;
        }
        let t = Instant::now();
        let verified = if shared.config.verify {
            if !work.inputs.statement.verify(&work.srs.pvk, &bytes)? {
                return Err(err!(Verification, "job {}: the produced proof does not verify", job.id));
            }
            true
        } else {
            false
        };
        Ok((bytes, verified, t.elapsed()))
    });
    shared.dealloc.free(work, 0);
    match res {
        Err(e) => fail(shared, job, e),
        Ok((proof, verified, verify_time)) => {
            let mut published = false;
            shared.update(job, |j| {
                let mut g = j.lock();
                if g.state.is_final() {
                    return; // cancelled meanwhile
                }
                g.timings.verify = verify_time;
                g.timings.total = j.submitted.elapsed();
                let timings = g.timings.clone();
                shared.durations.job_done(j.kind, &timings);
                g.result = Some(Arc::new(JobResult {
                    kind: j.kind,
                    proof,
                    timings,
                    backend: shared.backend.name(),
                    partitions: j.partitions(),
                    cpu_fallback_partitions: g.cpu_fallback_partitions,
                    verified,
                }));
                g.proofs.clear();
                g.state = JobState::Done;
                g.finished_at = Some(Instant::now());
                published = true;
            });
            if published {
                shared.job_ended(job, JobState::Done);
                shared.retire(job);
            }
        }
    }
}

