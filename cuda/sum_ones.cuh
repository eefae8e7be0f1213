// The sparse stage's sums of the G1 bases whose scalar is one (L, A, B_G1), by the affine rounds
// of msm_affine.cuh instead of sppark's bitmap-driven batch_addition. sppark's adds each base into a
// per-thread XYZZ accumulator: 10 Fp multiplications per addition. Here the set bits are listed
// (popcount, scan, positions), cut into buckets of SEG consecutive entries, and the rounds add each
// bucket's points pairwise with shared inversions (~6.4 multiplications per addition) until ~2 are
// left, which msm_big's XYZZ bucket sums add; the bucket sums are then folded (plain sums) to a few
// partial sums that the host adds with the rest. The first round reads the bases in increasing
// index order. At most CHUNK entries go through the rounds at a time, which bounds their buffers
// (~3.9 GB; the lists ~0.55 GB at the 32 GiB shape). Another order of addition: the same sums.
// Measured at the 32 GiB shape (BENCHMARKS.md, 2026-12-04 13:33–13:46): 56 ms beside a's upload in
// P3 against sppark's 71 (P3 1.069 vs 1.084 s); beside B_G2's Pippenger (the unprepared order) 70
// against 72 ms. Buckets of 64 and passes of 2^24 entries took 65 ms: their late rounds filled a
// fraction of the device (a thread takes 64 additions, so a full wave is ~4 M of them).
#ifndef CUZK_CUDA_SUM_ONES_CUH
#define CUZK_CUDA_SUM_ONES_CUH

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>

#include "msm_affine.cuh"
#include "msm_big.cuh"
#include "raii.cuh"
#include "types.cuh"

namespace cuzk {
namespace ones {

constexpr uint32_t SEG = 16;                 // entries per bucket: three rounds leave ~2
constexpr size_t CHUNK = (size_t)1 << 25;    // entries per pass of the rounds
using msm_big::grid;
using msm_big::THREADS;

// The bitmap's word w with the bits of points at and above npoints cleared.
__device__ __forceinline__ uint32_t word_of(const uint32_t* bits, size_t w, size_t npoints)
{
    const size_t first = w * 32;
    if (first >= npoints)
        return 0;
    const uint32_t b = bits[w];
    return npoints - first >= 32 ? b : b & ((1u << (npoints - first)) - 1);
}

// counts[w] = set bits of word w, for w < words; counts[words] = 0 (the scan's total lands there).
__global__ void popcounts(const uint32_t* bits, size_t words, size_t npoints, uint32_t* counts)
{
    for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w <= words; w += (size_t)gridDim.x * blockDim.x)
        counts[w] = w < words ? __popc(word_of(bits, w, npoints)) : 0;
}

// idx[offs[w] ..] = the positions of word w's set bits, in increasing order.
__global__ void positions(const uint32_t* bits, size_t words, size_t npoints, const uint32_t* offs, uint32_t* idx)
{
    for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < words; w += (size_t)gridDim.x * blockDim.x) {
        uint32_t b = word_of(bits, w, npoints), o = offs[w];
        while (b != 0) {
            idx[o++] = (uint32_t)(w * 32) + (__ffs(b) - 1);
            b &= b - 1;
        }
    }
}

// Bucket b (1..=m) holds entries (b − 1)·SEG .. b·SEG of n; bucket 0 is empty (the rounds' layout).
__global__ void segment_bounds(uint32_t n, uint32_t m, uint32_t* start)
{
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b <= m + 1; b += gridDim.x * blockDim.x)
        start[b] = b == 0 ? 0 : min((b - 1) * SEG, n);
}

// The lists of set bits of three bitmaps, made on `s`: counts known on the host.
struct lists_t {
    size_t count[3] = {0, 0, 0};
    std::unique_ptr<pool_buffer<uint32_t>> idx;

    // Bitmap f: bits[f] (words[f] words) over npoints[f] points; list f at idx + off(f).
    lists_t(const gpu_t& gpu, stream_t& s, const uint32_t* const bits[3], const size_t words[3],
            const size_t npoints[3])
    {
        const size_t wmax = std::max({words[0], words[1], words[2]});
        pool_buffer<uint32_t> counts(3 * (wmax + 1), s), offs(3 * (wmax + 1), s);
        size_t temp_bytes = 0;
        CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, (const uint32_t*)nullptr, (uint32_t*)nullptr,
                                              wmax + 1));
        pool_buffer<char> temp(temp_bytes, s);
        uint32_t total[3];  // (pageable: the copies finish by the sync below)
        for (int f = 0; f < 3; f++) {
            total[f] = 0;
            if (npoints[f] == 0)
                continue;
            uint32_t *c = counts.get() + f * (wmax + 1), *o = offs.get() + f * (wmax + 1);
            popcounts<<<grid(gpu, words[f] + 1), THREADS, 0, s>>>(bits[f], words[f], npoints[f], c);
            CUDA_OK(cudaGetLastError());
            size_t tb = temp_bytes;
            CUDA_OK(cub::DeviceScan::ExclusiveSum(temp.get(), tb, c, o, words[f] + 1, (cudaStream_t)s));
            CUDA_OK(cudaMemcpyAsync(&total[f], o + words[f], sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        }
        s.sync();  // the counts size the lists and the rounds
        for (int f = 0; f < 3; f++)
            count[f] = total[f];
        idx = std::make_unique<pool_buffer<uint32_t>>(count[0] + count[1] + count[2], s);
        for (int f = 0; f < 3; f++) {
            if (count[f] == 0)
                continue;
            positions<<<grid(gpu, words[f]), THREADS, 0, s>>>(bits[f], words[f], npoints[f],
                                                              offs.get() + f * (wmax + 1), idx->get() + off(f));
            CUDA_OK(cudaGetLastError());
        }
    }

    size_t off(int f) const { return f == 0 ? 0 : f == 1 ? count[0] : count[0] + count[1]; }
};

// Σ points[idx[j]] for j < n as at most `cap` XYZZ partial sums at out[0..cap) (the rest of out
// is left alone; unused partials are infinity), on `s`.
class summer_t {
    const gpu_t& gpu;
    stream_t& s;
    size_t chunk;  // entries per pass: CHUNK, or fewer where no list is that long
    uint32_t mmax;
    msm_affine::rounds_t rounds;
    pool_buffer<uint32_t> start;
    pool_buffer<bucket_h> buckets, fold_a, fold_b;

public:
    // For lists of up to `longest` entries, in passes of at most `max_chunk` (a smaller one only
    // to check the several-pass path at small sizes).
    summer_t(const gpu_t& gpu_, stream_t& s_, size_t longest, size_t max_chunk = CHUNK)
        : gpu(gpu_), s(s_), chunk(std::max<size_t>(1, std::min({CHUNK, max_chunk, longest}))),
          mmax((uint32_t)((chunk + SEG - 1) / SEG)), rounds(chunk, mmax, 64, s_), start(mmax + 2, s_),
          buckets(mmax + 1, s_), fold_a(msm_big::segments(mmax + 1), s_), fold_b(msm_big::segments(mmax + 1), s_)
    {}

    void sum(const affine_t* points, const uint32_t* idx, size_t n, bucket_h* out, size_t cap)
    {
        const size_t chunks = (n + chunk - 1) / chunk;
        if (cap == 0 || chunks > cap)
            throw sppark_error{CUZK_CUDA_E_INVALID, "sum of ones: " + std::to_string(chunks) + " chunks for " +
                                                        std::to_string(cap) + " partial sums"};
        CUDA_OK(cudaMemsetAsync(out, 0, cap * sizeof(bucket_h), s));  // all-zero XYZZ: infinity
        if (chunks == 0)
            return;
        const size_t per = cap / chunks;
        for (size_t c = 0; c < chunks; c++) {
            const uint32_t len = (uint32_t)std::min(chunk, n - c * chunk), m = (len + SEG - 1) / SEG;
            segment_bounds<<<grid(gpu, m + 2), THREADS, 0, s>>>(len, m, start.get());
            CUDA_OK(cudaGetLastError());
            const affine_t* pts = points;
            const uint32_t *vals = idx + c * chunk, *bounds = start.get();
            if (msm_affine::rounds(len, m) > 0) {
                std::tie(pts, bounds) = rounds.reduce(gpu, m, points, vals, bounds, s, len);
                vals = nullptr;  // the rounds' output is in bucket order
            }
            msm_big::sum_buckets<false><<<(m + 1 + msm_big::SUMS_BLOCK - 1) / msm_big::SUMS_BLOCK, msm_big::SUMS_BLOCK, 0, s>>>(
                pts, vals, bounds, nullptr, m, buckets.get());
            CUDA_OK(cudaGetLastError());
            // Plain sums of 32 buckets at a time until `per` or fewer are left.
            const bucket_h* in = buckets.get();
            uint32_t count = m + 1;
            bucket_h* next = fold_a.get();
            while (count > per) {
                const uint32_t k = msm_big::segments(count);
                msm_big::fold<<<(k + THREADS - 1) / THREADS, THREADS, 0, s>>>(
                    in, count, false, nullptr, next);
                CUDA_OK(cudaGetLastError());
                in = next;
                count = k;
                next = next == fold_a.get() ? fold_b.get() : fold_a.get();
            }
            CUDA_OK(cudaMemcpyAsync(out + c * per, in, count * sizeof(bucket_h), cudaMemcpyDeviceToDevice, s));
        }
    }
};

} // namespace ones
} // namespace cuzk

#endif
