// Test SRS generation on the GPU (feature `tools` only: CUZK_CUDA_TOOLS; never in the shipped
// library): the fixed-base multiples s·G of G1's and G2's generators for hundreds of millions of
// scalars s, each point summing 16 entries of a 16-bit window table (k·2^(16w)·G, made on the
// host) and returned affine — what src/fixtures/test_srs.rs does on CPU threads, which takes
// over 9 minutes of 16 cores for G1 at the 32 GiB PoRep shape (BENCHMARKS.md 2026-12-05 14:47)
// and for G2 alone over 5 at a 32 GiB WindowPoSt partition's (92 M B bases). A G2 point takes
// two threads: sppark spreads an Fp2 element over a pair of lanes.
#ifndef CUZK_CUDA_FIXED_BASE_CUH
#define CUZK_CUDA_FIXED_BASE_CUH

#include <string>

#include "kernels.cuh"
#include "raii.cuh"
#include "types.cuh"

namespace cuzk {

constexpr uint32_t FIXED_BASE_WINDOW = 16;
constexpr uint32_t FIXED_BASE_WINDOWS = 16;  // 256 bits

// bucket_t's storage (sppark's xyzz_t keeps X, Y, ZZZ, ZZ private, in this order).
struct xyzz_fields {
    fp_t X, Y, ZZZ, ZZ;
};
#ifdef __CUDA_ARCH__
// bucket2_t's on the device (each Fp2 one Fp coordinate per lane of a pair).
struct xyzz2_fields {
    fp2_t X, Y, ZZZ, ZZ;
};
#endif

// out[i] = s_i·G (affine; s_i = 0 gives blst's affine infinity, (0, 0)) for the n scalars in
// canonical form, 8 little-endian 32-bit words each. table[w·2^16 + k] = k·2^(16w)·G for
// k ≥ 1 (entry 0 is never read). One thread per point.
__launch_bounds__(256) __global__
void cuzk_fixed_base_g1(affine_t* out, const affine_t* table, const uint32_t* scalars, size_t n)
{
#ifdef __CUDA_ARCH__
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    // Every lane runs the same number of rounds: the reciprocal below shuffles between lanes.
    const size_t rounds = (n + stride - 1) / stride;
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (size_t r = 0; r < rounds; r++, i += stride) {
        bucket_t acc;
        acc.inf();
        if (i < n) {
            for (uint32_t w = 0; w < FIXED_BASE_WINDOWS; w++) {
                const uint32_t k = (scalars[8 * i + w / 2] >> (16 * (w & 1))) & 0xffff;
                if (k != 0)
                    acc.add(table[((size_t)w << FIXED_BASE_WINDOW) + k]);
            }
        }
        // x = X/ZZ, y = Y/ZZZ through one reciprocal of ZZ·ZZZ (zero at infinity: (0, 0)).
        const xyzz_fields& p = reinterpret_cast<const xyzz_fields&>(acc);
        const fp_t inv = (p.ZZ * p.ZZZ).reciprocal();
        if (i < n)
            out[i] = affine_t{p.X * p.ZZZ * inv, p.Y * p.ZZ * inv};
    }
#endif
}

// The same over G2 (`table` and `out` in blst_p2_affine's layout), two threads per point: lane
// 2j + h holds coordinate h of each Fp2 element of point j, and the pair multiplies through
// shuffles (sppark's fp2_t), so both lanes of a pair take every branch together.
__launch_bounds__(256) __global__
void cuzk_fixed_base_g2(affine2_h* out, const affine2_h* table, const uint32_t* scalars, size_t n)
{
#ifdef __CUDA_ARCH__
    static_assert(sizeof(xyzz2_fields) == sizeof(bucket2_t), "bucket2_t is X, Y, ZZZ, ZZ");
    const size_t stride = (size_t)blockDim.x * gridDim.x / 2;
    const size_t rounds = (n + stride - 1) / stride;
    size_t i = (threadIdx.x + (size_t)blockIdx.x * blockDim.x) / 2;
    for (size_t r = 0; r < rounds; r++, i += stride) {
        bucket2_t acc;
        acc.inf();
        if (i < n) {
            for (uint32_t w = 0; w < FIXED_BASE_WINDOWS; w++) {
                const uint32_t k = (scalars[8 * i + w / 2] >> (16 * (w & 1))) & 0xffff;
                if (k != 0)
                    acc.add((affine2_t)table[((size_t)w << FIXED_BASE_WINDOW) + k]);
            }
        }
        const xyzz2_fields& p = reinterpret_cast<const xyzz2_fields&>(acc);
        const fp2_t inv = (p.ZZ * p.ZZZ).reciprocal();
        const fp2_t x = p.X * p.ZZZ * inv, y = p.Y * p.ZZ * inv;
        if (i < n) {
            fp2_t::mem_t* o = reinterpret_cast<fp2_t::mem_t*>(out + i);  // X, then Y
            o[0] = x;
            o[1] = y;
        }
    }
#endif
}

// The multiples of `n` scalars (host, canonical little-endian) into `out` (host), through the
// device in batches; `table` (host) is FIXED_BASE_WINDOWS × 2^FIXED_BASE_WINDOW affine points.
// `kernel` makes one batch with `lanes` threads per point.
template<class affine>
inline void fixed_base(const gpu_t& gpu, const affine* table, const uint32_t* scalars, size_t n, affine* out,
                       void (*kernel)(affine*, const affine*, const uint32_t*, size_t), uint32_t lanes)
{
    gpu.select();
    const size_t entries = (size_t)FIXED_BASE_WINDOWS << FIXED_BASE_WINDOW;
    device_buffer<affine> d_table;
    d_table.reserve(entries);
    CUDA_OK(cudaMemcpy(d_table.get(), table, entries * sizeof(affine), cudaMemcpyHostToDevice));
    const size_t batch = std::min<size_t>(n, (size_t)1 << 24);
    device_buffer<uint32_t> d_scalars;
    device_buffer<affine> d_out;
    d_scalars.reserve(8 * std::max<size_t>(batch, 1));
    d_out.reserve(std::max<size_t>(batch, 1));
    stream_t& s = gpu[0];
    for (size_t first = 0; first < n; first += batch) {
        const size_t len = std::min(batch, n - first);
        CUDA_OK(cudaMemcpyAsync(d_scalars.get(), scalars + 8 * first, len * 32, cudaMemcpyHostToDevice, s));
        kernel<<<grid_for(gpu.sm_count(), lanes * len), 256, 0, s>>>(d_out.get(), d_table.get(), d_scalars.get(), len);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpyAsync(out + first, d_out.get(), len * sizeof(affine), cudaMemcpyDeviceToHost, s));
        s.sync();
    }
}

inline void fixed_base_g1(const gpu_t& gpu, const affine_t* table, const uint32_t* scalars, size_t n, affine_t* out)
{
    static_assert(sizeof(xyzz_fields) == sizeof(bucket_t), "bucket_t is X, Y, ZZZ, ZZ");
    fixed_base<affine_t>(gpu, table, scalars, n, out, cuzk_fixed_base_g1, 1);
}

inline void fixed_base_g2(const gpu_t& gpu, const affine2_h* table, const uint32_t* scalars, size_t n, affine2_h* out)
{
    fixed_base<affine2_h>(gpu, table, scalars, n, out, cuzk_fixed_base_g2, 2);
}

} // namespace cuzk

#endif
