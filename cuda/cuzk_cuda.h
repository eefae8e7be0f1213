/*
 * The C interface between the Rust CUDA backend (src/prover/cuda/ffi.rs) and cuda/groth16.cu.
 * Every struct here is mirrored by a #[repr(C)] struct on the Rust side; both sides assert the
 * sizes (static_assert below, const assertions there, and cuzk_cuda_abi_sizes at run time).
 *
 * Conventions: scalars are BLS12-381 Fr in Montgomery form (blst_fr / blstrs::Scalar memory,
 * 32 bytes); G1 points are blst_p1_affine (96 bytes, infinity = all zero) on input and
 * blst_p1 Jacobian (144 bytes, infinity = Z zero) on output. Every function returns a status by
 * value: code 0 = success; otherwise message is a malloc'ed C string the caller releases with
 * cuzk_cuda_message_free. Handles are owned by the caller and released with their _free.
 */
#ifndef CUZK_CUDA_H
#define CUZK_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t code;     /* 0 = ok; < 0: -cudaError_t; > 0: cuzk_cuda error class below */
    char* message;    /* NULL on success */
} cuzk_cuda_status;

enum {
    CUZK_CUDA_E_INVALID = 1,   /* bad argument */
    CUZK_CUDA_E_INTERNAL = 2,  /* C++ exception other than a CUDA error */
    CUZK_CUDA_E_NODEVICE = 3,  /* no usable CUDA device */
};

typedef struct {
    uint64_t x[6], y[6], z[6];
} cuzk_cuda_g1;

/* blst_p2 Jacobian: each coordinate is Fp2 = (real, imaginary), 96 bytes. */
typedef struct {
    uint64_t x[12], y[12], z[12];
} cuzk_cuda_g2;

/* One sparse MSM over bases[0..npoints): the bases whose scalar is 1 (bitmap `ones`, bit i of
 * word i/32, ones_words a multiple of 32) are summed with plain additions; the `nsig` others
 * (sig_idx[k] → scalar sig_scalars[k]) go through Pippenger. A dense query (`dense` not NULL:
 * all npoints scalars, Montgomery form; a PoSt witness is ~99 % field elements) is one Pippenger
 * over its bases instead, no bases gathered: it has no bitmap and no list (ones_words and nsig
 * 0), its sum of ones is infinity and its significant part the whole sum. Not in a rider. */
typedef struct {
    const uint32_t* ones;
    uint64_t ones_words;
    uint64_t npoints;
    const uint32_t* sig_idx;
    const void* sig_scalars;
    uint64_t nsig;
    const void* dense;
} cuzk_cuda_sparse;

/* One matrix of a recorded circuit (src/synth/r1cs.rs): row r's terms are
 * terms[end[r - 1] .. end[r]] (end[-1] = 0), each `coefficient index << 32 | variable`, the
 * variable's bit 31 set for an input (else aux); coefficient 0 is 1, 1 is -1. */
typedef struct {
    const uint32_t* end;
    const uint64_t* terms;
    uint64_t nterms;
} cuzk_cuda_matrix;

enum {
    CUZK_CUDA_SKIP_MSM_H = 1,  /* do not run the H MSM (the caller does it from h_out) */
    CUZK_CUDA_FOLD = 4,        /* fold the significant L and r·B_G1 scalars into the H MSM:
                                  out.h = ΣH + ΣL_sig + r·ΣB_G1_sig, out.l_sig = out.b_sig = 0
                                  (one Pippenger instead of three; the proof only needs that sum) */
    CUZK_CUDA_ONES_ROUNDS = 128, /* tests and tools only (the library picks by size): the G1 sums of
                                  one-scalar bases by affine rounds (cuda/sum_ones.cuh) at every size
                                  (by default from 2^24 bases of a query up); the same sums */
    CUZK_CUDA_ONES_SPPARK = 256, /* tests and tools only: those sums by sppark's batch addition at every size */
    CUZK_CUDA_STREAMED = 512,    /* a device whose VRAM cannot hold the resident mode (cuda/stream.cuh):
                                  stage H in two domain slots (C after the A·B product), the second
                                  slot and the witness released after it; every SRS section the SRS
                                  keeps in host memory is streamed in tiles of tile_points bases; the
                                  sums of ones by batch addition; ΣH by the big-MSM in tiles
                                  (msm_big.cuh msm_tiled: host tiles copied under the previous
                                  tile's work, buckets kept across tiles); no FOLD, no STAGE_EARLY */
    CUZK_CUDA_H_BESIDE_TILES = 1024, /* STREAMED: ΣH on the calling thread while a second one walks the
                                  queries' tiles (the caller's plan has room for both at once:
                                  ΣH's batches, two G2 tiles, every query's gathered bases);
                                  ignored when a query is dense (its scalars go up through the
                                  pinned slots on the thread that walks the passes) */
    CUZK_CUDA_SUMS_GIVEN = 2048, /* STREAMED: the sums of ones and the significant parts are in `out`
                                  already (another proof's sparse stage made them, this proof riding
                                  its passes over the tiles): the sparse stage runs ΣH only, reads no
                                  queries and leaves out's other fields as they are */
};
/* A partition that rides another proof's passes over the SRS tiles (cuzk_cuda_prove_in.riders):
 * another prepared partition of the same circuit. Each tile the pass copies serves its queries
 * too (ones added, significant bases gathered), then its significant scalars' Pippengers run, and
 * out's ones and significant fields (l_ones, l_sig, a_ones, a_sig, b_ones, b_sig, b2_ones, b2_sig)
 * receive its sums; nothing else of *out is written. Its own proof's sparse stage then runs with
 * SUMS_GIVEN. Its queries have the proof's own shape (npoints and ones_words per query). */
typedef struct {
    cuzk_cuda_sparse l;
    cuzk_cuda_sparse a_q;
    cuzk_cuda_sparse b_q;
    struct cuzk_cuda_prove_out_s* out;
} cuzk_cuda_rider;
/* cuzk_cuda_prove stages: the H stage reads a, b, c (or r1cs, input, aux), constraints, lg_domain, z_inv and h_out
 * (uploads overlap the NTTs); the sparse stage runs the H MSM over the H stage's result (unless
 * SKIP_MSM_H) and the L, A, B (G1 and G2) queries from l, a_q, b_q, flag FOLD, and r. The caller
 * may prepare the sparse inputs while the H stage runs; the stages run on one workspace, H first.
 * The queries stage checks and uploads l, a_q, b_q (no kernels: it can run beside another
 * workspace's MSMs); a sparse stage given the same arrays then starts computing at once, else it
 * uploads them itself. A later H stage discards an upload no sparse stage used.
 * STAGE_EARLY, with STAGE_H: the queries are uploaded first and the sparse stage's work but ΣH
 * (batch additions, the significant A, L, B_G1, B_G2 scalars) runs on a second host thread beside
 * stage H, filling out's other fields; a later sparse stage given the same input runs ΣH only. It
 * runs MSM kernels, so the caller holds the device's MSM gate through it. */
enum {
    CUZK_CUDA_STAGE_H = 1,
    CUZK_CUDA_STAGE_SPARSE = 2,
    CUZK_CUDA_STAGE_QUERIES = 4,
    CUZK_CUDA_STAGE_EARLY = 8,
};
typedef struct {
    const void* a;            /* constraints scalars each */
    const void* b;
    const void* c;
    uint64_t constraints;     /* <= 2^lg_domain */
    uint32_t lg_domain;
    uint32_t flags;
    uint64_t z_inv[4];        /* 1 / (g^n - 1), g = 7, Montgomery form */
    void* h_out;              /* optional: receives the 2^lg_domain - 1 H coefficients */
    cuzk_cuda_sparse l;
    cuzk_cuda_sparse a_q;
    cuzk_cuda_sparse b_q;
    uint64_t r[4];            /* the proof's r, Montgomery form (read with FOLD) */
    /* Non-NULL: a, b, c are NULL and are evaluated on the device as this recorded circuit's
     * matrices times [input | aux] (its `inputs` and `aux` scalars, uploaded instead). */
    const struct cuzk_cuda_r1cs* r1cs;
    const void* input;
    const void* aux;
    uint64_t tile_points;     /* STREAMED: bases per streamed tile (a multiple of 1024, > 0) */
    /* STREAMED with r1cs, optional: 2 * 2^lg_domain scalars of host memory (page-locked for
     * speed) in which stage H parks C and A's coset values, so that it holds one domain slot
     * beside the witness instead of two (cuda/stage_h.cuh, stage_h_lean). */
    void* spill;
    /* STREAMED, optional: nriders partitions served by this sparse stage's passes over the tiles
     * besides its own (see cuzk_cuda_rider); the caller's plan has room for their queries. */
    const cuzk_cuda_rider* riders;
    uint64_t nriders;
} cuzk_cuda_prove_in;

enum {
    CUZK_CUDA_PH_UPLOAD = 0,        /* a, b, c through pinned staging (copy stream) */
    CUZK_CUDA_PH_NTT = 1,           /* last upload done → H ready: the NTT time not hidden */
    CUZK_CUDA_PH_H_DOWNLOAD = 2,
    CUZK_CUDA_PH_MSM_H = 3,         /* sparse stage; with FOLD it includes L and B_G1 sig */
    CUZK_CUDA_PH_BATCH_ADD = 4,     /* G1 ones of L, A, B */
    CUZK_CUDA_PH_GATHER = 5,
    CUZK_CUDA_PH_MSM_L = 6,
    CUZK_CUDA_PH_MSM_A = 7,
    CUZK_CUDA_PH_MSM_B_G1 = 8,
    CUZK_CUDA_PH_TOTAL_H = 9,       /* the H stage, first to last event */
    CUZK_CUDA_PH_UPLOAD_SPARSE = 10, /* the queries' upload (copy stream; stage queries or sparse) */
    CUZK_CUDA_PH_BATCH_ADD_G2 = 11,
    CUZK_CUDA_PH_MSM_B_G2 = 12,     /* gather + Pippenger, on a second host thread */
    CUZK_CUDA_PH_TOTAL_SPARSE = 13, /* the queries' upload plus the sparse stage's own span (no gate wait) */
    CUZK_CUDA_PH_SPMV = 14,         /* a, b, c from a recorded circuit (inside PH_NTT) */
    CUZK_CUDA_PH_EARLY = 15,        /* STAGE_EARLY: the queries' upload and the sparse work but ΣH, beside stage H */
    CUZK_CUDA_PH_PCIE_BUSY = 16,    /* the proof's large copies over PCIe (either way): the time at least one was moving data */
    CUZK_CUDA_NPHASES = 17,
};

typedef struct cuzk_cuda_prove_out_s {
    cuzk_cuda_g1 h;
    cuzk_cuda_g1 l_ones, l_sig;
    cuzk_cuda_g1 a_ones, a_sig;
    cuzk_cuda_g1 b_ones, b_sig;
    cuzk_cuda_g2 b2_ones, b2_sig;
    /* The proof's large copies over PCIe from its stage H to its sparse stage (streamed SRS and
     * circuit tiles, a, b, c or the witness, the queries, parked vectors; a STREAMED proof's
     * riders' queries and tiles included), written by its sparse stage. */
    uint64_t h2d_bytes, d2h_bytes;
    float ms[CUZK_CUDA_NPHASES];  /* CUDA-event milliseconds per CUZK_CUDA_PH_* */
} cuzk_cuda_prove_out;

typedef struct cuzk_cuda_workspace cuzk_cuda_workspace;
typedef struct cuzk_cuda_srs cuzk_cuda_srs;
typedef struct cuzk_cuda_r1cs cuzk_cuda_r1cs;

/* Sizes of the shared structs, in this order: status, g1, g2, sparse, prove_in, prove_out,
 * matrix, rider. */
#ifdef CUZK_CUDA_TOOLS
/* Feature `tools` only (test SRS generation, src/fixtures/test_srs.rs): out[i] = s_i·G1 in
 * blst_p1_affine form for n scalars (canonical, 32 little-endian bytes each), from `table`, the
 * 16 × 2^16 blst_p1_affine multiples k·2^(16w)·G1 (entry k = 0 of each window unused). */
cuzk_cuda_status cuzk_cuda_fixed_base_g1(int32_t dev, const void* table, const void* scalars, uint64_t n, void* out);
/* The same over G2: `table` and `out` in blst_p2_affine form. */
cuzk_cuda_status cuzk_cuda_fixed_base_g2(int32_t dev, const void* table, const void* scalars, uint64_t n, void* out);
#endif

#define CUZK_CUDA_ABI_NSIZES 8
void cuzk_cuda_abi_sizes(uint64_t out[CUZK_CUDA_ABI_NSIZES]);
void cuzk_cuda_message_free(char* message);

/* Number of usable devices (compute capability >= 7, cooperative launch). When there are none,
 * *count = 0 and the status says why (code CUZK_CUDA_E_NODEVICE). */
cuzk_cuda_status cuzk_cuda_device_count(int32_t* count);
/* Name (NUL-terminated, truncated to len), free and total memory of device `dev`. */
cuzk_cuda_status cuzk_cuda_device_info(int32_t dev, char* name, uint64_t len, uint64_t* free_bytes,
                                       uint64_t* total_bytes);

/* Whether device `dev` still works after a failed call: waits for its queued work, clears a
 * recoverable error, and round-trips a few bytes through device memory. A failure here means the
 * device's context is lost (a sticky error such as an illegal address): nothing on it can run
 * again in this process. */
cuzk_cuda_status cuzk_cuda_device_check(int32_t dev);

#ifdef CUZK_CUDA_TOOLS /* feature `tools` only: benchmarks, never in the shipped library */
// The device's ceiling (cuda/ceiling.cuh): rates[0] = 32-bit integer multiply-adds per second,
// rates[1] / rates[2] = BLS12-381 Fp / Fr Montgomery multiplications per second, rates[3] = bytes
// moved (read + written) per second by a device-to-device copy, rates[4..6] = seconds per
// 2^ntt_lg sppark NTT (10 <= ntt_lg <= 27) in stage H's three forms (inverse NR, coset forward RN,
// coset inverse NR), rates[7] = Fp products per second in FP64 arithmetic (fp64.cuh), rates[8] =
// Fp products per second with half of them sppark's and half FP64 at once, rates[9] = threads whose
// FP64 products differed from sppark's (0 when correct). Takes ~2 s and 2^(ntt_lg + 6) bytes of
// device memory.
cuzk_cuda_status cuzk_cuda_ceiling(int32_t dev, uint32_t ntt_lg, double rates[10]);

/* The one-pass big-MSM (cuda/msm_big.cuh) against sppark's Pippenger on one synthetic input:
 * the `npoints` distinct bases (blst_p1_affine) repeated to n, n scalars below 2^254 made on the
 * device from `seed`. For each of the `nwindows` window widths: ours[k] gets our sum (blst_p1),
 * ms[1 + k] our best of two runs (host clock around the synchronous call, buffer allocation
 * included) and ms[1 + nwindows + 6k ..] the last run's CUDA-event times: whole MSM (first digits
 * to last download), first window's digits + sort, all sorts, all bucket sums (overlapping), then
 * its host-clock times before the first event and after the last; peer gets sppark's sum, ms[0]
 * its best of two. The sums must be the same point. ms holds 1 + 7·nwindows floats. */
cuzk_cuda_status cuzk_cuda_msm_bench(int32_t dev, const void* points, uint64_t npoints, uint64_t n,
                                     const uint32_t* windows, uint32_t nwindows, uint64_t seed,
                                     cuzk_cuda_g1* ours, cuzk_cuda_g1* peer, float* ms);
/* The sums of ones (cuda/sum_ones.cuh) against sppark's batch addition over the bases `points`
 * repeated to n whose bit is set in a pseudo-random bitmap (seed); our passes take at most
 * max_chunk entries (0: the default). ours / peer get the two sums (they must be the same point),
 * ms[0] / ms[1] sppark's / our best of two. */
cuzk_cuda_status cuzk_cuda_ones_bench(int32_t dev, const void* points, uint64_t npoints, uint64_t n, uint64_t max_chunk,
                                      uint64_t seed, cuzk_cuda_g1* ours, cuzk_cuda_g1* peer, float ms[2]);
#endif
/* Per-device scratch (stream, events, reusable buffers). One prove at a time per workspace. */
cuzk_cuda_status cuzk_cuda_workspace_new(int32_t dev, cuzk_cuda_workspace** out);
void cuzk_cuda_workspace_free(cuzk_cuda_workspace* ws);
/* Bytes of device memory the workspace holds now. */
uint64_t cuzk_cuda_workspace_bytes(const cuzk_cuda_workspace* ws);

/* SRS sections, as bits of srs_new's `resident` mask. */
enum {
    CUZK_CUDA_SEC_H = 1,
    CUZK_CUDA_SEC_L = 2,
    CUZK_CUDA_SEC_A = 4,
    CUZK_CUDA_SEC_B_G1 = 8,
    CUZK_CUDA_SEC_B_G2 = 16,
    CUZK_CUDA_SEC_ALL = 31,
};
/* Copy the bases of the SRS sections in `resident` to the workspace's device (b_g2 may be NULL
 * with nb2 = 0: then the B_G2 query cannot run there); the other sections stay where they are, in
 * host memory the caller keeps alive and page-locked (cuzk_cuda_host_register) for as long as the
 * handle lives, and only STREAMED proofs can use them. *upload_ms gets the copy time. */
cuzk_cuda_status cuzk_cuda_srs_new(cuzk_cuda_workspace* ws, const void* h, uint64_t nh, const void* l,
                                   uint64_t nl, const void* a, uint64_t na, const void* b_g1, uint64_t nb,
                                   const void* b_g2, uint64_t nb2, uint32_t resident, cuzk_cuda_srs** out,
                                   float* upload_ms);
/* Page-lock `bytes` of host memory at `ptr` for every device (portable), so that streamed SRS
 * tiles are copied by DMA straight from it; undone by cuzk_cuda_host_unregister(ptr), which the
 * caller must call before the memory is freed. */
cuzk_cuda_status cuzk_cuda_host_register(const void* ptr, uint64_t bytes);
cuzk_cuda_status cuzk_cuda_host_unregister(const void* ptr);
/* Device `dev`'s memory as the driver sees it (free, total) and its stream-ordered pool's
 * high-water marks since the last call (reserved, used; reset by this call): what a budget must
 * hold, measured. */
cuzk_cuda_status cuzk_cuda_device_memory(int32_t dev, uint64_t out[4]);
void cuzk_cuda_srs_free(cuzk_cuda_srs* srs);

/* A recorded circuit (three matrices of `rows` rows, `ncoeffs` coefficients in Montgomery form,
 * over `inputs` + `aux` variables) for the workspace's device. `tile_rows` 0: the matrices are
 * copied to the device (*upload_ms gets the copy time). Else the handle keeps the matrices'
 * host pointers (the caller keeps that memory alive, unmoved and best page-locked until the
 * handle is freed) and a STREAMED proof copies them in tiles of `tile_rows` rows (a multiple of
 * 32) while it evaluates a, b, c; only the coefficients go to the device. Terms out of range
 * are caught when the circuit is used. */
cuzk_cuda_status cuzk_cuda_r1cs_new(cuzk_cuda_workspace* ws, const cuzk_cuda_matrix* abc, uint64_t rows,
                                    const void* coeffs, uint64_t ncoeffs, uint64_t inputs, uint64_t aux,
                                    uint64_t tile_rows, cuzk_cuda_r1cs** out, float* upload_ms);
void cuzk_cuda_r1cs_free(cuzk_cuda_r1cs* r1cs);

/* The stages (CUZK_CUDA_STAGE_* bits) of one partition: H polynomial and ΣH, then the sparse
 * MSMs (L, A, B_G1 and optionally B_G2). Synchronous. */
cuzk_cuda_status cuzk_cuda_prove(cuzk_cuda_workspace* ws, const cuzk_cuda_srs* srs,
                                 const cuzk_cuda_prove_in* in, cuzk_cuda_prove_out* out, uint32_t stages);

/* Test builds only (CUZK_CUDA_FAULT_INJECTION): the next proof step reaching `site` fails with a
 * real CUDA error of `kind`. One fault armed at a time; arming replaces the previous one. */
enum {
    CUZK_CUDA_FAULT_ERROR = 1,   /* a failed runtime call (cudaErrorMemoryAllocation): recoverable */
    CUZK_CUDA_FAULT_STICKY = 2,  /* an out-of-bounds kernel write: the device's context is lost */
};
enum {
    CUZK_CUDA_SITE_STAGE_H = 1,  /* after the first vector's upload is queued */
    CUZK_CUDA_SITE_MSM = 2,      /* inside a Pippenger MSM, between sppark's setup and its kernels */
};
#ifdef CUZK_CUDA_FAULT_INJECTION
cuzk_cuda_status cuzk_cuda_inject_fault(int32_t kind, int32_t site);
#endif

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
static_assert(sizeof(cuzk_cuda_status) == 16, "cuzk_cuda_status size");
static_assert(sizeof(cuzk_cuda_g1) == 144, "cuzk_cuda_g1 size");
static_assert(sizeof(cuzk_cuda_g2) == 288, "cuzk_cuda_g2 size");
static_assert(sizeof(cuzk_cuda_sparse) == 56, "cuzk_cuda_sparse size");
static_assert(sizeof(cuzk_cuda_prove_in) == 336, "cuzk_cuda_prove_in size");
static_assert(sizeof(cuzk_cuda_rider) == 176, "cuzk_cuda_rider size");
static_assert(sizeof(cuzk_cuda_matrix) == 24, "cuzk_cuda_matrix size");
static_assert(sizeof(cuzk_cuda_prove_out) == 1672, "cuzk_cuda_prove_out size");
#endif

#endif
