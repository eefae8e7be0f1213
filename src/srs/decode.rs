//! Parallel decoder for bellperson's `Parameters::write` format (no header):
//! vk (alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, uncompressed), then six
//! big-endian-u32-counted sections: ic, h, l, a, b_g1 (G1) and b_g2 (G2).
//!
//! bellperson reads this one point at a time; we first walk the section headers (cheap), check
//! that the file is exactly as long as they say, then decode every section with rayon.

use std::path::Path;

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};
use group::{prime::PrimeCurveAffine, UncompressedEncoding};
use rayon::prelude::*;

use crate::cancel::CancelToken;
use crate::error::Result;
use crate::progress::Progress;

const G1_LEN: usize = 96;
const G2_LEN: usize = 192;
const VK_FIXED_LEN: usize = 3 * G1_LEN + 3 * G2_LEN;

/// How much checking each decoded point gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validation {
    /// Trust the file (fastest; for files checked by digest).
    None,
    /// Every point must be on the curve and not the identity: catches corruption and truncation
    /// at a few percent of decode time. The default.
    OnCurve,
    /// Also checks prime-order subgroup membership (expensive: minutes for big files).
    Full,
}

impl Validation {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(Validation::None),
            "on_curve" | "" => Ok(Validation::OnCurve),
            "full" => Ok(Validation::Full),
            _ => Err(err!(InvalidArgument, "srs_validation must be \"none\", \"on_curve\" or \"full\", got {s:?}")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Validation::None => "none",
            Validation::OnCurve => "on_curve",
            Validation::Full => "full",
        }
    }
}

trait Point: PrimeCurveAffine + UncompressedEncoding + Send + Sync {
    const LEN: usize;
    const NAME: &'static str;
    fn in_subgroup(&self) -> bool;
    /// Decode without any check (`Validation::None`): big-endian coordinates straight to
    /// Montgomery form. Encodings with flag bits (infinity) take the checked path.
    fn trusted(bytes: &[u8]) -> Option<Self>;
}

/// `bytes` (48, big-endian) as a field element in Montgomery form, unchecked.
fn fp(bytes: &[u8]) -> blst::blst_fp {
    let mut out = blst::blst_fp::default();
    // SAFETY: `bytes` holds the 48 bytes blst reads.
    unsafe { blst::blst_fp_from_bendian(&mut out, bytes.as_ptr()) };
    out
}

/// Flag bits (compressed, infinity, sign) in the first byte: not a plain affine encoding.
fn flagged(bytes: &[u8]) -> bool {
    bytes[0] & 0xe0 != 0
}

fn checked<P: Point>(bytes: &[u8]) -> Option<P> {
    let mut repr = <P as UncompressedEncoding>::Uncompressed::default();
    repr.as_mut().copy_from_slice(bytes);
    // blst's deserializer checks the encoding is canonical and the point is on the curve.
    Option::from(P::from_uncompressed_unchecked(&repr))
}

impl Point for G1Affine {
    const LEN: usize = G1_LEN;
    const NAME: &'static str = "G1";
    fn in_subgroup(&self) -> bool {
        bool::from(self.is_torsion_free())
    }
    fn trusted(b: &[u8]) -> Option<Self> {
        if flagged(b) {
            return checked(b);
        }
        let mut p = G1Affine::identity();
        let raw: &mut blst::blst_p1_affine = p.as_mut();
        raw.x = fp(&b[..48]);
        raw.y = fp(&b[48..96]);
        Some(p)
    }
}

impl Point for G2Affine {
    const LEN: usize = G2_LEN;
    const NAME: &'static str = "G2";
    fn in_subgroup(&self) -> bool {
        bool::from(self.is_torsion_free())
    }
    fn trusted(b: &[u8]) -> Option<Self> {
        if flagged(b) {
            return checked(b);
        }
        // Uncompressed G2: x.c1, x.c0, y.c1, y.c0.
        let mut p = G2Affine::identity();
        let raw: &mut blst::blst_p2_affine = p.as_mut();
        raw.x.fp = [fp(&b[48..96]), fp(&b[..48])];
        raw.y.fp = [fp(&b[144..192]), fp(&b[96..144])];
        Some(p)
    }
}

fn decode_one<P: Point>(bytes: &[u8], v: Validation) -> Option<P> {
    let p: P = match v {
        Validation::None => return P::trusted(bytes),
        _ => checked(bytes)?,
    };
    let ok = !bool::from(p.is_identity()) && (v != Validation::Full || p.in_subgroup());
    ok.then_some(p)
}

/// Random-access reads of a params image: a file (read with `pread`, never mapped, so a file
/// truncated while it is decoded is an error and not a SIGBUS) or bytes in memory (tests, fuzzing).
pub trait ReadAt: Sync {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for std::fs::File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..o.checked_add(buf.len())?))
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// A section of `count` points starting at byte `offset`.
#[derive(Debug, Clone, Copy)]
pub struct Section {
    pub name: &'static str,
    pub offset: u64,
    pub count: usize,
}

/// Points decoded per read: 16 Ki points (1.5 MiB of G1, 3 MiB of G2) per pread.
const CHUNK_POINTS: usize = 1 << 14;

fn read_error(path: &Path, what: &str, e: std::io::Error) -> crate::error::Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        err!(SrsLoad, "{}: truncated params file: it ended while {what} was read (was it truncated while loading?)", path.display())
    } else {
        err!(SrsLoad, "{}: reading {what}: {e}", path.display())
    }
}

fn decode_section<P: Point>(
    src: &(impl ReadAt + ?Sized),
    s: Section,
    v: Validation,
    path: &Path,
    progress: &Progress,
    cancel: &CancelToken,
) -> Result<Vec<P>> {
    let mut out = vec![P::identity(); s.count];
    // Ok(None) = read fine but a point is bad (found again below, only on this error path).
    let ok = out.par_chunks_mut(CHUNK_POINTS).enumerate().try_for_each_init(Vec::new, |buf: &mut Vec<u8>, (i, dst)| {
        cancel.check(|| format!("the SRS load of {}", path.display())).map_err(Some)?;
        buf.resize(dst.len() * P::LEN, 0);
        let at = s.offset + (i * CHUNK_POINTS * P::LEN) as u64;
        src.read_exact_at(buf, at).map_err(|e| Some(read_error(path, s.name, e)))?;
        for (d, c) in dst.iter_mut().zip(buf.chunks_exact(P::LEN)) {
            *d = decode_one::<P>(c, v).ok_or(None)?;
        }
        progress.add(buf.len() as u64);
        Ok(())
    });
    match ok {
        Ok(()) => Ok(out),
        Err(Some(e)) => Err(e),
        Err(None) => Err(first_bad::<P>(src, s, v, path)),
    }
}

/// The error naming the first invalid point of a section already known to hold one.
fn first_bad<P: Point>(src: &(impl ReadAt + ?Sized), s: Section, v: Validation, path: &Path) -> crate::error::Error {
    let mut buf = vec![0u8; P::LEN];
    for k in 0..s.count {
        let at = s.offset + (k * P::LEN) as u64;
        if let Err(e) = src.read_exact_at(&mut buf, at) {
            return read_error(path, s.name, e);
        }
        if decode_one::<P>(&buf, v).is_none() {
            return err!(
                SrsLoad,
                "{}: corrupt params file: {} point {} of section {} (at byte {}) is not a valid point (validation {})",
                path.display(),
                P::NAME,
                k,
                s.name,
                at,
                v.name()
            );
        }
    }
    err!(SrsLoad, "{}: section {} changed while it was read", path.display(), s.name)
}

/// Walk the counted sections and check the file length `len` matches them exactly.
pub fn layout(src: &(impl ReadAt + ?Sized), len: u64, path: &Path) -> Result<[Section; 6]> {
    let too_short = |what: &str, need: u64| {
        err!(
            SrsLoad,
            "{}: truncated params file: {} needs {} bytes but the file has {}",
            path.display(),
            what,
            need,
            len
        )
    };
    if len < VK_FIXED_LEN as u64 {
        return Err(too_short("the verifying key", VK_FIXED_LEN as u64));
    }
    let names = ["ic", "h", "l", "a", "b_g1", "b_g2"];
    let mut pos = VK_FIXED_LEN as u64;
    let mut out = [Section { name: "", offset: 0, count: 0 }; 6];
    for (i, name) in names.iter().enumerate() {
        if pos + 4 > len {
            return Err(too_short(name, pos + 4));
        }
        let mut hdr = [0u8; 4];
        src.read_exact_at(&mut hdr, pos).map_err(|e| read_error(path, name, e))?;
        let count = u32::from_be_bytes(hdr) as usize;
        let elem = if i == 5 { G2_LEN } else { G1_LEN };
        let end = pos + 4 + (count * elem) as u64;
        if end > len {
            return Err(too_short(name, end));
        }
        out[i] = Section { name, offset: pos + 4, count };
        pos = end;
    }
    if pos != len {
        return Err(err!(
            SrsLoad,
            "{}: corrupt params file: sections end at byte {} but the file has {} bytes",
            path.display(),
            pos,
            len
        ));
    }
    Ok(out)
}

/// The verifying key at the head of a params image (its `ic` section given by `layout`):
/// always fully checked — on the curve, in the subgroup, not degenerate — whatever the
/// validation level, since every proof is judged against it.
pub fn read_vk(src: &(impl ReadAt + ?Sized), ic: Section, path: &Path) -> Result<VerifyingKey<Bls12>> {
    let mut head = vec![0u8; VK_FIXED_LEN];
    src.read_exact_at(&mut head, 0).map_err(|e| read_error(path, "the verifying key", e))?;
    let ic = decode_section::<G1Affine>(src, ic, Validation::Full, path, &Progress::new("vk ic", 0), CancelToken::never())?;
    let bad = |what: &str| err!(SrsLoad, "{}: corrupt params file: verifying key {what} is not a valid point", path.display());
    let g1 = |i: usize, what: &str| decode_one::<G1Affine>(&head[i..i + G1_LEN], Validation::Full).ok_or_else(|| bad(what));
    let g2 = |i: usize, what: &str| decode_one::<G2Affine>(&head[i..i + G2_LEN], Validation::Full).ok_or_else(|| bad(what));
    let vk = VerifyingKey {
        alpha_g1: g1(0, "alpha_g1")?,
        beta_g1: g1(G1_LEN, "beta_g1")?,
        beta_g2: g2(2 * G1_LEN, "beta_g2")?,
        gamma_g2: g2(2 * G1_LEN + G2_LEN, "gamma_g2")?,
        delta_g1: g1(2 * G1_LEN + 2 * G2_LEN, "delta_g1")?,
        delta_g2: g2(3 * G1_LEN + 2 * G2_LEN, "delta_g2")?,
        ic,
    };
    check_vk(&vk).map_err(|why| err!(SrsLoad, "{}: refused verifying key: {why}", path.display()))?;
    Ok(vk)
}

/// Refuse verifying keys under which proofs can be forged without a witness: identity alpha,
/// beta, gamma or delta (e.g. gamma = delta = 0 accepts A = alpha, B = beta, any C), gamma equal
/// to delta (C = -IC(inputs) then passes), or an empty `ic`.
pub fn check_vk(vk: &VerifyingKey<Bls12>) -> std::result::Result<(), String> {
    let id1 = |p: &G1Affine| bool::from(p.is_identity());
    let id2 = |p: &G2Affine| bool::from(p.is_identity());
    for (name, bad) in [
        ("alpha_g1", id1(&vk.alpha_g1)),
        ("beta_g1", id1(&vk.beta_g1)),
        ("delta_g1", id1(&vk.delta_g1)),
        ("beta_g2", id2(&vk.beta_g2)),
        ("gamma_g2", id2(&vk.gamma_g2)),
        ("delta_g2", id2(&vk.delta_g2)),
    ] {
        if bad {
            return Err(format!("{name} is the identity (proofs could be forged)"));
        }
    }
    if vk.gamma_g2 == vk.delta_g2 {
        return Err("gamma_g2 equals delta_g2 (proofs could be forged)".into());
    }
    if vk.ic.is_empty() {
        return Err("it has no ic points".into());
    }
    Ok(())
}

/// Decode a whole params image of `len` bytes.
pub fn decode_params(src: &(impl ReadAt + ?Sized), len: u64, v: Validation, path: &Path) -> Result<Parameters<Bls12>> {
    let sections = layout(src, len, path)?;
    let vk = read_vk(src, sections[0], path)?;
    decode_points(src, &sections, vk, v, path, CancelToken::never())
}

/// Decode the proving-key sections that `layout` found (ic is already in `vk`); `cancel` stops
/// it between chunks.
pub fn decode_points(
    src: &(impl ReadAt + ?Sized),
    sections: &[Section; 6],
    vk: VerifyingKey<Bls12>,
    v: Validation,
    path: &Path,
    cancel: &CancelToken,
) -> Result<Parameters<Bls12>> {
    let [_, h, l, a, b_g1, b_g2] = *sections;
    let g1_bytes = (h.count + l.count + a.count + b_g1.count) as u64 * G1Affine::LEN as u64;
    let p = &Progress::new(format!("SRS load {}", path.display()), g1_bytes + (b_g2.count * G2Affine::LEN) as u64);
    // Decode the big sections concurrently; each is itself parallel.
    let ((h, l), (a, (b_g1, b_g2))) = rayon::join(
        || rayon::join(|| decode_section::<G1Affine>(src, h, v, path, p, cancel), || decode_section::<G1Affine>(src, l, v, path, p, cancel)),
        || {
            rayon::join(
                || decode_section::<G1Affine>(src, a, v, path, p, cancel),
                || rayon::join(|| decode_section::<G1Affine>(src, b_g1, v, path, p, cancel), || decode_section::<G2Affine>(src, b_g2, v, path, p, cancel)),
            )
        },
    );
    Ok(Parameters {
        vk,
        h: h?.into(),
        l: l?.into(),
        a: a?.into(),
        b_g1: b_g1?.into(),
        b_g2: b_g2?.into(),
    })
}

/// Bytes the decoded points occupy in memory.
pub fn resident_bytes(p: &Parameters<Bls12>) -> u64 {
    let g1 = std::mem::size_of::<G1Affine>() as u64;
    let g2 = std::mem::size_of::<G2Affine>() as u64;
    g1 * (p.vk.ic.len() + p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) as u64 + g2 * p.b_g2.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Group;

    fn tiny_params() -> Vec<u8> {
        let mut p = crate::srs::generator_parameters([2, 3, 4, 5, 2]);
        p.h = vec![(blstrs::G1Projective::generator().double()).into(); 3].into();
        let mut out = Vec::new();
        p.write(&mut out).unwrap();
        out
    }

    #[test]
    fn decodes_what_bellperson_writes() {
        let data = tiny_params();
        let ours = decode_params(&data[..], data.len() as u64, Validation::Full, Path::new("x")).unwrap();
        let theirs = Parameters::<Bls12>::read(&data[..], true).unwrap();
        assert!(ours == theirs);
        for v in [Validation::None, Validation::OnCurve] {
            assert!(decode_params(&data[..], data.len() as u64, v, Path::new("x")).unwrap() == theirs, "validation {}", v.name());
        }
    }

    #[test]
    fn rejects_truncation_and_corruption() {
        let data = tiny_params();
        let e = decode_params(&data[..data.len() - 1], data.len() as u64 - 1, Validation::OnCurve, Path::new("p")).err().unwrap();
        assert!(e.message.contains("truncated"), "{}", e.message);
        let mut extra = data.clone();
        extra.push(0);
        assert!(decode_params(&extra[..], extra.len() as u64, Validation::OnCurve, Path::new("p")).err().unwrap().message.contains("corrupt"));
        let mut bad = data.clone();
        let last = bad.len() - 10;
        bad[last] ^= 0x55;
        let e = decode_params(&bad[..], bad.len() as u64, Validation::OnCurve, Path::new("p")).err().unwrap();
        assert!(e.message.contains("b_g2"), "{}", e.message);
    }
}
