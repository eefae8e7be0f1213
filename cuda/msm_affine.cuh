// Bucket sums of the big-MSM by affine additions that share inversions (msm_big's AFFINE
// variant, measured against its XYZZ sums in cuda/NOTES.md). An XYZZ mixed addition costs 10 Fp
// multiplications; an affine one 3 plus 3 for its share of a batched inversion (Montgomery's
// trick) plus the inversion over the batch — sppark's `reciprocal` (safegcd on pairs of lanes,
// ~27 multiplications' time by the K = 16 → 32 step), so batches of K = 32–128 additions per
// thread pay (K = 64 the default: 0.87x the XYZZ sums' time at 2^27; 8 was slower, 16 even).
// Per addition that is ~6.4 multiplications against 10, yet the time fell only 13 %: the rounds
// move ~50 GB per window through memory (round 1 reads the bases by index twice, every round
// writes its output and K prefix products per thread), where the XYZZ sums read each base once.
//
// The sorted window is reduced in rounds: round r adds each bucket's points pairwise (a bucket of
// L points becomes ⌈L/2⌉), every thread taking K output slots 32 apart (a warp's 32·K consecutive
// slots interleaved over its lanes, so each warp-wide load and store touches consecutive slots:
// 0.988x the time of K consecutive slots per thread at 2^26 and 2^27, BENCHMARKS.md 2026-12-04
// 16:18) and one inversion for them; a per-round map gives each slot its first input point. The
// first round reads the bases by index (negated by the digit's sign); later rounds read the
// previous round's contiguous output, written with x and y in separate arrays so that the forward
// pass, which needs only x, reads whole sectors (0.98x the time of affine_t outputs at 2^26 and
// 2^27; the last round writes affine_t for the bucket sums). After the rounds each bucket holds ~2 points, which
// msm_big's XYZZ bucket sums add (the buckets' order by size still applies: sizes only shrink by
// rounding halves).
//
// Nsight Compute on the H200 (2^26, round 1: 11.7 ms; cuda/NOTES.md): 128 registers, so 4 blocks
// (16 warps) per SM; issue slots 28 % busy, FMA pipe 31 %, 41 % of the stall cycles on L1TEX data.
// Tried and slower (d27dbf4, msm-bench at 2^27 against 626 ms): an L2 prefetch of the next slot's
// points (757 ms: the prefetch address needs the slot's index, itself a load) and registers capped
// at 96 for 5 blocks per SM (692 ms: ~200 bytes spilled). Also slower (2026-12-04, 650 vs 620 ms
// at 2^27, 349 vs 335 at 2^26): the backward pass copying its next slot's points and prefix product
// into shared memory by cp.async while the current slot is computed (30 KB of shared memory per
// block, which the L1 cache gives up; the sorted index the copy's address needs is still a load the
// thread waits for). No faster either (2026-12-04, 2^27 624–628 vs 621–623 ms, 2^26 the same): the
// first round's sorted entries loaded an iteration ahead of their points, in the backward pass or in
// both passes. Occupancy both ways (2026-12-04, session 32; 2^27 against 609 ms): the backward pass
// loading its next slot into registers at 3 blocks per SM (168 registers) took 641 ms (points only,
// no spill) and 656 ms (points and prefix product, ~100 bytes spilled); 32-thread blocks capped by
// __maxnreg__ for more warps took 650 ms (120 registers, 17 warps), 661 (112) and 716 (104), the
// spills growing. Four 128-thread blocks of 128 registers (16 warps) is where the rounds run fastest.
#ifndef CUZK_CUDA_MSM_AFFINE_CUH
#define CUZK_CUDA_MSM_AFFINE_CUH

#include <cub/device/device_scan.cuh>

#include "raii.cuh"
#include "types.cuh"

namespace msm_affine {

constexpr uint32_t BLOCK = 128;

struct pt {
    fp_t x, y;
};

// Point q of a round's input: the bases by sorted entry (index | sign << 31) in the first round,
// the previous round's output after it.
template<bool INDEXED>
__device__ __forceinline__ uint32_t slot_of(const uint32_t* vals, uint32_t q)
{
    return INDEXED ? vals[q] & 0x7fffffff : q;
}

// The first round reads the bases (affine_t: x, y interleaved) by sorted entry; later rounds
// read the previous round's output, x and y in separate arrays (the forward pass reads only x).
template<bool INDEXED>
__device__ __forceinline__ fp_t x_of(const fp_t* xs, const uint32_t* vals, uint32_t q)
{
    return INDEXED ? xs[2 * (size_t)slot_of<INDEXED>(vals, q)] : xs[q];
}

template<bool INDEXED>
__device__ __forceinline__ pt pt_of(const fp_t* xs, const fp_t* ys, const uint32_t* vals, uint32_t q)
{
    if (!INDEXED)
        return pt{xs[q], ys[q]};
    const size_t i = slot_of<INDEXED>(vals, q);
    pt p{xs[2 * i], xs[2 * i + 1]};
    p.y.cneg(vals[q] >> 31);  // (zero stays zero: infinity is (0, 0))
    return p;
}

__device__ __forceinline__ bool same(const fp_t& a, const fp_t& b)
{
    return (a - b).is_zero();
}

// How p1 + p2 is made (dx = x2 − x1): by λ over dx (ADD) or over 2·y1 (DOUBLE), or without a
// division.
enum kind_t : uint32_t { ADD, DOUBLE, TAKE1, TAKE2, INF };

__device__ __forceinline__ kind_t kind_of(const pt& p1, const pt& p2, const fp_t& dx)
{
    if (p1.x.is_zero() && p1.y.is_zero())
        return TAKE2;
    if (p2.x.is_zero() && p2.y.is_zero())
        return TAKE1;
    if (!dx.is_zero())
        return ADD;
    return same(p1.y, p2.y) && !p1.y.is_zero() ? DOUBLE : INF;
}

__device__ __forceinline__ fp_t denominator(kind_t k, const pt& p1, const fp_t& dx)
{
    if (k == ADD)
        return dx;
    return k == DOUBLE ? p1.y + p1.y : fp_t(fp_t::one());
}

// A round's map from output slot j to its first input point q (bit 31 set when q is alone in its
// bucket's last slot): slot j of bucket b (out_start[b] <= j < out_start[b + 1]) adds input points
// q = in_start[b] + 2·(j − out_start[b]) and q + 1. One thread per bucket (bucket 0, digit 0, has no
// slots).
constexpr uint32_t LONE = 1u << 31;

__global__ void slot_map(const uint32_t* __restrict__ in_start, const uint32_t* __restrict__ out_start, uint32_t m,
                         uint32_t* __restrict__ first)
{
    for (uint32_t b = 1 + blockIdx.x * blockDim.x + threadIdx.x; b <= m; b += gridDim.x * blockDim.x) {
        const uint32_t o_lo = out_start[b], o_hi = out_start[b + 1], i_lo = in_start[b], i_hi = in_start[b + 1];
        for (uint32_t j = o_lo; j < o_hi; j++) {
            const uint32_t q = i_lo + 2 * (j - o_lo);
            first[j] = q | (q + 1 < i_hi ? 0 : LONE);
        }
    }
}

// Slot j's first input point and its pair of x coordinates; false when the slot holds a lone point.
template<bool INDEXED>
__device__ __forceinline__ bool load_pair_x(const fp_t* xs, const uint32_t* vals, const uint32_t* first, uint32_t j,
                                            uint32_t& q, fp_t& x1, fp_t& x2)
{
    const uint32_t e = first[j];
    q = e & ~LONE;
    if (e & LONE)
        return false;
    x1 = x_of<INDEXED>(xs, vals, q);
    x2 = x_of<INDEXED>(xs, vals, q + 1);
    return true;
}

// One round over `total` = out_start[m + 1] output slots (the map above). A warp takes 32·K
// consecutive slots, lane l slots l, l + 32, ... of them, so each load and store of a warp touches
// consecutive slots (whose points, after the first round, are consecutive in memory); each thread
// multiplies the denominators of its K slots into prefix products kept at scratch[i·T + t] and
// shares one inversion among them. Every thread of the grid reaches the inversion (pairs of lanes
// share it), so none returns early. The forward pass loads slot i + 1's x coordinates while slot
// i's are multiplied (random reads from HBM in the first round). Output slot j goes to out[j] and
// out[out_y + j] (x and y apart, for a next round), or to out[2j], out[2j + 1] (affine_t, for the
// bucket sums after the last round) when out_y is 0.
template<bool INDEXED, uint32_t K>
__global__ void __launch_bounds__(BLOCK)
    pair_round(const fp_t* __restrict__ xs, const fp_t* __restrict__ ys, const uint32_t* __restrict__ vals,
               const uint32_t* __restrict__ first, const uint32_t* __restrict__ out_start, uint32_t m,
               fp_t* __restrict__ out, size_t out_y, fp_t* __restrict__ scratch)
{
    const uint32_t T = gridDim.x * BLOCK, t = blockIdx.x * BLOCK + threadIdx.x, lane = t % 32;
    const uint32_t total = out_start[m + 1], j0 = (t - lane) * K + lane;  // slot i: j0 + 32·i
    fp_t acc = fp_t::one();
    uint32_t qn = 0;
    fp_t x1n, x2n;
    bool pair_n = j0 < total && load_pair_x<INDEXED>(xs, vals, first, j0, qn, x1n, x2n);
#pragma unroll 1
    for (uint32_t i = 0; i < K; i++) {
        const uint32_t j = j0 + 32 * i, q = qn;
        const bool pair = pair_n;
        const fp_t x1 = x1n, x2 = x2n;
        pair_n = i + 1 < K && j + 32 < total && load_pair_x<INDEXED>(xs, vals, first, j + 32, qn, x1n, x2n);
        fp_t d = fp_t::one();
        if (j < total && pair) {
            d = x2 - x1;
            if (d.is_zero() || x1.is_zero() || x2.is_zero()) {  // rare: look at y too
                const pt p1 = pt_of<INDEXED>(xs, ys, vals, q), p2 = pt_of<INDEXED>(xs, ys, vals, q + 1);
                d = denominator(kind_of(p1, p2, d), p1, d);
            }
        }
        scratch[(size_t)i * T + t] = acc;
        acc *= d;
    }
    __syncwarp();
    fp_t inv = acc.reciprocal();
#pragma unroll 1
    for (uint32_t i = K; i-- > 0;) {
        const uint32_t j = j0 + 32 * i;
        if (j >= total)
            continue;
        const uint32_t e = first[j], q = e & ~LONE;
        pt r = pt_of<INDEXED>(xs, ys, vals, q);
        if (!(e & LONE)) {
            const pt p2 = pt_of<INDEXED>(xs, ys, vals, q + 1);
            const fp_t dx = p2.x - r.x;
            const kind_t k = kind_of(r, p2, dx);
            if (k == ADD || k == DOUBLE) {
                const fp_t d = denominator(k, r, dx);
                const fp_t inv_d = inv * scratch[(size_t)i * T + t];
                inv *= d;
                fp_t l = k == ADD ? p2.y - r.y : r.x ^ 2;
                if (k == DOUBLE)
                    l = l + l + l;
                l *= inv_d;
                const fp_t x3 = (l ^ 2) - r.x - p2.x;
                r.y = l * (r.x - x3) - r.y;
                r.x = x3;
            } else if (k == TAKE2) {
                r = p2;
            } else if (k == INF) {
                r.x.zero();
                r.y.zero();
            }
        }
        if (out_y != 0) {
            out[j] = r.x;
            out[out_y + j] = r.y;
        } else {
            out[2 * (size_t)j] = r.x;
            out[2 * (size_t)j + 1] = r.y;
        }
    }
}

// len[b] = ⌈(in_start[b + 1] − in_start[b]) / 2⌉ for buckets b in 1..=m, 0 for b = 0 and m + 1
// (exclusively summed, the next round's bounds).
__global__ void halve(const uint32_t* in_start, uint32_t m, uint32_t* len)
{
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b <= m + 1; b += gridDim.x * blockDim.x)
        len[b] = (b == 0 || b > m) ? 0 : (in_start[b + 1] - in_start[b] + 1) / 2;
}

// How many pairwise rounds for n entries in m buckets: until ~2 points per bucket are left.
inline uint32_t rounds(size_t n, uint32_t m)
{
    uint32_t r = 0;
    while ((n >> (r + 1)) >= 2 * (size_t)m)
        r++;
    return r;
}

// Upper bound of a round's output slots given its input bound: ⌈L/2⌉ <= L/2 + 1/2 per bucket.
inline size_t next_bound(size_t in, uint32_t m)
{
    return in / 2 + m / 2 + 1;
}

// The device buffers of the rounds for windows of up to mmax buckets over n entries, K
// additions per thread; made once per MSM on `s` (the sums' stream), used by one window at a time.
struct rounds_t {
    size_t n;
    uint32_t m_max, K;
    size_t temp_bytes;
    pool_buffer<fp_t> odd, even, scratch;  // outputs of odd / even rounds; prefix products
    pool_buffer<uint32_t> len, bounds[2], first;  // first: the round's slot map
    pool_buffer<char> temp;

    uint32_t threads(size_t slots) const { return (uint32_t)((slots + K - 1) / K + BLOCK - 1) / BLOCK * BLOCK; }

    rounds_t(size_t n_, uint32_t mmax, uint32_t K_, cudaStream_t s)
        : n(n_), m_max(mmax), K(K_), temp_bytes(scan_bytes(mmax)), odd(2 * next_bound(n_, mmax), s),
          even(2 * next_bound(next_bound(n_, mmax), mmax), s), scratch((size_t)K_ * threads(next_bound(n_, mmax)), s),
          len(mmax + 2, s), bounds{{mmax + 2, s}, {mmax + 2, s}}, first(next_bound(n_, mmax), s),
          temp(temp_bytes, s)
    {}

    // pair_round for this K (a template argument: the kernel's loops stay in 128 registers).
    template<bool INDEXED>
    void launch_in(uint32_t blocks, cudaStream_t s, const fp_t* xs, const fp_t* ys, const uint32_t* vals,
                   const uint32_t* out_start, uint32_t m, fp_t* out, size_t out_y)
    {
        fp_t* sc = scratch.get();
        const uint32_t* f = first.get();
        if (K == 32)
            pair_round<INDEXED, 32><<<blocks, BLOCK, 0, s>>>(xs, ys, vals, f, out_start, m, out, out_y, sc);
        else if (K == 128)
            pair_round<INDEXED, 128><<<blocks, BLOCK, 0, s>>>(xs, ys, vals, f, out_start, m, out, out_y, sc);
        else
            pair_round<INDEXED, 64><<<blocks, BLOCK, 0, s>>>(xs, ys, vals, f, out_start, m, out, out_y, sc);
        CUDA_OK(cudaGetLastError());
    }

    static size_t scan_bytes(uint32_t mmax)
    {
        size_t b = 0;
        CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, b, (const uint32_t*)nullptr, (uint32_t*)nullptr, mmax + 2));
        return b;
    }

    // One window's rounds, where rounds(count, m) > 0: `vals` sorted, bucket b's entries at
    // start[b] .. start[b + 1] (b in 0..=m), `count` entries in all (n when 0, at most n), bases
    // `points`. Returns what is left to sum: the last round's points, contiguous in bucket order,
    // and its bucket bounds.
    std::pair<const affine_t*, const uint32_t*> reduce(const gpu_t& gpu, uint32_t m, const affine_t* points,
                                                        const uint32_t* vals, const uint32_t* start, cudaStream_t s,
                                                        size_t count = 0)
    {
        const fp_t *xs = reinterpret_cast<const fp_t*>(points), *ys = nullptr;
        const uint32_t* in_start = start;
        size_t bound = count != 0 ? count : n;
        // Round k writes to odd (k even) or even, x and y apart ([0, cap) and [cap, 2·cap)), but
        // the last round, which writes affine_t for the bucket sums.
        const size_t cap[2] = {next_bound(n, m_max), next_bound(next_bound(n, m_max), m_max)};
        for (uint32_t k = 0, r = rounds(bound, m); k < r; k++) {
            uint32_t* out_start = bounds[k & 1].get();
            halve<<<gpu.sm_count() * 4, 256, 0, s>>>(in_start, m, len.get());
            CUDA_OK(cudaGetLastError());
            size_t tb = temp_bytes;
            CUDA_OK(cub::DeviceScan::ExclusiveSum(temp.get(), tb, len.get(), out_start, m + 2, s));
            slot_map<<<(m + 255) / 256, 256, 0, s>>>(in_start, out_start, m, first.get());
            CUDA_OK(cudaGetLastError());
            bound = next_bound(bound, m);
            fp_t* out = (k & 1) == 0 ? odd.get() : even.get();
            const size_t out_y = k + 1 < r ? cap[k & 1] : 0;
            const uint32_t blocks = threads(bound) / BLOCK;
            if (k == 0)
                launch_in<true>(blocks, s, xs, ys, vals, out_start, m, out, out_y);
            else
                launch_in<false>(blocks, s, xs, ys, vals, out_start, m, out, out_y);
            xs = out, ys = out + out_y;
            in_start = out_start;
        }
        return {reinterpret_cast<const affine_t*>(xs), in_start};
    }
};

} // namespace msm_affine

#endif
