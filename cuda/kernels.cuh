// The element-wise kernels of a proof: H's pointwise steps, a, b, c of a recorded circuit
// (sparse matrix × witness, by warps), scaling, and gathering bases by index.
#ifndef CUZK_CUDA_KERNELS_CUH
#define CUZK_CUDA_KERNELS_CUH

#include <algorithm>
#include <cstring>

#include "types.cuh"

// Blocks of 256 threads for an n-element grid-stride kernel: enough to cover n, at most 8 per SM.
inline unsigned grid_for(size_t sm_count, size_t n)
{
    return (unsigned)std::min<size_t>((n + 255) / 256, sm_count * 8);
}

struct fr_raw {
    uint32_t v[8];
};

// a[i] = a[i]·b[i] over the coset evaluations (C is not needed there: see finish_h).
__launch_bounds__(256) __global__
void cuzk_h_product(fr_t* a, const fr_t* b, size_t n)
{
#ifdef __CUDA_ARCH__
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        a[i] = a[i] * b[i];
#endif
}

// a[i] = (a[i] − c[i]) · z_inv over coefficients (both in the same order).
__launch_bounds__(256) __global__
void cuzk_h_minus_c(fr_t* a, const fr_t* c, fr_raw z_inv_raw, size_t n)
{
#ifdef __CUDA_ARCH__
    fr_t z_inv;
    memcpy(&z_inv, &z_inv_raw, sizeof(z_inv));
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
        fr_t x = a[i] - c[i];
        a[i] = x * z_inv;
    }
#endif
}

// One term of a recorded matrix (cuzk_cuda_matrix) times its witness value, w = [input | aux];
// an out-of-range variable or coefficient flags *bad and counts as zero.
__device__ __forceinline__ fr_t spmv_term(uint64_t x, const fr_t* coeffs, uint32_t ncoeffs, const fr_t* input,
                                          uint32_t ninput, const fr_t* aux, uint32_t naux, uint32_t* bad)
{
    fr_t v;
#ifdef __CUDA_ARCH__
    v = fr_t::one(1);  // zero
    uint32_t var = (uint32_t)x, c = (uint32_t)(x >> 32), i = var & 0x7fffffffu;
    const bool is_input = (var & 0x80000000u) != 0;
    if (i >= (is_input ? ninput : naux) || c >= ncoeffs) {
        *bad = 1;
        return v;
    }
    const fr_t w = is_input ? input[i] : aux[i];
    if (c == 0)
        v = w;
    else if (c == 1)
        v -= w;
    else
        v = w * coeffs[c];
#endif
    return v;
}

// out[r] = Σ coefficient · value over row r. The terms in reach are those of one tile of rows
// (the whole matrix when the circuit is on the device): `terms` holds the terms from index `term0`
// on, `end` the tile's row ends (absolute term indices), and row 0 of the tile starts at `term0`.
// A malformed row (its end beyond `nterms`, before its start, or its start before the tile's)
// flags *bad and is left empty.
__device__ __forceinline__ void spmv_row(size_t r, fr_t* out, const uint32_t* end, const uint64_t* terms,
                                         uint64_t term0, uint64_t nterms, const fr_t* coeffs, uint32_t ncoeffs,
                                         const fr_t* input, uint32_t ninput, const fr_t* aux, uint32_t naux,
                                         uint32_t* bad)
{
#ifdef __CUDA_ARCH__
    uint64_t start = r == 0 ? term0 : end[r - 1], stop = end[r];
    if (stop > nterms || start > stop || start < term0) {
        *bad = 1;
        start = stop = term0;
    }
    fr_t acc = fr_t::one(1);  // zero
    for (uint64_t t = start; t < stop; t++)
        acc += spmv_term(terms[t - term0], coeffs, ncoeffs, input, ninput, aux, naux, bad);
    out[r] = acc;
#endif
}

// a, b or c of a recorded matrix (or of one tile of its rows, spmv_row) by warps. One row per
// thread would make a warp wait for its longest row while its 32 threads read 32 rows' terms at
// once (uncoalesced; measured 2.5x slower at 32 GiB, BENCHMARKS.md). Here a warp takes 32
// consecutive rows, whose terms are contiguous, and walks them 32 terms at a time: lane l
// evaluates term base + l, a segmented warp scan sums the values row by row, and the last lane
// of each row in the chunk adds the row's sum to the row's accumulator in shared memory. A group
// with a malformed row takes the row-per-lane path (same flags, same values). Field sums are
// exact, so the order of addition does not change a value.
constexpr uint32_t SPMV_WARPS = 8;  // warps per 256-thread block

__launch_bounds__(256) __global__
void cuzk_spmv_warp(fr_t* out, const uint32_t* end, const uint64_t* terms, uint64_t term0, uint64_t nterms,
                    const fr_t* coeffs, uint32_t ncoeffs, const fr_t* input, uint32_t ninput, const fr_t* aux, uint32_t naux,
                    size_t rows, uint32_t* bad)
{
#ifdef __CUDA_ARCH__
    constexpr uint32_t FULL = 0xffffffffu, LIMBS = sizeof(fr_t) / sizeof(uint32_t);
    __shared__ uint32_t sums[SPMV_WARPS][32][LIMBS];  // row j of the group: sums[w][j]
    __shared__ int32_t heads[SPMV_WARPS][32];          // the row that starts at chunk lane l, or -1
    const uint32_t lane = threadIdx.x % 32, w = threadIdx.x / 32;
    const size_t groups = (rows + 31) / 32;
    // g depends on the warp only: every lane of a warp runs the same iterations (shuffles).
    for (size_t g = blockIdx.x * (size_t)SPMV_WARPS + w; g < groups; g += (size_t)gridDim.x * SPMV_WARPS) {
        const size_t r = g * 32 + lane;
        const bool real = r < rows;
        uint64_t start = 0, stop = 0;
        if (real) {
            start = r == 0 ? term0 : end[r - 1];
            stop = end[r];
        }
        if (__any_sync(FULL, real && (stop > nterms || start > stop || start < term0))) {
            if (real)
                spmv_row(r, out, end, terms, term0, nterms, coeffs, ncoeffs, input, ninput, aux, naux, bad);
            continue;
        }
        // Valid rows chain (row r + 1 starts where row r stops): the group's terms are [from, to).
        const uint32_t last = (uint32_t)min((size_t)31, rows - 1 - g * 32);
        const uint64_t from = __shfl_sync(FULL, start, 0), to = __shfl_sync(FULL, stop, last);
        if (!real)
            start = stop = to;
        const fr_t zero = fr_t::one(1);
        zero.store(sums[w][lane]);
        int32_t row = 0;  // the group row (lane index) of this lane's term
        for (uint64_t base = from; base < to; base += 32) {
            heads[w][lane] = -1;
            __syncwarp();
            if (start < stop && start >= base && start - base < 32)  // non-empty rows start at distinct terms
                heads[w][start - base] = (int32_t)lane;
            __syncwarp();
            // The last row starting at or before this lane's term (prefix max), else the row the
            // previous chunk ended in.
            int32_t h = heads[w][lane];
            for (uint32_t d = 1; d < 32; d <<= 1) {
                const int32_t o = __shfl_up_sync(FULL, h, d);
                if (lane >= d)
                    h = max(h, o);
            }
            const int32_t carried = __shfl_sync(FULL, row, 31);
            row = h >= 0 ? h : carried;
            const uint64_t t = base + lane;
            fr_t v = t < to ? spmv_term(terms[t - term0], coeffs, ncoeffs, input, ninput, aux, naux, bad) : zero;
            // Inclusive scan within rows (rows never decrease along the lanes).
            for (uint32_t d = 1; d < 32; d <<= 1) {
                fr_t o;
                for (uint32_t k = 0; k < LIMBS; k++)
                    o[k] = __shfl_up_sync(FULL, v[k], d);
                const int32_t orow = __shfl_up_sync(FULL, row, d);
                if (lane >= d && orow == row)
                    v += o;
            }
            const int32_t next = __shfl_down_sync(FULL, row, 1);
            if (lane == 31 || next != row) {  // the row's last lane in this chunk: one per row
                fr_t acc;
                for (uint32_t k = 0; k < LIMBS; k++)
                    acc[k] = sums[w][row][k];
                acc += v;
                acc.store(sums[w][row]);
            }
            __syncwarp();
        }
        if (real) {
            fr_t res;
            for (uint32_t k = 0; k < LIMBS; k++)
                res[k] = sums[w][lane][k];
            out[r] = res;
        }
        __syncwarp();
    }
#endif
}

// out[i] = in[i] · k (the significant B scalars times r, folded into the H MSM).
__launch_bounds__(256) __global__
void cuzk_scale(fr_t* out, const fr_t* in, fr_raw k_raw, size_t n)
{
#ifdef __CUDA_ARCH__
    fr_t k;
    memcpy(&k, &k_raw, sizeof(k));
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = in[i] * k;
#endif
}

// out[k] = bases[idx[k] - first] for affine points of W 16-byte words (G1: 6, G2: 12); `bases`
// holds the points from index `first` on (a streamed tile; 0 for a whole section).
template<int W> __launch_bounds__(256) __global__
void cuzk_gather(uint4* out, const uint4* bases, const uint32_t* idx, uint32_t n, uint32_t first = 0)
{
    for (uint32_t k = threadIdx.x + blockIdx.x * blockDim.x; k < n; k += blockDim.x * gridDim.x) {
        const uint4* src = bases + (size_t)(idx[k] - first) * W;
        uint4* dst = out + (size_t)k * W;
        uint4 w[W];
        #pragma unroll
        for (int i = 0; i < W; i++)
            w[i] = src[i];
        #pragma unroll
        for (int i = 0; i < W; i++)
            dst[i] = w[i];
    }
}

static_assert(sizeof(affine_t) == 6 * sizeof(uint4), "G1 affine point is six 16-byte words");
static_assert(sizeof(affine2_h) == 12 * sizeof(uint4), "G2 affine point is twelve 16-byte words");

#endif
