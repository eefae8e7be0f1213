//! Writes a synthetic workload to files, so that a peer prover (supraseal-c2, through
//! `benches/supraseal`'s `raw` mode) proves the very witness and SRS that `cuzk-gpu
//! bench-synthetic` proved: the SRS in bellperson's `.params` layout (what supraseal-c2's SRS
//! reader and bellperson's `Parameters::read` take), the assignment as raw vectors.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use rayon::prelude::*;

use crate::synth::Assignment;

/// Points serialized per block (in parallel), then written in order.
const BLOCK: usize = 1 << 18;

fn write_points<W: Write, T: Sync, const N: usize>(w: &mut W, pts: &[T], enc: impl Fn(&T) -> [u8; N] + Sync) -> io::Result<()> {
    w.write_all(&(pts.len() as u32).to_be_bytes())?;
    let mut buf = vec![0u8; BLOCK.min(pts.len()) * N];
    for block in pts.chunks(BLOCK) {
        let out = &mut buf[..block.len() * N];
        out.par_chunks_mut(N).zip(block.par_iter()).for_each(|(d, p)| d.copy_from_slice(&enc(p)));
        w.write_all(out)?;
    }
    Ok(())
}

/// `p` in bellperson's `.params` layout: the verifying key, then h, l, a, b_g1, b_g2, each a
/// big-endian u32 count followed by uncompressed points.
pub fn write_params(p: &Parameters<Bls12>, path: &Path) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 22, File::create(path)?);
    p.vk.write(&mut w)?;
    let g1 = |x: &G1Affine| x.to_uncompressed();
    let g2 = |x: &G2Affine| x.to_uncompressed();
    for v in [&p.h, &p.l, &p.a, &p.b_g1] {
        write_points(&mut w, v, g1)?;
    }
    write_points(&mut w, &p.b_g2, g2)?;
    w.flush()?;
    w.get_ref().sync_all()
}

fn write_raw<T>(path: &Path, v: &[T]) -> io::Result<()> {
    // SAFETY: only used for Scalar (repr(transparent) over four u64 limbs) and bitmap words:
    // plain data without padding, read back as such by the peer.
    let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
    File::create(path)?.write_all(bytes)
}

/// `asg` as files in `dir`: a, b, c, input, aux (32-byte Montgomery scalars, native order),
/// a_aux_density, b_input_density, b_aux_density (bitmap words) and meta.json (lengths and
/// popcounts) — what `supraseal-c2-bench raw` reads.
pub fn write_assignment(asg: &Assignment, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let scalars: [(&str, &[Scalar]); 5] =
        [("a", &asg.a), ("b", &asg.b), ("c", &asg.c), ("input", &asg.input), ("aux", &asg.aux)];
    for (name, v) in scalars {
        write_raw(&dir.join(name), v)?;
    }
    for (name, d) in [
        ("a_aux_density", &asg.a_aux_density),
        ("b_input_density", &asg.b_input_density),
        ("b_aux_density", &asg.b_aux_density),
    ] {
        write_raw(&dir.join(name), d.bv.as_raw_slice())?;
    }
    let meta = serde_json::json!({
        "constraints": asg.a.len(), "inputs": asg.input.len(), "aux": asg.aux.len(),
        "a_aux_total": asg.a_aux_density.get_total_density(),
        "b_input_total": asg.b_input_density.get_total_density(),
        "b_aux_total": asg.b_aux_density.get_total_density(),
    });
    std::fs::write(dir.join("meta.json"), meta.to_string())
}

#[cfg(test)]
mod tests {
    use group::prime::PrimeCurveAffine;

    use super::super::synthetic::{porep_like_assignment, random_params_tiled, Shape, WitnessMix};
    use super::*;

    #[test]
    fn params_file_reads_back_with_bellperson() {
        let asg = porep_like_assignment(300, 3, 280, WitnessMix { zero: 0.5, one: 0.4, a_density: 0.9, b_density: 0.3 }, 1);
        let p = random_params_tiled(Shape::of(&asg), 2, 100);
        let dir = std::env::temp_dir().join(format!("cuzk-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.params");
        write_params(&p, &path).unwrap();
        let back = Parameters::<Bls12>::read(File::open(&path).unwrap(), true).unwrap();
        assert!(back.vk == p.vk);
        assert!(!bool::from(back.a[0].is_identity()));
        assert_eq!((back.h, back.l, back.a, back.b_g1, back.b_g2), (p.h, p.l, p.a, p.b_g1, p.b_g2));

        write_assignment(&asg, &dir.join("w")).unwrap();
        let raw = std::fs::read(dir.join("w/aux")).unwrap();
        assert_eq!(raw.len(), 32 * asg.aux.len());
        assert_eq!(&raw[32..64], &unsafe { std::mem::transmute::<Scalar, [u8; 32]>(asg.aux[1]) }[..]);
        let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("w/meta.json")).unwrap()).unwrap();
        assert_eq!(meta["constraints"], 300);
        assert_eq!(meta["b_aux_total"], asg.b_aux_density.get_total_density());
        let words = std::fs::read(dir.join("w/a_aux_density")).unwrap();
        assert_eq!(words.len(), 8 * 280usize.div_ceil(64));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
