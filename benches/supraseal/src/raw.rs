//! `supraseal-c2-bench raw <params> <witness-dir> <runs> [circuits ...]`: supraseal-c2's Groth16 prover alone,
//! on the witness and SRS that `cuzk-gpu bench-synthetic --export-witness DIR --export-params
//! FILE` wrote (the very scalars and points cuzk proved), so the two provers are timed on one
//! workload. Witness files: a, b, c, input, aux (raw 32-byte Montgomery scalars), three density
//! bitmaps (u64 words) and meta.json. For each `circuits` value (default 1), `runs` calls that
//! each prove that many copies of the witness at once, the way filecoin-proofs hands supraseal-c2 a 32 GiB sector's 10 partitions (its
//! per-circuit cost can be lower in a batch). Prints one JSON line per run; run 0 also waits for
//! the SRS read, which supraseal-c2 starts in the background of `SRS::try_new`.

use std::{fs::File, io::Read, path::Path, time::Instant};

/// supraseal-c2's `groth16_proof`: affine G1 a, G2 b, G1 c (blst layouts, no flags).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawProof {
    a: [u64; 12],
    b: [u64; 24],
    c: [u64; 12],
}

#[derive(serde::Deserialize)]
struct Meta {
    constraints: usize,
    inputs: usize,
    aux: usize,
    a_aux_total: usize,
    b_input_total: usize,
    b_aux_total: usize,
}

/// A file of `T`s (plain old data) read into an aligned vector.
fn read_words<T: Copy + Default>(path: &Path) -> Vec<T> {
    let mut f = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let len = f.metadata().expect("metadata").len() as usize;
    assert_eq!(len % std::mem::size_of::<T>(), 0, "{}: size {len}", path.display());
    let mut v = vec![T::default(); len / std::mem::size_of::<T>()];
    // SAFETY: T is plain old data ([u64; N] or u64): any bytes are a valid value.
    let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, len) };
    f.read_exact(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    v
}

pub fn main(args: &[String]) {
    let (params, dir) = (Path::new(&args[2]), Path::new(&args[3]));
    let runs: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(3);
    let mut batches: Vec<usize> = args[5.min(args.len())..].iter().filter_map(|s| s.parse().ok()).filter(|&k| k > 0).collect();
    if batches.is_empty() {
        batches.push(1);
    }
    let meta: Meta = serde_json::from_slice(&std::fs::read(dir.join("meta.json")).expect("meta.json")).expect("meta");
    let t = Instant::now();
    let scalars = |name: &str| read_words::<[u64; 4]>(&dir.join(name));
    let (a, b, c, input, aux) = (scalars("a"), scalars("b"), scalars("c"), scalars("input"), scalars("aux"));
    let bits = |name: &str| read_words::<u64>(&dir.join(name));
    let (a_aux, b_in, b_aux) = (bits("a_aux_density"), bits("b_input_density"), bits("b_aux_density"));
    assert_eq!((a.len(), input.len(), aux.len()), (meta.constraints, meta.inputs, meta.aux), "witness files vs meta.json");
    let read_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let srs = supraseal_c2::SRS::try_new(params.to_path_buf(), false)
        .unwrap_or_else(|e| panic!("supraseal-c2 SRS {}: {}", params.display(), String::from(e)));
    let srs_s = t.elapsed().as_secs_f64();
    println!("{}", serde_json::json!({"peer": "supraseal-c2", "witness_read_s": read_s, "srs_try_new_s": srs_s, "constraints": meta.constraints}));
    // Any fixed blinding factors (Montgomery limbs): both provers' cost does not depend on them.
    for (k, i) in batches.iter().flat_map(|&k| (0..runs).map(move |i| (k, i))) {
        let (r, s) = (vec![[7u64, 0, 0, 0]; k], vec![[11u64, 0, 0, 0]; k]);
        let mut proofs = vec![RawProof { a: [0; 12], b: [0; 24], c: [0; 12] }; k];
        let t = Instant::now();
        supraseal_c2::generate_groth16_proof(
            &vec![a.as_ptr(); k],
            &vec![b.as_ptr(); k],
            &vec![c.as_ptr(); k],
            meta.constraints,
            &vec![input.as_ptr(); k],
            &vec![aux.as_ptr(); k],
            meta.inputs,
            meta.aux,
            &a_aux,
            &b_in,
            &b_aux,
            meta.a_aux_total,
            meta.b_input_total,
            meta.b_aux_total,
            k,
            &r,
            &s,
            &mut proofs,
            &srs,
        );
        let wall = t.elapsed().as_secs_f64();
        println!(
            "{}",
            serde_json::json!({"peer": "supraseal-c2", "bench": "raw", "run": i, "constraints": meta.constraints,
                "circuits": k, "prove_s": wall, "per_circuit_s": wall / k as f64,
                "proof_nonzero": proofs[0].a.iter().any(|&x| x != 0)})
        );
    }
}
