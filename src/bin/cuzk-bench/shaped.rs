//! `synth-shaped`: one partition of a real sector shape (any size, no sealing, no params)
//! synthesized by upstream's sequential circuit and by cuzk's path, one after the other (a 32 GiB
//! partition holds ~17 GB: never two at once), with seconds, constraints per core-second and
//! peak RSS of each. PoRep's partition comes from the shaped C1 generator, and `recorded` (the
//! proof type's R1CS recorded once, then witness + matrix products), `witness` (bellperson's
//! witness-only constraint system on one thread) and `native` (cuzk's witness: SHA-256 native)
//! run on request. SnapDeals and WindowPoSt / WinningPoSt partitions come from the satisfiable
//! generators (`fixtures::cc_update`, `fixtures::cc_post`: a full WindowPoSt partition), through
//! the engine's own parsing and checks; their `recorded` mode records the circuit from that
//! partition on all threads, as the engine does at a kind's first job, and `witness` times the
//! engine's witness alone (native where the kind has it) without a recording.

use std::time::Instant;

use cuzk::kinds::{CircuitId, ProofRequest};
use cuzk::kinds::registry::{self, RegisteredSealProof};
use cuzk::synth::{PartitionCircuits, SizeHint};
/// Peak RSS since the last reset, in KiB (VmHWM), and its reset (Linux `clear_refs` 5).
fn peak_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// One partition of `circuit`: a seal proof through [`run_seal`], another kind's through its
/// generated inputs (upstream sequential and cuzk only).
pub fn run(circuit: CircuitId, runs: usize, modes: &str) {
    // Generated inputs, then the engine's own parsing and checks (timed: a submit's latency).
    let checked = |request: ProofRequest<'_>| {
        let t = Instant::now();
        let inputs = request.parse().expect("the engine's checks");
        println!("{}: parsed and checked by the engine in {:.1}s", circuit.name(), t.elapsed().as_secs_f64());
        inputs
    };
    let t = Instant::now();
    let proof = match circuit {
        CircuitId::Seal(p) => return run_seal(p, runs, modes),
        CircuitId::Update(p) => {
            let f = cuzk::fixtures::cc_update(p, 11).expect("generated update");
            println!("{}: generated update in {:.1}s", circuit.name(), t.elapsed().as_secs_f64());
            checked(ProofRequest::SnapDeals(f.request()))
        }
        CircuitId::PoSt(p) => {
            let f = cuzk::fixtures::cc_post(p, p.as_v1_config().sector_count, 11).expect("generated PoSt");
            println!("{}: generated {} sectors' vanilla proofs in {:.1}s", circuit.name(), f.sectors.len(), t.elapsed().as_secs_f64());
            checked(f.proof_request(Some(0)))
        }
    };
    let hint = cuzk::srs::expected_size_hint(circuit).expect("section sizes");
    let (mut results, constraints) = compare(&*proof.circuits, hint, None, runs, modes);
    if modes.split(',').any(|m| m == "all" || m == "witness") {
        // The engine's witness alone on all threads (native where the kind has it), without the
        // recording beside it (a 32 GiB WindowPoSt's recording and partition exceed 24 GiB).
        let mut secs = Vec::new();
        for i in 0..runs {
            reset_peak();
            let base = peak_kib();
            let t = Instant::now();
            let w = proof.circuits.witness(0, hint).expect("witness");
            let s = t.elapsed().as_secs_f64();
            println!("witness run {i}: {s:.3}s, peak +{} MiB RSS, {} inputs, {} aux, {} constraints", peak_kib().saturating_sub(base) >> 10, w.input.len(), w.aux.len(), w.constraints);
            if let Some(c) = constraints {
                assert_eq!(w.constraints, c, "witness: constraint count");
            }
            secs.push(s);
        }
        let med = crate::median(&secs);
        println!("witness: median {med:.3}s ({} threads)", cores());
        results.insert("witness".into(), serde_json::json!({"seconds": secs, "median_s": med, "threads": cores()}));
    }
    if modes.split(',').any(|m| m == "all" || m == "recorded") {
        // The circuit recorded from partition 0 on all threads, as the engine records it at a
        // kind's first job; then the witness-only path.
        reset_peak();
        let t = Instant::now();
        let r1cs = proof.circuits.record(0, hint, &|| false).expect("record the R1CS");
        let record_s = t.elapsed().as_secs_f64();
        println!("recorded from partition 0 on {} threads in {record_s:.2}s, peak {} MiB RSS", cores(), peak_kib() >> 10);
        results.insert("recorded".into(), recorded(&*proof.circuits, r1cs, record_s, hint, runs));
    }
    println!(
        "{}",
        serde_json::json!({"bench": "synth-shaped", "proof": circuit.name(), "cores": cores(), "constraints": constraints, "results": results})
    );
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Partition 0 by upstream's sequential synthesis and by cuzk's, `runs` times each (the modes
/// asked for): seconds, constraints per core-second, peak RSS; and the constraint count (every
/// run must have `expect` constraints when given, and the same count).
fn compare(circuits: &dyn PartitionCircuits, hint: SizeHint, mut expect: Option<usize>, runs: usize, modes: &str) -> (serde_json::Map<String, serde_json::Value>, Option<usize>) {
    let mut results = serde_json::Map::new();
    type Synth<'a> = &'a dyn Fn() -> cuzk::error::Result<cuzk::synth::Assignment>;
    let upstream: Synth<'_> = &|| cuzk::synth::upstream::of(circuits).expect("upstream paths").synthesize_sequential(0, hint);
    let ours: Synth<'_> = &|| circuits.synthesize(0, hint);
    for (mode, f) in [("upstream_sequential", upstream), ("cuzk_parallel", ours)] {
        if !modes.split(',').any(|m| m == "both" || m == "all" || mode.starts_with(m)) {
            continue;
        }
        let (mut secs, mut peaks) = (Vec::new(), Vec::new());
        for i in 0..runs {
            reset_peak();
            let base = peak_kib();
            let t = Instant::now();
            let a = f().expect("synthesis");
            let s = t.elapsed().as_secs_f64();
            assert_eq!(a.num_constraints(), *expect.get_or_insert(a.num_constraints()), "{mode}: constraint count");
            let peak = peak_kib().saturating_sub(base) >> 10;
            let t = Instant::now();
            drop(a);
            println!("{mode} run {i}: {s:.2}s, peak +{peak} MiB RSS, free {:.2}s", t.elapsed().as_secs_f64());
            secs.push(s);
            peaks.push(peak);
        }
        let (med, n) = (crate::median(&secs), expect.unwrap_or(0) as f64);
        let threads = if mode == "cuzk_parallel" { cores() } else { 1 };
        let per_core = n / med / threads as f64;
        println!("{mode}: median {med:.2}s, {:.0} constraints/s, {per_core:.0} constraints per core-second ({threads} threads)", n / med);
        results.insert(
            mode.into(),
            serde_json::json!({"seconds": secs, "median_s": med, "constraints_per_s": n / med,
                "constraints_per_core_s": per_core, "threads": threads, "peak_rss_mib": peaks}),
        );
    }
    (results, expect)
}

/// The recorded path of partition 0 with `r1cs` (recorded in `record_s`): witness on all threads,
/// then a, b, c as matrix products, `runs` times; with `CUZK_BENCH_CHECK_WITNESS` set, the first
/// run compared with full synthesis value for value.
fn recorded(circuits: &dyn PartitionCircuits, r1cs: cuzk::synth::R1cs, record_s: f64, hint: SizeHint, runs: usize) -> serde_json::Value {
    let cores = cores();
    let st = r1cs.stats();
    println!(
        "recorded R1CS: {record_s:.2}s, {} constraints, {} terms (A {} B {} C {}), {} distinct coefficients, {} MiB",
        st.constraints,
        st.terms.iter().sum::<usize>(),
        st.terms[0],
        st.terms[1],
        st.terms[2],
        st.distinct_coefficients,
        st.bytes >> 20
    );
    let (mut secs, mut wits, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        reset_peak();
        let base = peak_kib();
        let t = Instant::now();
        let w = circuits.witness(0, hint).expect("witness");
        let wit_s = t.elapsed().as_secs_f64();
        let a = r1cs.evaluate(w).expect("evaluate");
        let s = t.elapsed().as_secs_f64();
        let peak = peak_kib().saturating_sub(base) >> 10;
        println!("recorded run {i}: {s:.2}s (witness {wit_s:.2}s, a/b/c {:.2}s), peak +{peak} MiB RSS", s - wit_s);
        if i == 0 && std::env::var_os("CUZK_BENCH_CHECK_WITNESS").is_some() {
            let full = circuits.synthesize(0, hint).expect("synthesis");
            let same = full.a == a.a && full.b == a.b && full.c == a.c && full.aux == a.aux && full.input == a.input;
            println!("recorded equals full synthesis: {same}");
        }
        drop(a);
        secs.push(s);
        wits.push(wit_s);
        peaks.push(peak);
    }
    let med = crate::median(&secs);
    let per_core = st.constraints as f64 / med / cores as f64;
    println!(
        "recorded: median {med:.2}s (witness {:.2}s), {:.0} constraints/s, {per_core:.0} constraints per core-second ({cores} threads)",
        crate::median(&wits),
        st.constraints as f64 / med
    );
    serde_json::json!({"record_s": record_s, "r1cs_bytes": st.bytes, "terms": st.terms, "seconds": secs,
        "witness_s": wits, "median_s": med, "constraints_per_s": st.constraints as f64 / med,
        "constraints_per_core_s": per_core, "threads": cores, "peak_rss_mib": peaks})
}

fn run_seal(proof: RegisteredSealProof, runs: usize, modes: &str) {
    let cores = cores();
    let t = Instant::now();
    let (prover, sector) = ([5u8; 32], 1);
    let c1 = cuzk::fixtures::shaped_c1(proof, 11, prover, sector).expect("shaped C1");
    let gen_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let inputs = cuzk::kinds::porep::parse_c1(&c1, &prover, sector).expect("parse");
    let parse_s = t.elapsed().as_secs_f64();
    let shape = cuzk::synth::shape::count(proof).expect("shape");
    let hint = SizeHint { constraints: shape.constraints, inputs: shape.ic, aux: shape.l };
    println!(
        "{}: shaped C1 {} bytes generated in {gen_s:.1}s, parsed+validated in {parse_s:.2}s; {} constraints per partition; {cores} cores",
        registry::seal_name(proof),
        c1.len(),
        shape.constraints
    );
    drop(c1);
    let (mut results, _) = compare(&*inputs.circuits, hint, Some(shape.constraints), runs, modes);
    if modes.split(',').any(|m| m == "all" || m == "recorded") {
        // The proof type's R1CS from its blank circuit on one thread (as a cold engine without a
        // job would), then per partition the witness on all threads and a, b, c as matrix products.
        let t = Instant::now();
        let r1cs = cuzk::synth::R1cs::record(proof, hint, &|| false).expect("record the R1CS");
        results.insert("recorded".into(), recorded(&*inputs.circuits, r1cs, t.elapsed().as_secs_f64(), hint, runs));
    }
    if modes.split(',').any(|m| m == "all" || m == "native") {
        // cuzk's witness (SHA-256 native, the rest through upstream's gadgets) on one thread, as
        // bellperson's witness-only run below is, then on all threads.
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("thread pool");
        let mut rows = serde_json::Map::new();
        for (label, threads) in [("native_1_thread", 1), ("native_all_threads", cores)] {
            let mut secs = Vec::new();
            for i in 0..runs {
                let t = Instant::now();
                let w = if threads == 1 { one.install(|| inputs.circuits.witness(0, hint)) } else { inputs.circuits.witness(0, hint) }.expect("witness");
                let s = t.elapsed().as_secs_f64();
                println!("{label} run {i}: {s:.3}s, {} inputs, {} aux, {} constraints", w.input.len(), w.aux.len(), w.constraints);
                secs.push(s);
            }
            let med = crate::median(&secs);
            let per_core = shape.constraints as f64 / (med * threads as f64);
            println!("{label}: median {med:.3}s, {per_core:.0} constraints per core-second ({threads} threads)");
            rows.insert(label.into(), serde_json::json!({"seconds": secs, "median_s": med, "constraints_per_core_s": per_core, "threads": threads}));
        }
        results.insert("native_witness".into(), serde_json::Value::Object(rows));
    }
    if modes.split(',').any(|m| m == "all" || m == "witness") {
        // The witness alone (no linear combinations): how much of synthesis an R1CS-recording
        // design could skip. Its aux must equal full synthesis's value for value.
        let mut secs = Vec::new();
        for i in 0..runs {
            reset_peak();
            let base = peak_kib();
            let t = Instant::now();
            let (input, aux) = cuzk::synth::upstream::of(&*inputs.circuits).expect("upstream paths").witness_sequential(0).expect("witness");
            let s = t.elapsed().as_secs_f64();
            let peak = peak_kib().saturating_sub(base) >> 10;
            println!("witness_only run {i}: {s:.2}s, peak +{peak} MiB RSS, {} inputs, {} aux", input.len(), aux.len());
            if i == 0 && std::env::var_os("CUZK_BENCH_CHECK_WITNESS").is_some() {
                drop((input, aux));
                let full = cuzk::synth::upstream::of(&*inputs.circuits).expect("upstream paths").synthesize_sequential(0, hint).expect("synthesis");
                let (input, aux) = cuzk::synth::upstream::of(&*inputs.circuits).expect("upstream paths").witness_sequential(0).expect("witness");
                println!(
                    "witness_only equals full synthesis: inputs {}, aux {} ({} vs {} aux)",
                    input == full.input,
                    aux == full.aux,
                    aux.len(),
                    full.aux.len()
                );
            }
            secs.push(s);
        }
        let med = crate::median(&secs);
        let per_core = shape.constraints as f64 / med;
        println!("witness_only: median {med:.2}s, {per_core:.0} constraints per core-second (1 thread)");
        results.insert("witness_only".into(), serde_json::json!({"seconds": secs, "median_s": med, "constraints_per_core_s": per_core}));
    }
    println!(
        "{}",
        serde_json::json!({"bench": "synth-shaped", "proof": registry::seal_name(proof), "cores": cores, "constraints": shape.constraints,
            "c1_bytes_gen_s": gen_s, "parse_s": parse_s, "results": results})
    );
}
