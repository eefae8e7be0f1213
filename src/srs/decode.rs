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

use crate::error::Result;

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

/// A section of `count` points starting at byte `offset`.
#[derive(Debug, Clone, Copy)]
struct Section {
    name: &'static str,
    offset: usize,
    count: usize,
}

fn decode_section<P: Point>(data: &[u8], s: Section, v: Validation, path: &Path) -> Result<Vec<P>> {
    let bytes = &data[s.offset..s.offset + s.count * P::LEN];
    let points: Option<Vec<P>> = bytes
        .par_chunks_exact(P::LEN)
        .with_min_len(4096)
        .map(|c| decode_one::<P>(c, v))
        .collect();
    points.ok_or_else(|| {
        // Find the first bad point only on the error path.
        let bad = bytes
            .chunks_exact(P::LEN)
            .position(|c| decode_one::<P>(c, v).is_none())
            .unwrap_or(0);
        err!(
            SrsLoad,
            "{}: corrupt params file: {} point {} of section {} (at byte {}) is not a valid point (validation {})",
            path.display(),
            P::NAME,
            bad,
            s.name,
            s.offset + bad * P::LEN,
            v.name()
        )
    })
}

/// Walk the counted sections and check the file length matches them exactly.
fn layout(data: &[u8], path: &Path) -> Result<[Section; 6]> {
    let too_short = |what: &str, need: usize| {
        err!(
            SrsLoad,
            "{}: truncated params file: {} needs {} bytes but the file has {}",
            path.display(),
            what,
            need,
            data.len()
        )
    };
    let names = ["ic", "h", "l", "a", "b_g1", "b_g2"];
    let mut pos = VK_FIXED_LEN;
    let mut out = [Section { name: "", offset: 0, count: 0 }; 6];
    for (i, name) in names.iter().enumerate() {
        let hdr = data.get(pos..pos + 4).ok_or_else(|| too_short(name, pos + 4))?;
        let count = u32::from_be_bytes(hdr.try_into().expect("4 bytes")) as usize;
        let elem = if i == 5 { G2_LEN } else { G1_LEN };
        let end = pos + 4 + count * elem;
        if end > data.len() {
            return Err(too_short(name, end));
        }
        out[i] = Section { name, offset: pos + 4, count };
        pos = end;
    }
    if pos != data.len() {
        return Err(err!(
            SrsLoad,
            "{}: corrupt params file: sections end at byte {} but the file has {} bytes",
            path.display(),
            pos,
            data.len()
        ));
    }
    Ok(out)
}

fn decode_vk(data: &[u8], ic: Vec<G1Affine>, v: Validation, path: &Path) -> Result<VerifyingKey<Bls12>> {
    let bad = |what: &str| err!(SrsLoad, "{}: corrupt params file: verifying key {what} is not a valid point", path.display());
    let g1 = |i: usize, what: &str| decode_one::<G1Affine>(&data[i..i + G1_LEN], v).ok_or_else(|| bad(what));
    let g2 = |i: usize, what: &str| decode_one::<G2Affine>(&data[i..i + G2_LEN], v).ok_or_else(|| bad(what));
    Ok(VerifyingKey {
        alpha_g1: g1(0, "alpha_g1")?,
        beta_g1: g1(G1_LEN, "beta_g1")?,
        beta_g2: g2(2 * G1_LEN, "beta_g2")?,
        gamma_g2: g2(2 * G1_LEN + G2_LEN, "gamma_g2")?,
        delta_g1: g1(2 * G1_LEN + 2 * G2_LEN, "delta_g1")?,
        delta_g2: g2(3 * G1_LEN + 2 * G2_LEN, "delta_g2")?,
        ic,
    })
}

/// Decode a whole params file image.
pub fn decode_params(data: &[u8], v: Validation, path: &Path) -> Result<Parameters<Bls12>> {
    if data.len() < VK_FIXED_LEN {
        return Err(err!(
            SrsLoad,
            "{}: truncated params file: {} bytes, the verifying key alone needs {}",
            path.display(),
            data.len(),
            VK_FIXED_LEN
        ));
    }
    let [ic, h, l, a, b_g1, b_g2] = layout(data, path)?;
    // Decode the big sections concurrently; each is itself parallel.
    let ((ic, h), (l, (a, (b_g1, b_g2)))) = rayon::join(
        || rayon::join(|| decode_section::<G1Affine>(data, ic, v, path), || decode_section::<G1Affine>(data, h, v, path)),
        || {
            rayon::join(
                || decode_section::<G1Affine>(data, l, v, path),
                || {
                    rayon::join(
                        || decode_section::<G1Affine>(data, a, v, path),
                        || {
                            rayon::join(
                                || decode_section::<G1Affine>(data, b_g1, v, path),
                                || decode_section::<G2Affine>(data, b_g2, v, path),
                            )
                        },
                    )
                },
            )
        },
    );
    let vk = decode_vk(data, ic?, v, path)?;
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
        let ours = decode_params(&data, Validation::Full, Path::new("x")).unwrap();
        let theirs = Parameters::<Bls12>::read(&data[..], true).unwrap();
        assert!(ours == theirs);
        for v in [Validation::None, Validation::OnCurve] {
            assert!(decode_params(&data, v, Path::new("x")).unwrap() == theirs, "validation {}", v.name());
        }
    }

    #[test]
    fn rejects_truncation_and_corruption() {
        let data = tiny_params();
        let e = decode_params(&data[..data.len() - 1], Validation::OnCurve, Path::new("p")).err().unwrap();
        assert!(e.message.contains("truncated"), "{}", e.message);
        let mut extra = data.clone();
        extra.push(0);
        assert!(decode_params(&extra, Validation::OnCurve, Path::new("p")).err().unwrap().message.contains("corrupt"));
        let mut bad = data.clone();
        let last = bad.len() - 10;
        bad[last] ^= 0x55;
        let e = decode_params(&bad, Validation::OnCurve, Path::new("p")).err().unwrap();
        assert!(e.message.contains("b_g2"), "{}", e.message);
    }
}
