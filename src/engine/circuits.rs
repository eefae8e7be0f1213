//! Recorded partition circuits: each circuit's R1CS ([`R1cs`]), recorded once on a background
//! thread when the engine first gets a job of that circuit whose kind offers it
//! ([`PartitionCircuits::recordable`]). Until it is ready, partitions of that circuit are
//! synthesized in full; afterwards only their witness is, and a, b, c come from the recorded
//! matrices (the same values, a fraction of the work). Turned off by `"record_circuits": false`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::kinds::CircuitId;
use crate::synth::{PartitionCircuits, R1cs, SizeHint};

enum Entry {
    /// `cancel` stops this recording (its SRS was evicted); `id` tells it from a later one of
    /// the same circuit when it lands.
    Recording { since: Instant, estimate: u64, id: u64, cancel: Arc<AtomicBool> },
    /// Recording `id` was told to stop (its SRS was evicted): its memory is held until its
    /// thread notices, and then the entry goes, whatever the recording's outcome.
    Stopping { since: Instant, estimate: u64, id: u64 },
    Ready { r1cs: Arc<R1cs>, took: Duration },
    Failed(String),
}

#[derive(Default)]
pub(crate) struct Circuits {
    entries: Mutex<HashMap<CircuitId, Entry>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    stop: AtomicBool,
    next_id: AtomicU64,
}

impl Circuits {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<CircuitId, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `circuit`'s recorded R1CS, once ready.
    pub fn get(&self, circuit: CircuitId) -> Option<Arc<R1cs>> {
        match self.entries().get(&circuit) {
            Some(Entry::Ready { r1cs, .. }) => Some(r1cs.clone()),
            _ => None,
        }
    }

    /// Start recording `circuit` unless it is recorded, being recorded (or stopped) or failed:
    /// from `source` (a job's partition circuits of that circuit, recorded on all threads; the
    /// structure is the same for every sector). `hint` (the SRS's) sizes its vectors.
    /// `on_ready` gets the circuit once it is ready (and the provers can use it), on the
    /// recording thread.
    pub fn ensure(
        self: &Arc<Self>,
        circuit: CircuitId,
        hint: SizeHint,
        source: Arc<dyn PartitionCircuits>,
        on_ready: impl FnOnce(&Arc<R1cs>) + Send + 'static,
    ) {
        let mut entries = self.entries();
        if entries.contains_key(&circuit) || self.stop.load(Ordering::Relaxed) {
            return;
        }
        let (id, cancel) = (self.next_id.fetch_add(1, Ordering::Relaxed), Arc::new(AtomicBool::new(false)));
        entries.insert(circuit, Entry::Recording { since: Instant::now(), estimate: R1cs::estimate_bytes(circuit, hint), id, cancel: cancel.clone() });
        drop(entries);
        let me = self.clone();
        let spawned = std::thread::Builder::new().name("cuzk-record".into()).spawn(move || {
            let t = Instant::now();
            let stop = || me.stop.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed);
            let res = source.record(0, hint, &stop);
            drop(source);
            // The circuit the SRS was made for has exactly its variables: anything else is a bug.
            let res = res.and_then(|r| match hint.aux == 0 || (r.aux == hint.aux && r.inputs == hint.inputs) {
                true => Ok(r),
                false => Err(crate::err!(
                    Internal,
                    "the recorded {} circuit has {} inputs and {} aux, its SRS {} and {}",
                    circuit.name(),
                    r.inputs,
                    r.aux,
                    hint.inputs,
                    hint.aux
                )),
            });
            match res {
                Ok(r1cs) => {
                    let st = r1cs.stats();
                    log::info!(
                        "recorded the {} circuit in {:.1?}: {} constraints, {} terms, {} MiB",
                        circuit.name(),
                        t.elapsed(),
                        st.constraints,
                        st.terms.iter().sum::<usize>(),
                        st.bytes >> 20
                    );
                    let r1cs = Arc::new(r1cs);
                    // Only into the entry this recording started: an eviction since took it out,
                    // and the circuit goes with this thread's end instead of staying resident.
                    if me.land(circuit, id, Entry::Ready { r1cs: r1cs.clone(), took: t.elapsed() }) && !stop() {
                        on_ready(&r1cs);
                    }
                }
                Err(e) => {
                    if !stop() {
                        log::warn!("recording the {} circuit failed (synthesizing in full): {e}", circuit.name());
                    }
                    me.land(circuit, id, Entry::Failed(e.to_string()));
                }
            }
        });
        match spawned {
            Ok(h) => self.threads.lock().unwrap_or_else(|e| e.into_inner()).push(h),
            Err(e) => {
                self.entries().insert(circuit, Entry::Failed(format!("starting the recording thread: {e}")));
            }
        }
    }

    /// Put the outcome of recording `id` in `circuit`'s entry if that is still the entry of this
    /// recording; false when it was evicted meanwhile (its stopping entry goes instead).
    fn land(&self, circuit: CircuitId, id: u64, outcome: Entry) -> bool {
        let mut entries = self.entries();
        match entries.get(&circuit) {
            Some(Entry::Recording { id: current, .. }) if *current == id => {
                entries.insert(circuit, outcome);
                true
            }
            Some(Entry::Stopping { id: current, .. }) if *current == id => {
                entries.remove(&circuit);
                false
            }
            _ => false,
        }
    }

    /// Take a circuit recorded elsewhere (benchmarks: recorded while their SRS was made).
    pub fn adopt(&self, r1cs: Arc<R1cs>) {
        self.entries().insert(r1cs.circuit, Entry::Ready { r1cs, took: Duration::ZERO });
    }

    /// Forget `circuit`'s recording (its SRS was evicted); running partitions keep their reference.
    /// A recording in progress is stopped and its circuit, should it finish anyway, never lands.
    pub fn evict(&self, circuit: CircuitId) -> Option<Arc<R1cs>> {
        let mut entries = self.entries();
        match entries.remove(&circuit) {
            Some(Entry::Ready { r1cs, .. }) => Some(r1cs),
            Some(Entry::Recording { since, estimate, id, cancel }) => {
                cancel.store(true, Ordering::Relaxed);
                entries.insert(circuit, Entry::Stopping { since, estimate, id });
                None
            }
            Some(stopping @ Entry::Stopping { .. }) => {
                entries.insert(circuit, stopping);
                None
            }
            _ => None,
        }
    }

    /// Bytes held (or, while recording, about to be held) by recorded circuits.
    pub fn resident_bytes(&self) -> u64 {
        self.entries()
            .values()
            .map(|e| match e {
                Entry::Recording { estimate, .. } | Entry::Stopping { estimate, .. } => *estimate,
                Entry::Ready { r1cs, .. } => r1cs.stats().bytes as u64,
                Entry::Failed(_) => 0,
            })
            .sum()
    }

    pub fn status_json(&self) -> Vec<Value> {
        let mut v: Vec<(String, Value)> = self
            .entries()
            .iter()
            .map(|(p, e)| {
                let (name, kind) = (p.name(), p.kind().name());
                let mut j = match e {
                    Entry::Recording { since, estimate, .. } => json!({"registered_proof": name, "state": "recording",
                        "recording_s": since.elapsed().as_secs_f64(), "estimated_bytes": estimate}),
                    Entry::Stopping { since, estimate, .. } => json!({"registered_proof": name, "state": "stopping",
                        "recording_s": since.elapsed().as_secs_f64(), "estimated_bytes": estimate}),
                    Entry::Ready { r1cs, took } => {
                        let st = r1cs.stats();
                        json!({"registered_proof": name, "state": "ready", "record_s": took.as_secs_f64(),
                            "bytes": st.bytes, "constraints": st.constraints, "terms": st.terms.iter().sum::<usize>()})
                    }
                    Entry::Failed(why) => json!({"registered_proof": name, "state": "failed", "error": why}),
                };
                j["kind"] = json!(kind);
                (name, j)
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().map(|(_, j)| j).collect()
    }

    /// Stop recordings in progress (they give up at their next check) and join their threads.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}
