// Pippenger for the big dense G1 MSM (ΣH at 2^24–2^27 points) on one device, written for large
// memories: the whole MSM in one pass (no point batches), windows of c = 20–22 bits (12–13
// windows instead of sppark's 15 at its 18-bit cap), and window w + 1's digits and sort (CUB
// radix sort, memory-bound) running on a second stream under window w's bucket sums
// (compute-bound). Per window:
//   digits   Booth digit of every scalar: key = |digit| (bucket), value = index | sign << 31
//   sort     CUB radix sort by bucket; `bounds` finds each bucket's range in the sorted values
//   buckets  one thread per bucket sums its points (sppark's complete XYZZ mixed addition)
//   segments S threads each fold L = m / S consecutive buckets into (Σ (j − lo)·B_j, Σ B_j)
// The host folds the segments (Σ_k S_k + L·Σ_k k·T_k) and the windows (Horner, c doublings).
#ifndef CUZK_CUDA_MSM_BIG_CUH
#define CUZK_CUDA_MSM_BIG_CUH

#include <cub/device/device_radix_sort.cuh>

#include <thread>
#include <vector>

#include "raii.cuh"
#include "types.cuh"

namespace msm_big {

constexpr uint32_t SEGMENTS = 1024;  // per window
constexpr uint32_t THREADS = 256;

// `n` bits (n <= 25) of the canonical scalar `s` (eight 32-bit limbs) from bit `off`; bits at
// 256 and above read as zero.
__device__ __forceinline__ uint32_t bits_at(const uint32_t s[8], uint32_t off, uint32_t n)
{
    if (off >= 256)
        return 0;
    uint32_t i = off / 32;
    uint64_t v = s[i];
    if (i + 1 < 8)
        v |= (uint64_t)s[i + 1] << 32;
    return (uint32_t)(v >> (off % 32)) & ((1u << n) - 1);
}

// Window w's Booth digit: c bits from c·w plus the bit below them (what the lower window
// borrowed), minus 2^c when the window's top bit is set. Canonical scalars are below 2^255, so
// the top window (⌈256/c⌉ windows) is never negative.
__global__ void digits(const fr_t* scalars, size_t n, uint32_t c, uint32_t w, uint32_t* keys, uint32_t* vals)
{
#ifdef __CUDA_ARCH__  // fr_t's limbs are reachable in device code only
    const uint32_t lo = c * w;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        fr_t s = scalars[i];
        s.from();
        uint32_t l[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            l[k] = s[k];
        uint32_t v = bits_at(l, lo, c) + (lo == 0 ? 0 : bits_at(l, lo - 1, 1));
        uint32_t neg = bits_at(l, lo + c - 1, 1);
        keys[i] = neg ? (1u << c) - v : v;
        vals[i] = (uint32_t)i | (neg << 31);
    }
#endif
}

// start[b] = the first sorted position whose key is >= b, for b in 0..=m+1 (keys are <= m).
__global__ void bounds(const uint32_t* keys, size_t n, uint32_t m, uint32_t* start)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i <= n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t from = i == 0 ? 0 : keys[i - 1] + 1;
        uint32_t to = i == n ? m + 1 : keys[i];
        for (uint32_t b = from; b <= to; b++)
            start[b] = (uint32_t)i;
    }
}

// buckets[b] = Σ ±points over bucket b's sorted entries, b in 1..=m (bucket 0: digit 0, unused).
__global__ void __launch_bounds__(THREADS) sum_buckets(const affine_t* points, const uint32_t* vals,
                                                      const uint32_t* start, uint32_t m, bucket_h* buckets)
{
    uint32_t b = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (b > m)
        return;
    bucket_t acc;
    acc.inf();
    for (uint32_t j = start[b], e = start[b + 1]; j < e; j++) {
        uint32_t v = vals[j];
        affine_t p = points[v & 0x7fffffff];
        acc.add(p, v >> 31);
    }
    buckets[b] = acc;
}

// Segment k of SEGMENTS (buckets k·L+1 ..= (k+1)·L): out[2k] = Σ (j − k·L)·B_j, out[2k+1] = Σ B_j.
__global__ void __launch_bounds__(THREADS) fold_segments(const bucket_h* buckets, uint32_t m, bucket_h* out)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= SEGMENTS)
        return;
    const uint32_t l = m / SEGMENTS;
    bucket_t t, s;
    t.inf();
    s.inf();
    for (uint32_t j = (k + 1) * l; j > k * l; j--) {
        bucket_t b = buckets[j];
        t.add(b);
        s.add(t);
    }
    out[2 * k] = s;
    out[2 * k + 1] = t;
}

inline uint32_t grid(const gpu_t& gpu, size_t n)
{
    size_t blocks = (n + THREADS - 1) / THREADS;
    size_t cap = (size_t)gpu.sm_count() * 16;
    return (uint32_t)std::max<size_t>(1, std::min(blocks, cap));
}

// Host: Σ_j j·B_j of one window from its segments.
inline point_t fold_window(const bucket_t* seg, uint32_t m)
{
    point_t sum, u, v;
    sum.inf();
    u.inf();
    v.inf();
    for (uint32_t k = SEGMENTS; k-- > 0;) {
        sum.add(point_t(seg[2 * k]));
        if (k > 0) {
            u.add(point_t(seg[2 * k + 1]));  // Σ_{k' >= k} T_k'
            v.add(u);                        // Σ_k k·T_k once k reaches 1
        }
    }
    for (uint32_t l = m / SEGMENTS; l > 1; l >>= 1)
        v.dbl();
    sum.add(v);
    return sum;
}

// Milliseconds of the phases, for the caller's report.
struct timings {
    float total = 0, first_sort = 0;
};

// Σ scalars[i]·points[i] over device-resident points and Montgomery-form scalars, c-bit windows
// (c ≥ 12; m = 2^(c−1) buckets, a multiple of SEGMENTS). Synchronous.
inline point_t msm(const gpu_t& gpu, const affine_t* d_points, const fr_t* d_scalars, size_t n, uint32_t c,
                   timings* t = nullptr)
{
    point_t out;
    out.inf();
    if (n == 0)
        return out;
    if (c < 12 || c > 24 || n >= (1u << 31))
        throw sppark_error{CUZK_CUDA_E_INVALID, "msm_big: window " + std::to_string(c) + " or size " + std::to_string(n)};
    const uint32_t m = 1u << (c - 1);
    const uint32_t nwin = (256 + c - 1) / c;

    stream_t sort_s{gpu.id()}, sum_s{gpu.id()};
    struct set_t {
        device_buffer<uint32_t> keys, vals, skeys, svals, start;
        device_buffer<bucket_h> buckets;
        timing_event sorted, summed;
    } set[2];
    size_t temp_bytes = 0;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, (const uint32_t*)nullptr, (uint32_t*)nullptr,
                                            (const uint32_t*)nullptr, (uint32_t*)nullptr, n, 0, c));
    device_buffer<char> temp[2];
    for (int k = 0; k < 2; k++) {
        set[k].keys.reserve(n);
        set[k].vals.reserve(n);
        set[k].skeys.reserve(n);
        set[k].svals.reserve(n);
        set[k].start.reserve(m + 2);
        set[k].buckets.reserve(m + 1);
        temp[k].reserve(temp_bytes);
    }
    device_buffer<bucket_h> segs;
    segs.reserve((size_t)nwin * 2 * SEGMENTS);

    timing_event begin, first_sorted, end;
    begin.record(sort_s);
    CUDA_OK(cudaStreamWaitEvent(sum_s, begin, 0));
    for (uint32_t w = 0; w < nwin; w++) {
        set_t& st = set[w & 1];
        if (w >= 2)  // the sums of window w − 2 are done with this set
            CUDA_OK(cudaStreamWaitEvent(sort_s, st.summed, 0));
        digits<<<grid(gpu, n), THREADS, 0, sort_s>>>(d_scalars, n, c, w, st.keys.get(), st.vals.get());
        CUDA_OK(cudaGetLastError());
        size_t tb = temp_bytes;
        CUDA_OK(cub::DeviceRadixSort::SortPairs(temp[w & 1].get(), tb, st.keys.get(), st.skeys.get(), st.vals.get(),
                                                st.svals.get(), n, 0, c, (cudaStream_t)sort_s));
        bounds<<<grid(gpu, n + 1), THREADS, 0, sort_s>>>(st.skeys.get(), n, m, st.start.get());
        CUDA_OK(cudaGetLastError());
        st.sorted.record(sort_s);
        if (w == 0)
            first_sorted.record(sort_s);

        CUDA_OK(cudaStreamWaitEvent(sum_s, st.sorted, 0));
        sum_buckets<<<(m + THREADS - 1) / THREADS, THREADS, 0, sum_s>>>(d_points, st.svals.get(), st.start.get(), m,
                                                                         st.buckets.get());
        CUDA_OK(cudaGetLastError());
        fold_segments<<<(SEGMENTS + THREADS - 1) / THREADS, THREADS, 0, sum_s>>>(st.buckets.get(), m,
                                                                                  segs.get() + (size_t)w * 2 * SEGMENTS);
        CUDA_OK(cudaGetLastError());
        st.summed.record(sum_s);
    }
    std::vector<bucket_t> host((size_t)nwin * 2 * SEGMENTS);
    CUDA_OK(cudaMemcpyAsync(host.data(), segs.get(), host.size() * sizeof(bucket_h), cudaMemcpyDeviceToHost, sum_s));
    end.record(sum_s);
    CUDA_OK(cudaStreamSynchronize(sum_s));
    CUDA_OK(cudaStreamSynchronize(sort_s));
    if (t != nullptr) {
        t->total = elapsed_ms(begin, end);
        t->first_sort = elapsed_ms(begin, first_sorted);
    }

    std::vector<point_t> win(nwin);
    std::vector<std::thread> pool;
    for (uint32_t w = 0; w < nwin; w++)
        pool.emplace_back([&, w] { win[w] = fold_window(&host[(size_t)w * 2 * SEGMENTS], m); });
    for (auto& th : pool)
        th.join();
    for (uint32_t w = nwin; w-- > 0;) {
        if (w + 1 != nwin)
            for (uint32_t i = 0; i < c; i++)
                out.dbl();
        out.add(win[w]);
    }
    return out;
}

} // namespace msm_big

#endif
