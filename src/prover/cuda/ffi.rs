//! The C interface of cuda/groth16.cu (declared in cuda/cuzk_cuda.h), its #[repr(C)] structs
//! with their sizes asserted here and in the header, and safe owners for its handles.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use blstrs::{Fp, G1Projective};

use crate::error::Result;

#[repr(C)]
pub struct Status {
    pub code: i32,
    pub message: *mut c_char,
}

/// -cudaErrorMemoryAllocation (the other codes are listed in cuda/cuzk_cuda.h)
pub const E_CUDA_OOM: i32 = -2;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct G1 {
    pub x: [u64; 6],
    pub y: [u64; 6],
    pub z: [u64; 6],
}

/// The all-zero point: what an output slot holds before a call writes it (the benches' outputs).
#[cfg(feature = "tools")]
const G1_ZERO: G1 = G1 { x: [0; 6], y: [0; 6], z: [0; 6] };

#[repr(C)]
#[derive(Clone, Copy)]
pub struct G2 {
    pub x: [u64; 12],
    pub y: [u64; 12],
    pub z: [u64; 12],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Sparse {
    pub ones: *const u32,
    pub ones_words: u64,
    pub npoints: u64,
    pub sig_idx: *const u32,
    pub sig_scalars: *const c_void,
    pub nsig: u64,
    /// A dense query's npoints scalars (no bitmap, no list), or NULL (see cuzk_cuda.h).
    pub dense: *const c_void,
}

pub const SKIP_MSM_H: u32 = 1;
/// Fold the significant L and r·B_G1 scalars into the H MSM (see cuzk_cuda.h).
pub const FOLD: u32 = 4;
/// Tests and tools only: the G1 sums of one-scalar bases by affine rounds at every size (by
/// default from 2^24 bases up).
#[cfg(feature = "tools")]
pub const ONES_ROUNDS: u32 = 128;
/// Tests and tools only: the G1 sums of one-scalar bases by sppark's batch addition at every size.
#[cfg(feature = "tools")]
pub const ONES_SPPARK: u32 = 256;
/// A device whose VRAM cannot hold the resident mode: two stage-H slots, the SRS sections kept
/// in host memory streamed in tiles, ΣH streamed by sppark (cuda/stream.cuh).
pub const STREAMED: u32 = 512;
/// STREAMED: ΣH beside the passes over the tiles (the plan has room for both at once).
pub const H_BESIDE_TILES: u32 = 1024;
/// STREAMED: the sums of ones and the significant parts are in the output already (this proof
/// rode another's passes over the tiles, [`Rider`]): the sparse stage runs ΣH only.
pub const SUMS_GIVEN: u32 = 2048;
pub const STAGE_H: u32 = 1;
pub const STAGE_SPARSE: u32 = 2;
/// Check and upload the sparse queries (no kernels), so that the sparse stage computes at once.
pub const STAGE_QUERIES: u32 = 4;
/// With STAGE_H: the queries uploaded first and the sparse stage's work but ΣH run beside stage H
/// (it runs MSM kernels: hold the device's MSM gate); the next STAGE_SPARSE runs ΣH only.
pub const STAGE_EARLY: u32 = 8;

#[repr(C)]
pub struct ProveIn {
    pub a: *const c_void,
    pub b: *const c_void,
    pub c: *const c_void,
    pub constraints: u64,
    pub lg_domain: u32,
    pub flags: u32,
    pub z_inv: [u64; 4],
    pub h_out: *mut c_void,
    pub l: Sparse,
    pub a_q: Sparse,
    pub b_q: Sparse,
    /// r in Montgomery form (read with FOLD).
    pub r: [u64; 4],
    /// Non-null: a, b, c are null and evaluated on the device from this recorded circuit and
    /// the witness below.
    pub r1cs: *const RawR1cs,
    pub input: *const c_void,
    pub aux: *const c_void,
    /// STREAMED: bases per streamed tile (a positive multiple of 1024).
    pub tile_points: u64,
    /// STREAMED with `r1cs`, optional: two domain vectors of host memory stage H parks C and
    /// A's coset values in ([`Workspace::spill`]).
    pub spill: *mut c_void,
    /// STREAMED, optional: other prepared partitions of the same circuit whose sums this sparse
    /// stage's passes over the tiles make too ([`Rider`]).
    pub riders: *const Rider,
    pub nriders: u64,
}

/// A partition riding another proof's passes over the SRS tiles (cuzk_cuda.h `cuzk_cuda_rider`):
/// its queries in, its sums of ones and significant parts out (into `out`'s ones and sig fields).
#[repr(C)]
pub struct Rider {
    pub l: Sparse,
    pub a_q: Sparse,
    pub b_q: Sparse,
    pub out: *mut ProveOut,
}

#[repr(C)]
pub struct Matrix {
    pub end: *const u32,
    pub terms: *const u64,
    pub nterms: u64,
}

pub const NPHASES: usize = 17;
pub const PH_UPLOAD: usize = 0;
pub const PH_NTT: usize = 1;
pub const PH_H_DOWNLOAD: usize = 2;
pub const PH_MSM_H: usize = 3;
pub const PH_BATCH_ADD: usize = 4;
pub const PH_GATHER: usize = 5;
pub const PH_MSM_L: usize = 6;
pub const PH_MSM_A: usize = 7;
pub const PH_MSM_B_G1: usize = 8;
pub const PH_TOTAL_H: usize = 9;
pub const PH_UPLOAD_SPARSE: usize = 10;
pub const PH_BATCH_ADD_G2: usize = 11;
pub const PH_MSM_B_G2: usize = 12;
pub const PH_TOTAL_SPARSE: usize = 13;
pub const PH_SPMV: usize = 14;
pub const PH_EARLY: usize = 15;
pub const PH_PCIE_BUSY: usize = 16;

#[repr(C)]
pub struct ProveOut {
    pub h: G1,
    pub l_ones: G1,
    pub l_sig: G1,
    pub a_ones: G1,
    pub a_sig: G1,
    pub b_ones: G1,
    pub b_sig: G1,
    pub b2_ones: G2,
    pub b2_sig: G2,
    /// The proof's large copies over PCIe, each way (cuzk_cuda.h).
    pub h2d_bytes: u64,
    pub d2h_bytes: u64,
    pub ms: [f32; NPHASES],
}

const _: () = assert!(std::mem::size_of::<Status>() == 16);
const _: () = assert!(std::mem::size_of::<G1>() == 144);
const _: () = assert!(std::mem::size_of::<G2>() == 288);
const _: () = assert!(std::mem::size_of::<Sparse>() == 56);
const _: () = assert!(std::mem::size_of::<ProveIn>() == 336);
const _: () = assert!(std::mem::size_of::<Rider>() == 176);
const _: () = assert!(std::mem::size_of::<Matrix>() == 24);
const _: () = assert!(std::mem::size_of::<ProveOut>() == 1672);
// The memory we hand to the GPU as-is.
const _: () = assert!(std::mem::size_of::<blstrs::Scalar>() == 32);
const _: () = assert!(std::mem::size_of::<blstrs::G1Affine>() == 96);
const _: () = assert!(std::mem::size_of::<blstrs::G2Affine>() == 192);

#[repr(C)]
pub struct RawWorkspace {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawSrs {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawR1cs {
    _private: [u8; 0],
}

extern "C" {
    fn cuzk_cuda_abi_sizes(out: *mut u64);
    fn cuzk_cuda_message_free(message: *mut c_char);
    fn cuzk_cuda_device_count(count: *mut i32) -> Status;
    fn cuzk_cuda_device_info(dev: i32, name: *mut c_char, len: u64, free: *mut u64, total: *mut u64) -> Status;
    fn cuzk_cuda_device_check(dev: i32) -> Status;
    #[cfg(feature = "tools")]
    fn cuzk_cuda_ceiling(dev: i32, ntt_lg: u32, rates: *mut f64) -> Status;
    #[cfg(feature = "tools")]
    #[allow(clippy::too_many_arguments)]
    fn cuzk_cuda_msm_bench(
        dev: i32,
        points: *const c_void,
        npoints: u64,
        n: u64,
        windows: *const u32,
        nwindows: u32,
        seed: u64,
        ours: *mut G1,
        peer: *mut G1,
        ms: *mut f32,
    ) -> Status;
    #[cfg(feature = "tools")]
    #[allow(clippy::too_many_arguments)]
    fn cuzk_cuda_ones_bench(
        dev: i32,
        points: *const c_void,
        npoints: u64,
        n: u64,
        max_chunk: u64,
        seed: u64,
        ours: *mut G1,
        peer: *mut G1,
        ms: *mut f32,
    ) -> Status;
    #[cfg(feature = "cuda-fault-injection")]
    fn cuzk_cuda_inject_fault(kind: i32, site: i32) -> Status;
    fn cuzk_cuda_workspace_new(dev: i32, out: *mut *mut RawWorkspace) -> Status;
    fn cuzk_cuda_workspace_free(ws: *mut RawWorkspace);
    fn cuzk_cuda_workspace_bytes(ws: *const RawWorkspace) -> u64;
    #[allow(clippy::too_many_arguments)]
    fn cuzk_cuda_srs_new(
        ws: *mut RawWorkspace,
        h: *const c_void,
        nh: u64,
        l: *const c_void,
        nl: u64,
        a: *const c_void,
        na: u64,
        b_g1: *const c_void,
        nb: u64,
        b_g2: *const c_void,
        nb2: u64,
        resident: u32,
        out: *mut *mut RawSrs,
        upload_ms: *mut f32,
    ) -> Status;
    fn cuzk_cuda_srs_free(srs: *mut RawSrs);
    fn cuzk_cuda_host_register(ptr: *const c_void, bytes: u64) -> Status;
    fn cuzk_cuda_host_unregister(ptr: *const c_void) -> Status;
    fn cuzk_cuda_device_memory(dev: i32, out: *mut u64) -> Status;
    #[allow(clippy::too_many_arguments)]
    fn cuzk_cuda_r1cs_new(
        ws: *mut RawWorkspace,
        abc: *const Matrix,
        rows: u64,
        coeffs: *const c_void,
        ncoeffs: u64,
        inputs: u64,
        aux: u64,
        tile_rows: u64,
        out: *mut *mut RawR1cs,
        upload_ms: *mut f32,
    ) -> Status;
    fn cuzk_cuda_r1cs_free(r1cs: *mut RawR1cs);
    fn cuzk_cuda_prove(
        ws: *mut RawWorkspace,
        srs: *const RawSrs,
        inp: *const ProveIn,
        out: *mut ProveOut,
        stages: u32,
    ) -> Status;
}

/// A failed CUDA-side call: its code and message.
#[derive(Debug, Clone)]
pub struct CudaError {
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for CudaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

fn check(st: Status) -> std::result::Result<(), CudaError> {
    if st.code == 0 {
        if !st.message.is_null() {
            // SAFETY: allocated by the C++ side for us.
            unsafe { cuzk_cuda_message_free(st.message) };
        }
        return Ok(());
    }
    let message = if st.message.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: a NUL-terminated string the C++ side strdup'ed for us; freed right after.
        let m = unsafe { CStr::from_ptr(st.message) }.to_string_lossy().into_owned();
        unsafe { cuzk_cuda_message_free(st.message) };
        m
    };
    Err(CudaError { code: st.code, message })
}

pub fn to_err(what: &str) -> impl Fn(CudaError) -> crate::error::Error + '_ {
    move |e| err!(Prover, "CUDA {what}: {e}")
}

/// The struct sizes the compiled C++ side sees must be the ones asserted above.
pub fn check_abi() -> Result<()> {
    let mut sizes = [0u64; 8];
    // SAFETY: writes exactly 8 values.
    unsafe { cuzk_cuda_abi_sizes(sizes.as_mut_ptr()) };
    let ours = [
        std::mem::size_of::<Status>(),
        std::mem::size_of::<G1>(),
        std::mem::size_of::<G2>(),
        std::mem::size_of::<Sparse>(),
        std::mem::size_of::<ProveIn>(),
        std::mem::size_of::<ProveOut>(),
        std::mem::size_of::<Matrix>(),
        std::mem::size_of::<Rider>(),
    ];
    if sizes.iter().zip(ours).any(|(&c, r)| c as usize != r) {
        return Err(err!(Internal, "CUDA ABI mismatch: C++ struct sizes {sizes:?}, Rust {ours:?}"));
    }
    Ok(())
}

/// Usable devices, or why there are none.
pub fn device_count() -> std::result::Result<usize, CudaError> {
    let mut n = 0i32;
    // SAFETY: out-param valid for the call.
    check(unsafe { cuzk_cuda_device_count(&mut n) })?;
    Ok(n.max(0) as usize)
}

#[derive(Clone)]
pub struct DeviceInfo {
    pub name: String,
    pub free_bytes: u64,
    pub total_bytes: u64,
}

pub fn device_info(dev: i32) -> Result<DeviceInfo> {
    let mut name = [0 as c_char; 256];
    let (mut free_bytes, mut total_bytes) = (0u64, 0u64);
    // SAFETY: buffers valid for the call; the name is NUL-terminated within len.
    check(unsafe {
        cuzk_cuda_device_info(dev, name.as_mut_ptr(), name.len() as u64, &mut free_bytes, &mut total_bytes)
    })
    .map_err(to_err("device info"))?;
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
    Ok(DeviceInfo { name, free_bytes, total_bytes })
}

/// A device's ceiling (`cuzk_cuda_ceiling`; a tool's, like the benchmarks below).
#[cfg(feature = "tools")]
#[derive(Clone, Copy, Debug)]
pub struct Ceiling {
    /// 32-bit integer multiply-adds per second.
    pub imad: f64,
    /// BLS12-381 base-field (Fp) and scalar-field (Fr) Montgomery multiplications per second.
    pub fp_mul: f64,
    pub fr_mul: f64,
    /// Bytes moved (read + written) per second by a device-to-device copy.
    pub copy_bytes: f64,
    /// The NTTs' domain: 2^ntt_lg.
    pub ntt_lg: u32,
    /// Seconds per sppark NTT in stage H's forms: inverse NR, coset forward RN, coset inverse NR.
    pub ntt_s: [f64; 3],
    /// Fp products per second in FP64 arithmetic (cuda/fp64.cuh), and with half the chains
    /// sppark's and half FP64 at once.
    pub fp64_mul: f64,
    pub mixed_mul: f64,
    /// Threads whose chain of FP64 products differed from sppark's (0 when correct).
    pub fp64_mismatches: u64,
    /// Seconds per NTT in `ntt_s`'s forms with the passes split evenly (cuda/ntt_split.cuh).
    pub ntt_even_s: [f64; 3],
    /// Elements where the three forms in a row, split evenly, differ from sppark's (0 when correct).
    pub ntt_even_mismatches: u64,
}

/// Device `dev`'s ceiling, measured now, its NTTs at 2^ntt_lg (10..=27).
#[cfg(feature = "tools")]
pub fn ceiling(dev: i32, ntt_lg: u32) -> Result<Ceiling> {
    let mut r = [0f64; 14];
    // SAFETY: `r` holds the fourteen doubles the call writes.
    check(unsafe { cuzk_cuda_ceiling(dev, ntt_lg, r.as_mut_ptr()) }).map_err(to_err("ceiling"))?;
    Ok(Ceiling {
        imad: r[0],
        fp_mul: r[1],
        fr_mul: r[2],
        copy_bytes: r[3],
        ntt_lg,
        ntt_s: [r[4], r[5], r[6]],
        fp64_mul: r[7],
        mixed_mul: r[8],
        fp64_mismatches: r[9] as u64,
        ntt_even_s: [r[10], r[11], r[12]],
        ntt_even_mismatches: r[13] as u64,
    })
}

/// msm_bench's result: sppark's sum and ms, then per window code our sum, wall ms and event ms.
#[cfg(feature = "tools")]
pub type MsmBench = ((G1Projective, f32), Vec<(G1Projective, f32, [f32; 6])>);

/// The one-pass big-MSM against sppark's on `points` repeated to `n` bases and n device-made
/// scalars: (sppark's sum and ms, then for each window width our sum, wall ms and event ms:
/// [whole, first sort, all sorts, all bucket sums], then the host's ms before the first event
/// and after the last). A tool's (the shipped library has no caller).
#[cfg(feature = "tools")]
pub fn msm_bench(
    dev: i32,
    points: &[blstrs::G1Affine],
    n: usize,
    windows: &[u32],
    seed: u64,
) -> Result<MsmBench> {
    let mut ours = vec![G1_ZERO; windows.len()];
    let mut peer = G1_ZERO;
    let mut ms = vec![0f32; 1 + 7 * windows.len()];
    // SAFETY: G1Affine is blst_p1_affine (96 bytes); the out arrays hold windows.len() points and
    // 1 + 7·windows.len() floats, as the call writes.
    check(unsafe {
        cuzk_cuda_msm_bench(
            dev,
            points.as_ptr().cast(),
            points.len() as u64,
            n as u64,
            windows.as_ptr(),
            windows.len() as u32,
            seed,
            ours.as_mut_ptr(),
            &mut peer,
            ms.as_mut_ptr(),
        )
    })
    .map_err(to_err("msm bench"))?;
    let k = windows.len();
    let ev = |i: usize| -> [f32; 6] { std::array::from_fn(|j| ms[1 + k + 6 * i + j]) };
    Ok(((g1(&peer), ms[0]), ours.iter().enumerate().map(|(i, p)| (g1(p), ms[1 + i], ev(i))).collect()))
}

/// The sums of ones (cuda/sum_ones.cuh) against sppark's batch addition over `points` repeated to
/// n bases, those whose bit is set in a pseudo-random bitmap (seed); our passes take at most
/// `max_chunk` entries (0: the default). ((ours, ms), (sppark's, ms)): the sums must be equal. A
/// tool's (the shipped library has no caller).
#[cfg(feature = "tools")]
pub fn ones_bench(
    dev: i32,
    points: &[blstrs::G1Affine],
    n: usize,
    max_chunk: usize,
    seed: u64,
) -> Result<((G1Projective, f32), (G1Projective, f32))> {
    let (mut ours, mut peer, mut ms) = (G1_ZERO, G1_ZERO, [0f32; 2]);
    // SAFETY: G1Affine is blst_p1_affine (96 bytes); the outputs are one point each and two floats.
    check(unsafe {
        cuzk_cuda_ones_bench(
            dev,
            points.as_ptr().cast(),
            points.len() as u64,
            n as u64,
            max_chunk as u64,
            seed,
            &mut ours,
            &mut peer,
            ms.as_mut_ptr(),
        )
    })
    .map_err(to_err("ones bench"))?;
    Ok(((g1(&ours), ms[1]), (g1(&peer), ms[0])))
}

/// Device `dev`'s memory: (free, total) as the driver reports them, and the stream-ordered pool's
/// (reserved, used) high-water marks since the previous call (which this call resets).
pub fn device_memory(dev: i32) -> std::result::Result<[u64; 4], CudaError> {
    let mut out = [0u64; 4];
    // SAFETY: out has the four slots the call writes.
    check(unsafe { cuzk_cuda_device_memory(dev, out.as_mut_ptr()) })?;
    Ok(out)
}

#[cfg(feature = "tools")]
extern "C" {
    fn cuzk_cuda_fixed_base_g1(dev: i32, table: *const c_void, scalars: *const c_void, n: u64, out: *mut c_void) -> Status;
    fn cuzk_cuda_fixed_base_g2(dev: i32, table: *const c_void, scalars: *const c_void, n: u64, out: *mut c_void) -> Status;
}

/// Tools only (test SRS generation): `out[i] = scalars[i]·G1` on device `dev`, from `table`
/// (16 windows × 2^16 multiples k·2^(16w)·G1) and the scalars in canonical little-endian bytes.
#[cfg(feature = "tools")]
pub fn fixed_base_g1(dev: i32, table: &[blstrs::G1Affine], scalars: &[[u8; 32]], out: &mut [blstrs::G1Affine]) -> Result<()> {
    // G1Affine is blst_p1_affine.
    fixed_base(cuzk_cuda_fixed_base_g1, dev, table, scalars, out, "fixed-base multiples on the GPU")
}

/// Tools only: [`fixed_base_g1`] over G2 (`table`: 16 windows × 2^16 multiples k·2^(16w)·G2).
#[cfg(feature = "tools")]
pub fn fixed_base_g2(dev: i32, table: &[blstrs::G2Affine], scalars: &[[u8; 32]], out: &mut [blstrs::G2Affine]) -> Result<()> {
    // G2Affine is blst_p2_affine.
    fixed_base(cuzk_cuda_fixed_base_g2, dev, table, scalars, out, "fixed-base multiples of G2 on the GPU")
}

/// One of the fixed-base calls over `table`'s point type `A` (blst's affine layout of its group).
#[cfg(feature = "tools")]
fn fixed_base<A>(
    call: unsafe extern "C" fn(i32, *const c_void, *const c_void, u64, *mut c_void) -> Status,
    dev: i32,
    table: &[A],
    scalars: &[[u8; 32]],
    out: &mut [A],
    what: &str,
) -> Result<()> {
    if table.len() != 16 << 16 || scalars.len() != out.len() {
        return Err(err!(Internal, "fixed-base table of {} points, {} scalars for {} points", table.len(), scalars.len(), out.len()));
    }
    // SAFETY: the slices live through the synchronous call, with the lengths checked above.
    check(unsafe { call(dev, table.as_ptr().cast(), scalars.as_ptr().cast(), out.len() as u64, out.as_mut_ptr().cast()) }).map_err(to_err(what))
}

/// Host bytes page-locked for the GPUs to stream from (SRS sections, recorded circuits), over
/// the process.
static PINNED_BYTES: AtomicU64 = AtomicU64::new(0);

pub fn pinned_host_bytes() -> u64 {
    PINNED_BYTES.load(Ordering::Relaxed)
}

/// cudaErrorHostMemoryAlreadyRegistered (the status codes carry −cudaError_t).
const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: i32 = 712;

/// Host memory page-locked for every device (DMA reads it directly) for as long as this lives.
/// The owner keeps the memory alive longer than the registration (it holds what owns it).
pub struct HostPinned {
    ptr: *const c_void,
    bytes: u64,
}

// SAFETY: a registration is a process-wide fact about an address range; any thread may undo it.
unsafe impl Send for HostPinned {}
unsafe impl Sync for HostPinned {}

impl HostPinned {
    /// Page-lock `v`'s elements (the caller keeps `v`'s memory alive and unmoved past the
    /// returned value's drop). Empty slices pin nothing.
    pub fn new<T>(v: &[T]) -> std::result::Result<HostPinned, CudaError> {
        let bytes = std::mem::size_of_val(v) as u64;
        if bytes == 0 {
            return Ok(HostPinned { ptr: ptr::null(), bytes: 0 });
        }
        // SAFETY: the range is v's memory, alive for the call (and, by the caller, until drop).
        check(unsafe { cuzk_cuda_host_register(v.as_ptr().cast(), bytes) })?;
        PINNED_BYTES.fetch_add(bytes, Ordering::Relaxed);
        Ok(HostPinned { ptr: v.as_ptr().cast(), bytes })
    }

    /// `new`, or None where `v` stays pageable — streaming from it is correct, only slower (the
    /// driver stages each copy): quietly when it shares a page with memory already locked (small
    /// arrays are neighbours on the heap), with a warning naming `what` when the host refuses to
    /// lock more (RLIMIT_MEMLOCK).
    pub fn lock_or_pageable<T>(v: &[T], what: &dyn std::fmt::Display) -> Option<HostPinned> {
        match HostPinned::new(v) {
            Ok(pin) => Some(pin),
            Err(e) if e.code == -CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => None,
            Err(e) => {
                log::warn!("{what} stays pageable (streamed more slowly): page-locking it failed: {e}");
                None
            }
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for HostPinned {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: registered by new, not yet unregistered.
            if let Err(e) = check(unsafe { cuzk_cuda_host_unregister(self.ptr) }) {
                log::warn!("unpinning {} MiB of host memory: {e}", self.bytes >> 20);
            }
            PINNED_BYTES.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

/// Whether device `dev` still works after a failed call (Err: its context is lost).
pub fn device_check(dev: i32) -> std::result::Result<(), CudaError> {
    // SAFETY: no pointers.
    check(unsafe { cuzk_cuda_device_check(dev) })
}

/// Fault kinds and sites of `inject_fault` (cuda/cuzk_cuda.h).
#[cfg(feature = "cuda-fault-injection")]
pub mod fault {
    pub const ERROR: i32 = 1;
    pub const STICKY: i32 = 2;
    pub const SITE_STAGE_H: i32 = 1;
    pub const SITE_MSM: i32 = 2;
}

/// Test builds only: the next proof step reaching `site` fails with a real CUDA error of `kind`.
#[cfg(feature = "cuda-fault-injection")]
pub fn inject_fault(kind: i32, site: i32) -> Result<()> {
    // SAFETY: no pointers.
    check(unsafe { cuzk_cuda_inject_fault(kind, site) }).map_err(to_err("fault injection"))
}

/// Owner of a per-device workspace (stream, events, scratch buffers), and of the host memory its
/// lean stage H parks vectors in.
pub struct Workspace {
    raw: *mut RawWorkspace,
    spill: Option<Spill>,
}

/// Host memory for parked domain vectors: page-locked where the host allows it (the lock is
/// dropped before the memory: fields drop in order).
struct Spill {
    _pin: Option<HostPinned>,
    buf: Vec<std::mem::MaybeUninit<blstrs::Scalar>>,
}

/// Bytes of every workspace's parking space in this process (`Backend::held_host_bytes`).
static SPILL_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Host memory the workspaces' parking spaces hold now.
pub fn spill_bytes() -> u64 {
    SPILL_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

impl Spill {
    fn bytes(&self) -> u64 {
        std::mem::size_of_val(&self.buf[..]) as u64
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        SPILL_BYTES.fetch_sub(self.bytes(), std::sync::atomic::Ordering::Relaxed);
    }
}

// SAFETY: a workspace is only used by the proof holding its lane's mutex; the C++ object has
// no thread affinity (each call selects its device).
unsafe impl Send for Workspace {}

impl Workspace {
    pub fn new(dev: i32) -> Result<Workspace> {
        let mut p = ptr::null_mut();
        // SAFETY: out-param valid for the call.
        check(unsafe { cuzk_cuda_workspace_new(dev, &mut p) }).map_err(to_err("workspace"))?;
        Ok(Workspace { raw: p, spill: None })
    }

    pub fn bytes(&self) -> u64 {
        // SAFETY: live handle.
        unsafe { cuzk_cuda_workspace_bytes(self.raw) }
    }

    /// Host memory for `ProveIn::spill` of a domain of `n` scalars (2n scalars), allocated and
    /// page-locked on first use (8 GiB at 32 GiB: seconds, so the engine's preload takes it,
    /// not the first proof), kept for the proofs that follow (a larger domain replaces it).
    pub fn spill(&mut self, n: usize) -> *mut c_void {
        if self.spill.as_ref().is_none_or(|s| s.buf.len() < 2 * n) {
            self.spill = None; // unlocked and freed before the larger one is taken
            let t = std::time::Instant::now();
            let mut buf = Vec::with_capacity(2 * n);
            // SAFETY: MaybeUninit needs no initialization; the device writes before it reads.
            unsafe { buf.set_len(2 * n) };
            let mib = std::mem::size_of_val(&buf[..]) >> 20;
            let pin = HostPinned::lock_or_pageable(&buf, &format!("stage H's parking space ({mib} MiB)"));
            log::info!(
                "stage H's parking space for C and A: {mib} MiB of host memory{} in {:.2} s",
                if pin.is_some() { " page-locked" } else { "" },
                t.elapsed().as_secs_f64()
            );
            let spill = Spill { _pin: pin, buf };
            SPILL_BYTES.fetch_add(spill.bytes(), std::sync::atomic::Ordering::Relaxed);
            self.spill = Some(spill);
        }
        self.spill.as_mut().expect("set above").buf.as_mut_ptr().cast()
    }

    /// Upload the SRS sections in `resident` (`vram::sec` bits); returns the handle and the CUDA-event
    /// upload time in ms. The handle reads the other sections from host memory: each of them
    /// must be page-locked ([`HostPinned`]) and outlive the handle.
    pub fn upload_srs(
        &mut self,
        h: &[blstrs::G1Affine],
        l: &[blstrs::G1Affine],
        a: &[blstrs::G1Affine],
        b_g1: &[blstrs::G1Affine],
        b_g2: &[blstrs::G2Affine],
        resident: u32,
    ) -> std::result::Result<(DeviceSrs, f32), CudaError> {
        let mut out = ptr::null_mut();
        let mut ms = 0f32;
        // SAFETY: the slices outlive the synchronous call; G1Affine is blst_p1_affine.
        check(unsafe {
            cuzk_cuda_srs_new(
                self.raw,
                h.as_ptr().cast(),
                h.len() as u64,
                l.as_ptr().cast(),
                l.len() as u64,
                a.as_ptr().cast(),
                a.len() as u64,
                b_g1.as_ptr().cast(),
                b_g1.len() as u64,
                b_g2.as_ptr().cast(),
                b_g2.len() as u64,
                resident,
                &mut out,
                &mut ms,
            )
        })?;
        Ok((DeviceSrs(out), ms))
    }

    /// A recorded circuit for this device: uploaded whole (`tile_rows` 0), else left in host
    /// memory — page-locked, where the host allows it — and streamed in tiles of `tile_rows`
    /// rows by the STREAMED proofs that use it (the handle then keeps `r` alive). Returns the
    /// handle and the CUDA-event upload time in ms.
    pub fn upload_r1cs(&mut self, r: &Arc<crate::synth::R1cs>, tile_rows: u64) -> std::result::Result<(DeviceR1cs, f32), CudaError> {
        let m = [0, 1, 2].map(|q| {
            let (end, terms) = r.matrix(q);
            Matrix { end: end.as_ptr(), terms: terms.as_ptr(), nterms: terms.len() as u64 }
        });
        let coeffs = r.coefficients();
        let mut out = ptr::null_mut();
        let mut ms = 0f32;
        // SAFETY: the slices outlive the synchronous call (and, streamed, the handle, by the
        // caller); Scalar is blst_fr.
        check(unsafe {
            cuzk_cuda_r1cs_new(
                self.raw,
                m.as_ptr(),
                r.constraints() as u64,
                coeffs.as_ptr().cast(),
                coeffs.len() as u64,
                r.inputs as u64,
                r.aux as u64,
                tile_rows,
                &mut out,
                &mut ms,
            )
        })?;
        let host = (tile_rows != 0).then(|| {
            let pins = [0, 1, 2]
                .into_iter()
                .flat_map(|q| {
                    let (end, terms) = r.matrix(q);
                    let what = format!("recorded {} circuit's matrix {q}", r.circuit.name());
                    [HostPinned::lock_or_pageable(end, &what), HostPinned::lock_or_pageable(terms, &what)]
                })
                .flatten()
                .collect();
            StreamedR1cs { pins, _r1cs: r.clone() }
        });
        Ok((DeviceR1cs { raw: out, host }, ms))
    }

    /// Run `stages` (STAGE_* bits) of the GPU half of a proof into `out`. `inp`'s pointers
    /// must stay valid for the call.
    pub fn prove(&mut self, srs: &DeviceSrs, inp: &ProveIn, out: &mut ProveOut, stages: u32) -> std::result::Result<(), CudaError> {
        // SAFETY: live handles; `inp` points at memory the caller keeps alive.
        check(unsafe { cuzk_cuda_prove(self.raw, srs.0, inp, out, stages) })
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // SAFETY: owned handle, freed once.
        unsafe { cuzk_cuda_workspace_free(self.raw) };
    }
}

/// Owner of SRS bases resident on one device.
pub struct DeviceSrs(*mut RawSrs);

// SAFETY: the C++ object is written only by its upload and freed by Drop; proofs read it
// (`const cuzk_cuda_srs*`), so the lanes of a device may share it.
unsafe impl Send for DeviceSrs {}
unsafe impl Sync for DeviceSrs {}

impl Drop for DeviceSrs {
    fn drop(&mut self) {
        // SAFETY: owned handle, freed once.
        unsafe { cuzk_cuda_srs_free(self.0) };
    }
}

/// Owner of a recorded circuit for one device: on the device, or streamed from host memory.
pub struct DeviceR1cs {
    raw: *mut RawR1cs,
    // Dropped after `raw` is freed (Drop): the matrices the handle reads stay alive and locked.
    host: Option<StreamedR1cs>,
}

/// A streamed recorded circuit's host side: its page-locked matrices (unlocked before `_r1cs`
/// can free them: fields drop in order).
struct StreamedR1cs {
    pins: Vec<HostPinned>,
    _r1cs: Arc<crate::synth::R1cs>,
}

// SAFETY: as for DeviceSrs: read-only once uploaded (`const cuzk_cuda_r1cs*` in a proof).
unsafe impl Send for DeviceR1cs {}
unsafe impl Sync for DeviceR1cs {}

impl DeviceR1cs {
    pub fn raw(&self) -> *const RawR1cs {
        self.raw
    }

    /// Whether proofs stream it from host memory (else it is on the device).
    pub fn streamed(&self) -> bool {
        self.host.is_some()
    }

    /// Host bytes page-locked for it.
    pub fn pinned_bytes(&self) -> u64 {
        self.host.as_ref().map_or(0, |h| h.pins.iter().map(HostPinned::bytes).sum())
    }
}

impl Drop for DeviceR1cs {
    fn drop(&mut self) {
        // SAFETY: owned handle, freed once.
        unsafe { cuzk_cuda_r1cs_free(self.raw) };
    }
}

/// An empty output record (plain data, all zero).
pub fn new_out() -> Box<ProveOut> {
    // SAFETY: ProveOut is plain data; all-zero is a valid value.
    Box::new(unsafe { std::mem::zeroed() })
}

/// A G2 Jacobian point from the GPU (blst_p2 layout) as a blstrs point.
pub fn g2(p: &G2) -> blstrs::G2Projective {
    let fp2 = |v: &[u64; 12]| {
        let (re, im) = v.split_at(6);
        blstrs::Fp2::new(Fp::from_raw_unchecked(re.try_into().unwrap()), Fp::from_raw_unchecked(im.try_into().unwrap()))
    };
    blstrs::G2Projective::from_raw_unchecked(fp2(&p.x), fp2(&p.y), fp2(&p.z))
}

/// A Jacobian point from the GPU (blst_p1 layout, Montgomery limbs) as a blstrs point.
pub fn g1(p: &G1) -> G1Projective {
    G1Projective::from_raw_unchecked(
        Fp::from_raw_unchecked(p.x),
        Fp::from_raw_unchecked(p.y),
        Fp::from_raw_unchecked(p.z),
    )
}
