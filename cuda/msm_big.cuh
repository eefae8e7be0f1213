// Pippenger for the big dense G1 MSM (ΣH at 2^24–2^27 points) on one device, written for large
// memories: the whole MSM in one pass (no point batches), windows of c = 20–22 bits (12–13
// windows instead of sppark's 15 at its 18-bit cap), and window w + 1's digits and sort (CUB
// radix sort, memory-bound) running on a second stream under window w's bucket sums
// (compute-bound). Per window:
//   digits   Booth digit of every scalar: key = |digit| (bucket), value = index | sign << 31
//   sort     CUB radix sort by bucket; `bounds` finds each bucket's range in the sorted values
//   buckets  one thread per bucket sums its points (sppark's complete XYZZ mixed addition),
//            buckets taken largest first (a second, 16-bit sort by bucket size)
//   fold     Σ_b b·B_b by running sums over segments of 32 buckets, twice (on a third stream:
//            latency-bound, it shares the device with the next window's sums)
// The host finishes each window from ~1000 points and combines the windows (Horner).
#ifndef CUZK_CUDA_MSM_BIG_CUH
#define CUZK_CUDA_MSM_BIG_CUH

#include <cub/device/device_radix_sort.cuh>

#include <chrono>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

#include "msm_affine.cuh"
#include "raii.cuh"
#include "types.cuh"

namespace msm_big {

constexpr uint32_t THREADS = 256;
constexpr uint32_t FOLD = 32;  // buckets per running-sum segment, at both fold levels

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

// The Booth digit of the window of c bits at bit `lo`: those bits plus the bit below them
// (what the lower window borrowed), minus 2^c when the window's top bit is set. The windows
// cover bits 0..256 exactly, so for canonical scalars (below 2^255) the top one is never
// negative. MONT: the scalars are in Montgomery form (reduced here, in every window).
template<bool MONT>
__global__ void digits(const fr_t* scalars, size_t n, uint32_t lo, uint32_t c, uint32_t* keys, uint32_t* vals)
{
#ifdef __CUDA_ARCH__  // fr_t's limbs are reachable in device code only
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        fr_t s = scalars[i];
        if (MONT)
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

// Spent scalars out of Montgomery form, in place, once (instead of in each window's digits).
__global__ void from_montgomery(fr_t* scalars, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        fr_t s = scalars[i];
        s.from();
        scalars[i] = s;
    }
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

// Bucket b's size (capped at 2^16 − 1: beyond that the order no longer matters) as a sort key,
// for b in 1..=m (bucket 0 is digit 0, never summed).
__global__ void bucket_sizes(const uint32_t* start, uint32_t m, uint32_t* keys, uint32_t* ids)
{
    for (uint32_t b = 1 + blockIdx.x * blockDim.x + threadIdx.x; b <= m; b += gridDim.x * blockDim.x) {
        keys[b - 1] = min(start[b + 1] - start[b], 0xffffu);
        ids[b - 1] = b;
    }
}

// buckets[b] = Σ ±points over bucket b's sorted entries, b in 0..=m (bucket 0 is digit 0: left
// at infinity, its weight is zero); null `vals`: entry j is points[j] (the affine rounds' output). One thread per bucket; a warp runs as long as its largest
// bucket, so with BALANCED thread t < m takes the t-th largest bucket (`order`, sorted by size:
// warps and blocks of near-equal work, the largest first) and thread m bucket 0 (against buckets
// in their natural order: cuda/HISTORY.md); without, thread t bucket t (the sums of ones, whose
// segments are equal). Blocks of SUMS_BLOCK threads: the kernel needs ~147 registers
// per thread on sm_90, so 128-thread blocks fit 3 per SM (12 warps to hide the random point
// loads and the multiplications' carry chains): 0.95x the time of 256-thread blocks at 2^26 and
// 2^27, and capped at 128 registers (4 blocks, some spilled) 0.97x (cuda/HISTORY.md).
// ACCUMULATE: buckets[b] += that sum (a tiled MSM's later tiles; every bucket of the window was
// written by its first tile).
constexpr uint32_t SUMS_BLOCK = 128;
template<bool BALANCED, bool ACCUMULATE = false>
__global__ void __launch_bounds__(SUMS_BLOCK) sum_buckets(const affine_t* points, const uint32_t* vals,
                                                         const uint32_t* start, const uint32_t* order, uint32_t m,
                                                         bucket_h* buckets)
{
    uint32_t t = blockIdx.x * SUMS_BLOCK + threadIdx.x;
    if (t > m)
        return;
    uint32_t b = BALANCED ? (t == m ? 0 : order[t]) : t;
    bucket_t acc;
    acc.inf();
    if (b != 0)
        for (uint32_t j = start[b], e = start[b + 1]; j < e; j++) {
            uint32_t v = vals != nullptr ? vals[j] : j;  // null: the points are in bucket order
            affine_t p = points[v & 0x7fffffff];
            acc.add(p, v >> 31);
        }
    if (ACCUMULATE) {
        bucket_t prev = buckets[b];
        acc.add(prev);
    }
    buckets[b] = acc;
}

// Over in[0..count): segment k = in[k·FOLD .. (k+1)·FOLD) gives tot[k] = Σ in[j] and, when
// `weighted`, wsum[k] = Σ (j − k·FOLD)·in[j] (running sums from the top of the segment).
// Then Σ_j j·in[j] = Σ_k wsum[k] + FOLD·Σ_k k·tot[k].
__global__ void __launch_bounds__(THREADS) fold(const bucket_h* in, uint32_t count, bool weighted,
                                               bucket_h* wsum, bucket_h* tot)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k * FOLD >= count)
        return;
    bucket_t t, s;
    t.inf();
    s.inf();
    uint32_t top = min((k + 1) * FOLD, count);
    for (uint32_t j = top; j-- > k * FOLD;) {
        if (weighted)
            s.add(t);
        bucket_t b = in[j];
        t.add(b);
    }
    if (weighted)
        wsum[k] = s;
    tot[k] = t;
}

inline uint32_t grid(const gpu_t& gpu, size_t n)
{
    size_t blocks = (n + THREADS - 1) / THREADS;
    size_t cap = (size_t)gpu.sm_count() * 16;
    return (uint32_t)std::max<size_t>(1, std::min(blocks, cap));
}

inline uint32_t segments(uint32_t count)
{
    return (count + FOLD - 1) / FOLD;
}

// One window's folds as the host receives them: level 1 over its buckets (w1 = wsum, t1 =
// tot), level 2 over t1 (w2, t2) and the plain sums of w1 (p2), level 3 over t2 (w3, t3) and the
// plain sums of w2 (q3) and p2 (p3), each `k3` long (64 at c = 22: the host adds ~200 points per
// window instead of ~8,000, which took ~20 ms of ΣH's critical path).
//   Σ_b b·B_b = Σ w1 + FOLD·Σ_k k·t1_k,  Σ_k k·t1_k = Σ w2 + FOLD·Σ_k k·t2_k,
//   Σ_k k·t2_k = Σ w3 + FOLD·Σ_k k·t3_k,  Σ w1 = Σ p2 = Σ p3,  Σ w2 = Σ q3.
inline point_t fold_window(const bucket_t* w3, const bucket_t* t3, const bucket_t* q3, const bucket_t* p3, uint32_t k3)
{
    point_t u, v, sw3, sq3, sp3;
    u.inf();
    v.inf();
    sw3.inf();
    sq3.inf();
    sp3.inf();
    for (uint32_t k = k3; k-- > 0;) {
        sw3.add(point_t(w3[k]));
        sq3.add(point_t(q3[k]));
        sp3.add(point_t(p3[k]));
        if (k > 0) {
            u.add(point_t(t3[k]));  // Σ_{k' >= k} t3
            v.add(u);               // Σ k'·t3 once k reaches 1
        }
    }
    for (const point_t* next : {&sw3, &sq3, &sp3}) {
        for (uint32_t l = FOLD; l > 1; l >>= 1)
            v.dbl();
        v.add(*next);
    }
    return v;
}

// Milliseconds, for the caller's report: the whole MSM, the first window's digits + sort (before
// any sum can start), and the sums of the windows' sort and bucket-sum kernel times (they overlap
// each other: sort + sum above total means the overlap worked).
struct timings {
    float total = 0, first_sort = 0, sorts = 0, sums = 0;
    float host_before = 0, host_after = 0;  // host clock: call → first event queued, last event → return
};

// The windows' widths: as many as 256 bits need at `c` bits each, the bits spread evenly (so
// the top window is as wide as the others: a narrow one has few, crowded buckets).
inline std::vector<uint32_t> widths(uint32_t c)
{
    uint32_t nwin = (256 + c - 1) / c, base = 256 / nwin, extra = 256 % nwin;
    std::vector<uint32_t> w(nwin, base);
    for (uint32_t i = 0; i < extra; i++)
        w[i]++;
    return w;
}

// How the buckets are summed: AFFINE, pairwise affine rounds that share inversions
// (msm_affine.cuh, K = 64 additions per thread and inversion: at 2^27 0.87x the XYZZ sums' time;
// K 8, 16, 32 and 128 slower: BENCHMARKS.md, 2026-12-03 evening), then XYZZ additions for the ~2
// points per bucket they leave; XYZZ, XYZZ additions alone (what runs where the device cannot
// lend the rounds' buffers).
enum sums_t : uint32_t { XYZZ = 0, AFFINE = 8 };

// The affine rounds' buffers; none for XYZZ sums, or where the device cannot lend them (~13 GB
// at 2^27): the XYZZ sums, which need none, then do the work — slower, never a failed proof.
inline std::unique_ptr<msm_affine::rounds_t> affine_rounds(sums_t sums, size_t n, uint32_t mmax, cudaStream_t s)
{
    if (sums != AFFINE)
        return nullptr;
    try {
        return std::make_unique<msm_affine::rounds_t>(n, mmax, 64, s);
    } catch (const cuda_error& e) {
        if (e.code() != -(int)cudaErrorMemoryAllocation)
            throw;
        (void)cudaGetLastError();  // not sticky: clear it for the calls that follow
        return nullptr;
    }
}

inline void launch_sums(uint32_t m, cudaStream_t s, const affine_t* points, const uint32_t* vals, const uint32_t* start,
                        const uint32_t* order, bucket_h* buckets, bool accumulate)
{
    const uint32_t blocks = (m + 1 + SUMS_BLOCK - 1) / SUMS_BLOCK;
    if (accumulate)
        sum_buckets<true, true><<<blocks, SUMS_BLOCK, 0, s>>>(points, vals, start, order, m, buckets);
    else
        sum_buckets<true><<<blocks, SUMS_BLOCK, 0, s>>>(points, vals, start, order, m, buckets);
    CUDA_OK(cudaGetLastError());
}

// The sizes one MSM's buffers are made for: its windows' widths, the largest window's bucket
// count and fold segments at each level, and the CUB temporary both sorts of a window share.
struct shape_t {
    std::vector<uint32_t> width;
    uint32_t nwin, cmax, mmax, k1max, k2max, k3max;
    size_t temp_bytes;

    shape_t(size_t n, uint32_t c)
        : width(widths(c)), nwin((uint32_t)width.size()), cmax(width[0]), mmax(1u << (cmax - 1)),
          k1max(segments(mmax + 1)), k2max(segments(k1max)), k3max(segments(k2max)), temp_bytes(0)
    {
        size_t order_bytes = 0;
        CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, (const uint32_t*)nullptr, (uint32_t*)nullptr,
                                                (const uint32_t*)nullptr, (uint32_t*)nullptr, n, 0, (int)cmax));
        CUDA_OK(cub::DeviceRadixSort::SortPairsDescending(nullptr, order_bytes, (const uint32_t*)nullptr,
                                                          (uint32_t*)nullptr, (const uint32_t*)nullptr,
                                                          (uint32_t*)nullptr, mmax, 0, 16));
        temp_bytes = std::max(temp_bytes, order_bytes);
    }
};

// One window's buffers. Two sets, so window w + 1 sorts while window w sums (from the device's
// pool: reused by the next MSM, and by sppark's, without new mappings). keys, vals and skeys also
// carry the bucket-size sort's m entries: more than n where the buckets outnumber the points
// (22-bit windows over 2^20 points wrote past them). A tiled MSM keeps every window's buckets
// apart instead (`own_buckets` false).
struct set_t {
    pool_buffer<uint32_t> keys, vals, skeys, svals, start, order;
    pool_buffer<bucket_h> buckets, w1, t1;
    pool_buffer<char> temp;
    timing_event sorted, summed, folded;
    set_t(size_t n, const shape_t& sh, cudaStream_t s, bool own_buckets = true)
        : keys(std::max<size_t>(n, sh.mmax), s), vals(std::max<size_t>(n, sh.mmax), s),
          skeys(std::max<size_t>(n, sh.mmax), s), svals(n, s), start(sh.mmax + 2, s), order(sh.mmax, s),
          buckets(own_buckets ? sh.mmax + 1 : 0, s), w1(sh.k1max, s), t1(sh.k1max, s), temp(sh.temp_bytes, s)
    {}
};

// Window [lo, lo + cw)'s digits and sorts on `s`, into `st`: the values sorted by bucket, each
// bucket's range (`start`) and the buckets by size, largest first (`order`).
inline void sort_window(const gpu_t& gpu, const fr_t* d_scalars, bool spent, size_t n, uint32_t lo, uint32_t cw,
                        size_t temp_bytes, set_t& st, cudaStream_t s)
{
    const uint32_t m = 1u << (cw - 1);
    if (spent)
        digits<false><<<grid(gpu, n), THREADS, 0, s>>>(d_scalars, n, lo, cw, st.keys.get(), st.vals.get());
    else
        digits<true><<<grid(gpu, n), THREADS, 0, s>>>(d_scalars, n, lo, cw, st.keys.get(), st.vals.get());
    CUDA_OK(cudaGetLastError());
    size_t tb = temp_bytes;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(st.temp.get(), tb, st.keys.get(), st.skeys.get(), st.vals.get(),
                                            st.svals.get(), n, 0, (int)cw, s));
    bounds<<<grid(gpu, n + 1), THREADS, 0, s>>>(st.skeys.get(), n, m, st.start.get());
    CUDA_OK(cudaGetLastError());
    // Buckets by size, largest first (keys, vals and skeys are free again).
    bucket_sizes<<<grid(gpu, m), THREADS, 0, s>>>(st.start.get(), m, st.keys.get(), st.vals.get());
    CUDA_OK(cudaGetLastError());
    tb = temp_bytes;
    CUDA_OK(cub::DeviceRadixSort::SortPairsDescending(st.temp.get(), tb, st.keys.get(), st.skeys.get(), st.vals.get(),
                                                      st.order.get(), m, 0, 16, s));
}

// A sorted window's m + 1 bucket sums on `s`, into `buckets` (added to them with `accumulate`):
// with the affine rounds, they reduce each bucket to ~2 points first, which the XYZZ sums then add.
inline void sum_window(const gpu_t& gpu, msm_affine::rounds_t* affine, const affine_t* d_points, size_t n, uint32_t m,
                       set_t& st, cudaStream_t s, bucket_h* buckets, bool accumulate)
{
    const affine_t* pts = d_points;
    const uint32_t *vals = st.svals.get(), *bounds = st.start.get();
    if (affine != nullptr && msm_affine::rounds(n, m) > 0) {
        std::tie(pts, bounds) = affine->reduce(gpu, m, d_points, vals, bounds, s, n);
        vals = nullptr;  // the rounds' output is in bucket order
    }
    launch_sums(m, s, pts, vals, bounds, st.order.get(), buckets, accumulate);
}

// A summed window's folds on `s` (latency-bound, few threads: they run beside the next window's
// sums): level 1 over its m + 1 `buckets`, level 2 into `l2` (w2, t2, p2: k2max apart), then
// st's buffers are free (event st.folded) and level 3 reads l2 only, into `l3` (w3, t3, q3, p3:
// k3max apart). Returns level 2's segment count.
inline uint32_t fold_levels(uint32_t m, const shape_t& sh, const bucket_h* buckets, set_t& st, bucket_h* l2, bucket_h* l3,
                            cudaStream_t s)
{
    const uint32_t k1 = segments(m + 1), k2 = segments(k1), k3 = segments(k2), b3 = (k3 + THREADS - 1) / THREADS;
    fold<<<(k1 + THREADS - 1) / THREADS, THREADS, 0, s>>>(buckets, m + 1, true, st.w1.get(), st.t1.get());
    CUDA_OK(cudaGetLastError());
    fold<<<(k2 + THREADS - 1) / THREADS, THREADS, 0, s>>>(st.t1.get(), k1, true, l2, l2 + sh.k2max);
    CUDA_OK(cudaGetLastError());
    fold<<<(k2 + THREADS - 1) / THREADS, THREADS, 0, s>>>(st.w1.get(), k1, false, nullptr, l2 + 2 * sh.k2max);
    CUDA_OK(cudaGetLastError());
    st.folded.record(s);
    fold<<<b3, THREADS, 0, s>>>(l2 + sh.k2max, k2, true, l3, l3 + sh.k3max);
    CUDA_OK(cudaGetLastError());
    fold<<<b3, THREADS, 0, s>>>(l2, k2, false, nullptr, l3 + 2 * sh.k3max);
    CUDA_OK(cudaGetLastError());
    fold<<<b3, THREADS, 0, s>>>(l2 + 2 * sh.k2max, k2, false, nullptr, l3 + 3 * sh.k3max);
    CUDA_OK(cudaGetLastError());
    return k2;
}

// The host's end: each window finished from its level-3 folds (`host`, nwin × 4 × k3max, on
// threads), then the windows combined from the top (Horner).
inline point_t combine(const std::vector<bucket_t>& host, const shape_t& sh, const std::vector<uint32_t>& k2)
{
    std::vector<point_t> win(sh.nwin);
    std::vector<std::thread> pool;
    for (uint32_t w = 0; w < sh.nwin; w++)
        pool.emplace_back([&, w] {
            const bucket_t* l3 = &host[(size_t)w * 4 * sh.k3max];
            win[w] = fold_window(l3, l3 + sh.k3max, l3 + 2 * sh.k3max, l3 + 3 * sh.k3max, segments(k2[w]));
        });
    for (auto& th : pool)
        th.join();
    point_t out;
    out.inf();
    for (uint32_t w = sh.nwin; w-- > 0;) {
        if (w + 1 != sh.nwin)
            for (uint32_t i = 0; i < sh.width[w]; i++)
                out.dbl();
        out.add(win[w]);
    }
    return out;
}

// Σ scalars[i]·points[i] over device-resident points and Montgomery-form scalars, windows of
// about c bits (12..24), the buckets summed as `sums` says. The scalars are only read, but
// with `spent` (the caller reads them no more), which takes them out of Montgomery form in place,
// once, instead of in every window's digits (12 reductions per scalar at 22-bit windows, ~15 ms of
// the device at 2^27 beside the sums). Synchronous.
inline point_t msm(const gpu_t& gpu, const affine_t* d_points, fr_t* d_scalars, size_t n, uint32_t c,
                   timings* t = nullptr, sums_t sums = AFFINE, bool spent = false)
{
    if (n == 0) {
        point_t out;
        out.inf();
        return out;
    }
    if (c < 12 || c > 24 || n >= (1u << 31) || (sums != AFFINE && sums != XYZZ))
        throw sppark_error{CUZK_CUDA_E_INVALID, "msm_big: window " + std::to_string(c) + ", size " + std::to_string(n) +
                                                    " or sums " + std::to_string(sums)};
    // The host's share (buffers, streams, the windows' last folds, the frees) for the report:
    // from the call to the first event, and from the last event to the return (this object is
    // destroyed after every other local).
    using clock = std::chrono::steady_clock;
    struct host_clock {
        timings* t;
        clock::time_point entry = clock::now(), drained{};
        ~host_clock()
        {
            if (t != nullptr && drained != clock::time_point{})
                t->host_after = std::chrono::duration<float, std::milli>(clock::now() - drained).count();
        }
    } host_time{t};
    const shape_t sh(n, c);

    // ΣH is the gated critical path of a partition: its streams go first where another lane's
    // stage H (NTTs, a, b, c) shares the SMs (measured in cuda/NOTES.md: one 32 GiB job 0.96×
    // the latency, throughput 0.98×). Made on the current device: every caller has selected `gpu`.
    priority_stream sort_s, sum_s, fold_s;
    set_t set[2] = {{n, sh, sort_s}, {n, sh, sort_s}};
    const std::unique_ptr<msm_affine::rounds_t> affine = affine_rounds(sums, n, sh.mmax, sum_s);
    // Level-2 results of every window (w2, t2, p2), and level-3 ones (w3, t3, q3, p3).
    pool_buffer<bucket_h> lvl2((size_t)sh.nwin * 3 * sh.k2max, sort_s), lvl3((size_t)sh.nwin * 4 * sh.k3max, sort_s);

    timing_event begin, first_sorted, end;
    const uint32_t nev = t != nullptr ? sh.nwin : 0;  // per-window events only when reporting
    std::vector<timing_event> sort_from(nev), sum_from(nev), sort_to(nev), sum_to(nev);
    begin.record(sort_s);
    if (spent) {
        from_montgomery<<<grid(gpu, n), THREADS, 0, sort_s>>>(d_scalars, n);
        CUDA_OK(cudaGetLastError());
    }
    if (t != nullptr)
        t->host_before = std::chrono::duration<float, std::milli>(clock::now() - host_time.entry).count();
    CUDA_OK(cudaStreamWaitEvent(sum_s, begin, 0));
    CUDA_OK(cudaStreamWaitEvent(fold_s, begin, 0));
    std::vector<uint32_t> k2(sh.nwin);
    for (uint32_t w = 0, lo = 0; w < sh.nwin; lo += sh.width[w], w++) {
        set_t& st = set[w & 1];
        const uint32_t cw = sh.width[w], m = 1u << (cw - 1);
        if (w >= 2) {  // window w − 2 is done with this set: its sums (sort buffers), folds (buckets)
            CUDA_OK(cudaStreamWaitEvent(sort_s, st.summed, 0));
            CUDA_OK(cudaStreamWaitEvent(sum_s, st.folded, 0));
        }
        if (nev)
            sort_from[w].record(sort_s);
        sort_window(gpu, d_scalars, spent, n, lo, cw, sh.temp_bytes, st, sort_s);
        st.sorted.record(sort_s);
        if (nev)
            sort_to[w].record(sort_s);
        if (w == 0)
            first_sorted.record(sort_s);

        CUDA_OK(cudaStreamWaitEvent(sum_s, st.sorted, 0));
        if (nev)
            sum_from[w].record(sum_s);
        sum_window(gpu, affine.get(), d_points, n, m, st, sum_s, st.buckets.get(), false);
        st.summed.record(sum_s);
        if (nev)
            sum_to[w].record(sum_s);

        CUDA_OK(cudaStreamWaitEvent(fold_s, st.summed, 0));
        k2[w] = fold_levels(m, sh, st.buckets.get(), st, lvl2.get() + (size_t)w * 3 * sh.k2max,
                            lvl3.get() + (size_t)w * 4 * sh.k3max, fold_s);
    }
    std::vector<bucket_t> host((size_t)sh.nwin * 4 * sh.k3max);
    CUDA_OK(cudaMemcpyAsync(host.data(), lvl3.get(), host.size() * sizeof(bucket_h), cudaMemcpyDeviceToHost, fold_s));
    end.record(fold_s);
    CUDA_OK(cudaStreamSynchronize(fold_s));
    CUDA_OK(cudaStreamSynchronize(sum_s));
    CUDA_OK(cudaStreamSynchronize(sort_s));
    host_time.drained = clock::now();
    if (t != nullptr) {
        t->total = elapsed_ms(begin, end);
        t->first_sort = elapsed_ms(begin, first_sorted);
        for (uint32_t w = 0; w < sh.nwin; w++) {
            t->sorts += elapsed_ms(sort_from[w], sort_to[w]);
            t->sums += elapsed_ms(sum_from[w], sum_to[w]);
        }
    }
    return combine(host, sh, k2);
}

// A tiled MSM's window bits: ~8 bases of a tile per bucket (lg tile − 3), 12 to 20 bits (at 2^23
// bases a tile, 13 windows' buckets take 1.3 GB). src/prover/vram.rs (`tiled_msm_bytes`) sizes
// the tiled MSM's buffers from the same rule.
inline uint32_t tiled_window(size_t tile)
{
    uint32_t lg = 0;
    while (((size_t)2 << lg) <= tile)
        lg++;
    return std::min<uint32_t>(20, std::max<uint32_t>(12, lg > 3 ? lg - 3 : 0));
}

// Σ scalars[i]·points[i] over tiles of at most `tile` bases, for an MSM whose bases are not all
// on the device: `msm`'s windows, sorts and bucket sums tile by tile, every window's buckets kept
// across the tiles (the first tile writes them, the others add to them) and folded once at the
// end, so a tile costs its digits, sorts and additions and no folds. The bases are read in place
// from the device (`d_points`), or copied from page-locked host memory (`h_points`) into one of
// two slots on a copy stream while the tile before is summed. The n scalars (device,
// Montgomery form) are spent: taken out of Montgomery form in place. Synchronous. `meter`
// counts and times the host tiles' copies.
inline point_t msm_tiled(const gpu_t& gpu, const affine_t* d_points, const affine_t* h_points, fr_t* d_scalars,
                         size_t n, size_t tile, pcie_meter& meter)
{
    point_t out;
    out.inf();
    if (n == 0)
        return out;
    if (tile == 0 || tile >= (1u << 31) || (d_points == nullptr && h_points == nullptr))
        throw sppark_error{CUZK_CUDA_E_INVALID, "msm_tiled: tile " + std::to_string(tile) + " or no bases"};
    tile = std::min(tile, n);
    const shape_t sh(tile, tiled_window(tile));
    const bool upload = d_points == nullptr;
    priority_stream sort_s, sum_s, fold_s, copy_s;
    set_t set[2] = {{tile, sh, sort_s, false}, {tile, sh, sort_s, false}};
    const std::unique_ptr<msm_affine::rounds_t> affine = affine_rounds(AFFINE, tile, sh.mmax, sum_s);
    const size_t row = (size_t)sh.mmax + 1;  // one window's buckets
    pool_buffer<bucket_h> buckets(sh.nwin * row, sort_s);
    pool_buffer<bucket_h> lvl2((size_t)sh.nwin * 3 * sh.k2max, sort_s), lvl3((size_t)sh.nwin * 4 * sh.k3max, sort_s);
    pool_buffer<affine_t> slots(upload ? 2 * tile : 0, sort_s);

    timing_event begin, uploaded[2], summed[2];
    from_montgomery<<<grid(gpu, n), THREADS, 0, sort_s>>>(d_scalars, n);
    CUDA_OK(cudaGetLastError());
    begin.record(sort_s);  // the buffers are allocated, the scalars converted
    for (cudaStream_t s : {(cudaStream_t)sum_s, (cudaStream_t)fold_s, (cudaStream_t)copy_s})
        CUDA_OK(cudaStreamWaitEvent(s, begin, 0));
    const size_t ntiles = (n + tile - 1) / tile;
    // Tile k into slot k & 1, once tile k − 2's sums (which read that slot) are done.
    auto copy_tile = [&](size_t k) {
        const size_t off = k * tile, nt = std::min(tile, n - off);
        if (k >= 2)
            CUDA_OK(cudaStreamWaitEvent(copy_s, summed[k & 1], 0));
        meter.copy(slots.get() + (k & 1) * tile, h_points + off, nt * sizeof(affine_t), cudaMemcpyHostToDevice, copy_s);
        uploaded[k & 1].record(copy_s);
    };
    if (upload)
        copy_tile(0);
    uint32_t turn = 0;  // windows sorted so far: they alternate between the two sets
    for (size_t k = 0; k < ntiles; k++) {
        const size_t off = k * tile, nt = std::min(tile, n - off);
        if (upload && k + 1 < ntiles)
            copy_tile(k + 1);
        const affine_t* pts = upload ? slots.get() + (k & 1) * tile : d_points + off;
        if (upload)
            CUDA_OK(cudaStreamWaitEvent(sum_s, uploaded[k & 1], 0));
        for (uint32_t w = 0, lo = 0; w < sh.nwin; lo += sh.width[w], w++, turn++) {
            set_t& st = set[turn & 1];
            const uint32_t cw = sh.width[w];
            if (turn >= 2)  // the window two turns back is done with this set's sort buffers
                CUDA_OK(cudaStreamWaitEvent(sort_s, st.summed, 0));
            sort_window(gpu, d_scalars + off, true, nt, lo, cw, sh.temp_bytes, st, sort_s);
            st.sorted.record(sort_s);
            CUDA_OK(cudaStreamWaitEvent(sum_s, st.sorted, 0));
            sum_window(gpu, affine.get(), pts, nt, 1u << (cw - 1), st, sum_s, buckets.get() + w * row, k > 0);
            st.summed.record(sum_s);
        }
        summed[k & 1].record(sum_s);
    }
    // The folds, once per window, over its kept buckets (one stream: one set's fold buffers do).
    CUDA_OK(cudaStreamWaitEvent(fold_s, summed[(ntiles - 1) & 1], 0));
    std::vector<uint32_t> k2(sh.nwin);
    for (uint32_t w = 0; w < sh.nwin; w++)
        k2[w] = fold_levels(1u << (sh.width[w] - 1), sh, buckets.get() + w * row, set[0],
                            lvl2.get() + (size_t)w * 3 * sh.k2max, lvl3.get() + (size_t)w * 4 * sh.k3max, fold_s);
    std::vector<bucket_t> host((size_t)sh.nwin * 4 * sh.k3max);
    CUDA_OK(cudaMemcpyAsync(host.data(), lvl3.get(), host.size() * sizeof(bucket_h), cudaMemcpyDeviceToHost, fold_s));
    for (cudaStream_t s : {(cudaStream_t)fold_s, (cudaStream_t)sum_s, (cudaStream_t)sort_s, (cudaStream_t)copy_s})
        CUDA_OK(cudaStreamSynchronize(s));
    return combine(host, sh, k2);
}

} // namespace msm_big

#endif
