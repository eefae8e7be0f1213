//! Decoded-SRS cache (opt-in, engine config `srs_cache_dir`): the points of a decoded params file
//! written once in their in-memory layout, so a later load (another process, a restart) is a
//! read plus a checksum instead of a decode. A cache file is about as large as its params file,
//! which is why nothing is cached unless a directory is configured.
//!
//! A cache is a copy, never a trust root (DESIGN §7). It is used only when everything matches:
//! the cache file is a regular file owned by this process's user (or root) and writable by
//! nobody else, in a directory nobody else can write (so only a process that could also have
//! decoded the params file wrote it); format version; this build's point layout (sizes and the
//! bytes of the G1/G2 generators); the params file's identity (device, inode, length, mtime and
//! ctime — a rewrite or a `touch` back to the old mtime changes the ctime); a validation level at
//! least the one asked for; the verifying key, which must equal the one just read from the params
//! file itself (proofs are only ever judged against that one); and every section's CRC-32.
//! Anything else — missing, stale, truncated, corrupt, foreign — falls back to decoding the
//! params file (and rewriting the cache); a bad cache never fails a load.
//!
//! Layout: header (little-endian u64 fields, see [`Header`]), then vk (alpha_g1, beta_g1,
//! beta_g2, gamma_g2, delta_g1, delta_g2), ic, h, l, a, b_g1, b_g2 as raw point memory.

use std::fs::{self, File, Metadata};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::Validation;
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::files::{self, Trust};

const MAGIC: [u8; 8] = *b"CUZKSRS\0";
const VERSION: u64 = 2;
const G1: usize = std::mem::size_of::<G1Affine>();
const G2: usize = std::mem::size_of::<G2Affine>();
/// Sections after the header: the vk block, then ic, h, l, a, b_g1, b_g2.
const SECTIONS: usize = 7;
const VK_BYTES: usize = 3 * G1 + 3 * G2; // alpha, beta, delta (G1); beta, gamma, delta (G2)
const CHUNK: usize = 16 << 20;

/// Where the cache of `params` lives in `dir`.
pub fn path_for(dir: &Path, params: &Path) -> PathBuf {
    let name = params.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "params".into());
    dir.join(format!("{name}.cuzk-srs"))
}

/// What identifies the params file a cache was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    len: u64,
    mtime_ns: u64,
    ctime_ns: u64,
    dev: u64,
    ino: u64,
}

impl Source {
    pub fn of(meta: &Metadata) -> Source {
        let ns = |s: i64, n: i64| (s as u64).wrapping_mul(1_000_000_000).wrapping_add(n as u64);
        Source {
            len: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

impl Source {
    /// A fixed identity, for fuzzing the reader with inputs that were written elsewhere
    /// (a real params file's identity differs on every machine and every copy).
    #[doc(hidden)]
    pub fn fixed_for_fuzzing() -> Source {
        Source { len: 1, mtime_ns: 2, ctime_ns: 3, dev: 4, ino: 5 }
    }
}

struct Header {
    source: Source,
    validation: Validation,
    counts: [u64; SECTIONS - 1],
    crcs: [u32; SECTIONS],
}

// magic, version, g1 size, g2 size, source len, mtime, ctime, dev, ino, validation, 6 counts, 7 crcs
const FIELDS: usize = 16 + SECTIONS;
const PROBE_BYTES: usize = G1 + G2;
const HEADER_BYTES: usize = 8 * FIELDS + PROBE_BYTES;

fn validation_code(v: Validation) -> u64 {
    match v {
        Validation::None => 0,
        Validation::OnCurve => 1,
        Validation::Full => 2,
    }
}

fn validation_of(code: u64) -> Option<Validation> {
    [Validation::None, Validation::OnCurve, Validation::Full].get(code as usize).copied()
}

/// The bytes of the generators: a build whose point memory differs (layout, Montgomery form)
/// cannot read this build's caches.
fn probe() -> Vec<u8> {
    let mut p = Vec::with_capacity(PROBE_BYTES);
    p.extend_from_slice(bytes_of(&[G1Affine::generator()]));
    p.extend_from_slice(bytes_of(&[G2Affine::generator()]));
    p
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES);
        out.extend_from_slice(&MAGIC);
        let mut fields = vec![
            VERSION,
            G1 as u64,
            G2 as u64,
            self.source.len,
            self.source.mtime_ns,
            self.source.ctime_ns,
            self.source.dev,
            self.source.ino,
            validation_code(self.validation),
        ];
        fields.extend_from_slice(&self.counts);
        fields.extend(self.crcs.iter().map(|&c| c as u64));
        for f in fields {
            out.extend_from_slice(&f.to_le_bytes());
        }
        out.extend_from_slice(&probe());
        debug_assert_eq!(out.len(), HEADER_BYTES);
        out
    }

    /// `Err(reason)` when the bytes are not a header this build can use.
    fn decode(b: &[u8]) -> std::result::Result<Header, String> {
        if b.len() < HEADER_BYTES || b[..8] != MAGIC {
            return Err("not a cuzk SRS cache".into());
        }
        let f = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        if f(1) != VERSION {
            return Err(format!("format version {} (this build reads {VERSION})", f(1)));
        }
        if f(2) != G1 as u64 || f(3) != G2 as u64 || b[8 * FIELDS..HEADER_BYTES] != probe()[..] {
            return Err("written by a build with another point layout".into());
        }
        let validation = validation_of(f(9)).ok_or("unknown validation level")?;
        let mut counts = [0u64; SECTIONS - 1];
        for (k, c) in counts.iter_mut().enumerate() {
            *c = f(10 + k);
        }
        let mut crcs = [0u32; SECTIONS];
        for (k, c) in crcs.iter_mut().enumerate() {
            *c = f(16 + k) as u32;
        }
        let source = Source { len: f(4), mtime_ns: f(5), ctime_ns: f(6), dev: f(7), ino: f(8) };
        Ok(Header { source, validation, counts, crcs })
    }

    /// Byte length of each section; None when the counts cannot be real (corrupt header).
    fn section_bytes(&self) -> Option<[usize; SECTIONS]> {
        let c = self.counts;
        let b = |n: u64, size: usize| usize::try_from(n).ok()?.checked_mul(size);
        Some([VK_BYTES, b(c[0], G1)?, b(c[1], G1)?, b(c[2], G1)?, b(c[3], G1)?, b(c[4], G1)?, b(c[5], G2)?])
    }
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: only instantiated with G1Affine / G2Affine: #[repr(transparent)] over blst's
    // affine points, plain u64 limbs without padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// CRC-32 of `b`, computed on all threads in chunks and combined in order.
fn crc(b: &[u8]) -> u32 {
    let parts: Vec<crc32fast::Hasher> = b
        .par_chunks(CHUNK)
        .map(|c| {
            let mut h = crc32fast::Hasher::new();
            h.update(c);
            h
        })
        .collect();
    let mut all = crc32fast::Hasher::new();
    for p in &parts {
        all.combine(p);
    }
    all.finalize()
}

/// Read `n` points of `T` at `offset`, in parallel chunks (`cancel` stops it between them).
fn read_points<T: Copy + Send>(file: &File, offset: u64, n: usize, cancel: &CancelToken) -> std::io::Result<Vec<T>> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    let len = n * std::mem::size_of::<T>();
    crate::pages::prefer_huge_pages(v.as_mut_ptr().cast(), len);
    {
        // SAFETY: the capacity holds `len` bytes; they are only written here (u8 has no
        // invalid values), and every bit pattern is a valid T (plain limbs, see bytes_of).
        let buf = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) };
        buf.par_chunks_mut(CHUNK)
            .enumerate()
            .try_for_each(|(i, c)| {
                if cancel.is_cancelled() {
                    return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "the load was cancelled"));
                }
                file.read_exact_at(c, offset + (i * CHUNK) as u64)
            })?;
    }
    // SAFETY: all `len` bytes were read above.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// What a cache must match besides its own checksums: the params file it was made from and
/// what was read from that file's head just now.
pub struct Expect<'a> {
    pub source: Source,
    /// Points per section (ic, h, l, a, b_g1, b_g2) in the params file.
    pub counts: [usize; SECTIONS - 1],
    /// The verifying key read from the params file (the trust root).
    pub vk: &'a VerifyingKey<Bls12>,
    pub validation: Validation,
}

/// The cached parameters of the params file `want` describes, if a usable cache is there;
/// `None` says why not in the log (and the caller decodes the params file instead, unless
/// `cancel` stopped the read).
pub fn load(cache: &Path, want: &Expect<'_>, cancel: &CancelToken) -> Option<(Parameters<Bls12>, Validation)> {
    match try_load(cache, want, cancel) {
        Ok(p) => Some(p),
        Err(_) if cancel.is_cancelled() => {
            log::info!("stopped reading the SRS cache {}: the load was cancelled", cache.display());
            None
        }
        Err(why) => {
            match fs::symlink_metadata(cache) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => log::info!("no SRS cache at {} yet", cache.display()),
                _ => log::warn!("SRS cache {} not used: {why}", cache.display()),
            }
            None
        }
    }
}

fn try_load(cache: &Path, want: &Expect<'_>, cancel: &CancelToken) -> std::result::Result<(Parameters<Bls12>, Validation), String> {
    if let Some(dir) = cache.parent() {
        files::check_private_dir(dir).map_err(|why| format!("its directory {} {why}", dir.display()))?;
    }
    let file = files::open_regular(cache, Trust::Private).map_err(|why| format!("it {why}"))?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len < HEADER_BYTES as u64 {
        return Err(format!("not a cuzk SRS cache ({len} bytes)"));
    }
    let mut head = vec![0u8; HEADER_BYTES];
    file.read_exact_at(&mut head, 0).map_err(|e| format!("reading the header: {e}"))?;
    let h = Header::decode(&head)?;
    if h.source != want.source {
        return Err("the params file changed since the cache was written (or the cache belongs to another file)".into());
    }
    if validation_code(h.validation) < validation_code(want.validation) {
        return Err(format!("cached with validation {}, {} asked for", h.validation.name(), want.validation.name()));
    }
    if h.counts.iter().zip(want.counts).any(|(&c, w)| c != w as u64) {
        return Err("its section sizes differ from the params file's".into());
    }
    let sizes = h.section_bytes().ok_or("corrupt header (impossible section sizes)")?;
    let total = sizes.iter().try_fold(HEADER_BYTES as u64, |t, &s| t.checked_add(s as u64)).unwrap_or(u64::MAX);
    if len != total {
        return Err(format!("{len} bytes, the header describes {total}"));
    }
    let mut offsets = [0u64; SECTIONS];
    let mut off = HEADER_BYTES as u64;
    for (o, s) in offsets.iter_mut().zip(sizes) {
        *o = off;
        off += s as u64;
    }
    let c = h.counts.map(|c| c as usize);
    let io = |e: std::io::Error| format!("reading: {e}");
    let vk_g1: Vec<G1Affine> = read_points(&file, offsets[0], 3, cancel).map_err(io)?; // alpha, beta, delta (G1)
    let vk_g2: Vec<G2Affine> = read_points(&file, offsets[0] + 3 * G1 as u64, 3, cancel).map_err(io)?; // beta, gamma, delta (G2)
    let g1 = |k: usize| read_points::<G1Affine>(&file, offsets[k], c[k - 1], cancel).map_err(io);
    let (ic, h_, l, a, b_g1) = (g1(1)?, g1(2)?, g1(3)?, g1(4)?, g1(5)?);
    let b_g2: Vec<G2Affine> = read_points(&file, offsets[6], c[5], cancel).map_err(io)?;

    let mut vk_bytes = Vec::with_capacity(VK_BYTES);
    vk_bytes.extend_from_slice(bytes_of(&vk_g1));
    vk_bytes.extend_from_slice(bytes_of(&vk_g2));
    let got = [
        crc(&vk_bytes),
        crc(bytes_of(&ic)),
        crc(bytes_of(&h_)),
        crc(bytes_of(&l)),
        crc(bytes_of(&a)),
        crc(bytes_of(&b_g1)),
        crc(bytes_of(&b_g2)),
    ];
    if got != h.crcs {
        return Err("checksum mismatch (corrupt cache)".into());
    }
    let vk = VerifyingKey {
        alpha_g1: vk_g1[0],
        beta_g1: vk_g1[1],
        delta_g1: vk_g1[2],
        beta_g2: vk_g2[0],
        gamma_g2: vk_g2[1],
        delta_g2: vk_g2[2],
        ic,
    };
    if vk != *want.vk {
        return Err("its verifying key differs from the params file's (edited or foreign cache)".into());
    }
    let params = Parameters {
        vk,
        h: Arc::new(h_),
        l: Arc::new(l),
        a: Arc::new(a),
        b_g1: Arc::new(b_g1),
        b_g2: Arc::new(b_g2),
    };
    Ok((params, h.validation))
}

/// Write the cache of `p` (decoded from a params file identified by `source` with `validation`)
/// to `cache`: into a private temp file of a unique name (removed on any failure), then renamed
/// into place, so a reader never sees half a file and concurrent writers never interleave.
/// The directory is created private (0700) when missing and must be private when present.
pub fn store(cache: &Path, source: Source, validation: Validation, p: &Parameters<Bls12>) -> Result<()> {
    let fail = |what: &str, e: &dyn std::fmt::Display| err!(Internal, "SRS cache {}: {what}: {e}", cache.display());
    if let Some(dir) = cache.parent() {
        files::create_private_dir(dir).map_err(|e| fail("creating its directory", &e))?;
        files::check_private_dir(dir).map_err(|why| fail("its directory", &why))?;
    }
    let tmp = files::TempFile::create(cache).map_err(|e| fail("creating a temp file", &e))?;

    let vk = &p.vk;
    let mut vk_bytes = Vec::with_capacity(VK_BYTES);
    vk_bytes.extend_from_slice(bytes_of(&[vk.alpha_g1, vk.beta_g1, vk.delta_g1]));
    vk_bytes.extend_from_slice(bytes_of(&[vk.beta_g2, vk.gamma_g2, vk.delta_g2]));
    let sections: [&[u8]; SECTIONS] = [
        &vk_bytes,
        bytes_of(&vk.ic),
        bytes_of(&p.h),
        bytes_of(&p.l),
        bytes_of(&p.a),
        bytes_of(&p.b_g1),
        bytes_of(&p.b_g2),
    ];
    let header = Header {
        source,
        validation,
        counts: [vk.ic.len(), p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()].map(|n| n as u64),
        crcs: sections.map(crc),
    };
    let mut w = BufWriter::with_capacity(CHUNK, tmp.file());
    w.write_all(&header.encode()).map_err(|e| fail("writing", &e))?;
    for s in sections {
        w.write_all(s).map_err(|e| fail("writing", &e))?;
    }
    w.flush().map_err(|e| fail("writing", &e))?;
    drop(w);
    tmp.commit(cache).map_err(|e| fail("publishing", &e))?;
    Ok(())
}

/// Overwrite the verifying key inside an existing cache file and fix its checksum, the way
/// anyone able to write the cache directory could: what the loader must refuse (tests only).
#[doc(hidden)]
pub fn rewrite_vk(cache: &Path, vk: &VerifyingKey<Bls12>) -> std::io::Result<()> {
    let mut bytes = fs::read(cache)?;
    let mut block = Vec::with_capacity(VK_BYTES);
    block.extend_from_slice(bytes_of(&[vk.alpha_g1, vk.beta_g1, vk.delta_g1]));
    block.extend_from_slice(bytes_of(&[vk.beta_g2, vk.gamma_g2, vk.delta_g2]));
    if bytes.len() < HEADER_BYTES + VK_BYTES {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    bytes[HEADER_BYTES..HEADER_BYTES + VK_BYTES].copy_from_slice(&block);
    let at = 8 * 16; // the vk block's CRC field
    bytes[at..at + 8].copy_from_slice(&(crc(&block) as u64).to_le_bytes());
    fs::write(cache, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Group;
    use std::os::unix::fs::PermissionsExt;

    fn params() -> Parameters<Bls12> {
        let g1 = |k: u64| G1Affine::from(blstrs::G1Projective::generator() * blstrs::Scalar::from(k));
        let g2 = |k: u64| G2Affine::from(blstrs::G2Projective::generator() * blstrs::Scalar::from(k));
        Parameters {
            vk: VerifyingKey {
                alpha_g1: g1(2),
                beta_g1: g1(3),
                beta_g2: g2(4),
                gamma_g2: g2(5),
                delta_g1: g1(6),
                delta_g2: g2(7),
                ic: vec![g1(8), g1(9)],
            },
            h: Arc::new((10..20).map(g1).collect()),
            l: Arc::new((20..25).map(g1).collect()),
            a: Arc::new((25..32).map(g1).collect()),
            b_g1: Arc::new((32..35).map(g1).collect()),
            b_g2: Arc::new((35..38).map(g2).collect()),
        }
    }

    fn expect(p: &Parameters<Bls12>, source: Source, validation: Validation) -> Expect<'_> {
        let counts = [p.vk.ic.len(), p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()];
        Expect { source, counts, vk: &p.vk, validation }
    }

    fn refusal(cache: &Path, want: &Expect<'_>) -> String {
        match try_load(cache, want, CancelToken::never()) {
            Ok(_) => panic!("cache {} accepted", cache.display()),
            Err(why) => why,
        }
    }

    #[test]
    fn round_trip_and_every_reason_to_refuse() {
        let dir = std::env::temp_dir().join(format!("cuzk-srs-cache-{}", std::process::id()));
        let cache = path_for(&dir, Path::new("/x/v28-test.params"));
        let src = Source { len: 1234, mtime_ns: 5678, ctime_ns: 91011, dev: 3, ino: 77 };
        let p = params();
        store(&cache, src, Validation::OnCurve, &p).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temp file left behind");
        assert_eq!(fs::metadata(&cache).unwrap().mode() & 0o777, 0o600);

        let (back, v) = load(&cache, &expect(&p, src, Validation::OnCurve), CancelToken::never()).expect("usable cache");
        assert!(back == p, "parameters differ after the round trip");
        assert_eq!(v, Validation::OnCurve);
        assert!(load(&cache, &expect(&p, src, Validation::None), CancelToken::never()).is_some());
        let cancelled = CancelToken::new();
        cancelled.cancel();
        assert!(load(&cache, &expect(&p, src, Validation::None), &cancelled).is_none(), "a cancelled read returns nothing");

        // Refused: a stronger validation, another source (inode, ctime, length), other sizes.
        assert!(refusal(&cache, &expect(&p, src, Validation::Full)).contains("validation"));
        for other in [Source { len: 1235, ..src }, Source { ino: 78, ..src }, Source { ctime_ns: 1, ..src }] {
            assert!(refusal(&cache, &expect(&p, other, Validation::None)).contains("changed"));
        }
        let mut fewer = expect(&p, src, Validation::None);
        fewer.counts[1] -= 1;
        assert!(refusal(&cache, &fewer).contains("section sizes"));

        // A verifying key edited in the cache with its CRC fixed: refused (the params file's
        // key is the trust root), although every checksum matches.
        let good = fs::read(&cache).unwrap();
        let mut forged_vk = p.vk.clone();
        forged_vk.gamma_g2 = G2Affine::identity();
        forged_vk.delta_g2 = G2Affine::identity();
        rewrite_vk(&cache, &forged_vk).unwrap();
        assert!(refusal(&cache, &expect(&p, src, Validation::None)).contains("verifying key"));

        // Corruption, truncation, garbage.
        let mut bytes = good.clone();
        let last = bytes.len() - 5;
        bytes[last] ^= 1;
        fs::write(&cache, &bytes).unwrap();
        assert!(refusal(&cache, &expect(&p, src, Validation::None)).contains("checksum"));
        fs::write(&cache, &bytes[..bytes.len() - 1]).unwrap();
        assert!(refusal(&cache, &expect(&p, src, Validation::None)).contains("bytes"));
        fs::write(&cache, b"not a cache at all").unwrap();
        assert!(refusal(&cache, &expect(&p, src, Validation::None)).contains("not a cuzk SRS cache"));

        // A cache others could have written: loose mode, or a loose directory.
        fs::write(&cache, &good).unwrap();
        assert!(load(&cache, &expect(&p, src, Validation::None), CancelToken::never()).is_some());
        fs::set_permissions(&cache, fs::Permissions::from_mode(0o666)).unwrap();
        assert!(refusal(&cache, &expect(&p, src, Validation::None)).contains("writable by other users"));
        fs::set_permissions(&cache, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(refusal(&cache, &expect(&p, src, Validation::None)).contains("directory"));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(load(&dir.join("missing"), &expect(&p, src, Validation::None), CancelToken::never()).is_none());
        fs::remove_dir_all(&dir).unwrap();
    }
}
