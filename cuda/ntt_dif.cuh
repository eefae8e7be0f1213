// A decimation-in-frequency NTT, natural order in → bit-reversed order out (sppark's "NR" form,
// forward or inverse), written for 256-bit fields on Hopper: eight elements per thread, so that
// three butterfly levels run in registers between two exchanges through shared memory, and each
// level gives a thread four independent multiplications. sppark's kernels hold two elements per
// thread and exchange after every level (a shuffle or two barriers), one multiplication at a time;
// Nsight Compute put their passes at 34–45 % of issue slots (cuda/NOTES.md).
//
// The transform is the same exact computation as sppark's (the DFT in bit-reversed order), as a
// four-step decomposition: 2^lg = 2^s0 segments of M = 2^(lg − s0) elements at the start of a pass
// of IT levels; a segment's element i = m·2^nlo + lo (m the top IT bits) is one of 2^nlo groups
// (one per lo) of 2^IT elements, transformed by radix-2 DIF levels with twiddles ω_{2^(q+1)}^(m mod
// 2^q) at level bit q; then, unless the pass is the last, element m of group lo is twisted by
// ω_M^(lo·bitrev_IT(m)), which leaves each of the 2^IT sub-segments of 2^nlo elements (fixed m) a
// DFT of its own for the next pass. The output of the whole is bitrev_lg order: the bits a pass
// reverses are the top ones of the index. An inverse transform uses the inverse roots and scales
// by 1/2^lg in its last pass. The roots come from sppark's tables for the device: partial_twiddles
// [0][x] = ω^x and [1][y] = ω^(y·2^14), ω of order 2^28.
#ifndef CUZK_CUDA_NTT_DIF_CUH
#define CUZK_CUDA_NTT_DIF_CUH

#include <vector>

#include "types.cuh"

namespace cuzk {
namespace dif {

constexpr uint32_t THREADS = 128;
constexpr uint32_t MIN_LG = 18, MAX_LG = 27;  // passes of 6..9 levels, ω of order 2^28

static_assert(WINDOW_SIZE == (1u << 14) && WINDOW_NUM == 2, "sppark's partial twiddle tables: two of 2^14 roots");

// Where element m of a group sits in its shared-memory exchange: one slot of padding after every 8,
// so that threads reading or writing elements 8 apart meet different banks.
__device__ __forceinline__ uint32_t slot(uint32_t m)
{
    return m + (m >> 3);
}

// The group element whose three bits at bit p are e and whose other bits are the thread's t (t's
// bits below p stay below it).
__device__ __forceinline__ uint32_t element(uint32_t t, uint32_t e, uint32_t p)
{
    return (t & ((1u << p) - 1)) | (e << p) | ((t >> p) << (p + 3));
}

// One pass: levels s0 .. s0 + IT − 1 of a 2^lg NTT of x, in place. 2^(IT − 3) threads per group,
// THREADS / 2^(IT − 3) groups per block. `last`: no twist; with `scale`, times inv_n.
template<uint32_t IT>
__global__ void __launch_bounds__(THREADS, 4)
    pass(fr_t* __restrict__ x, uint32_t lg, uint32_t s0, const fr_t (*__restrict__ roots)[WINDOW_SIZE], bool last,
         bool scale, fr_t inv_n)
{
    static_assert(IT >= 6 && IT <= 9, "passes of 6..9 levels");
    constexpr uint32_t TPG = 1u << (IT - 3), GPB = THREADS / TPG, SLOTS = (1u << IT) + (1u << (IT - 3));
    constexpr uint32_t CHUNKS = (IT + 2) / 3;
    extern __shared__ __align__(16) unsigned char dif_xchg[];
    fr_t* sm = reinterpret_cast<fr_t*>(dif_xchg) + (threadIdx.x / TPG) * SLOTS;
    const uint32_t tg = threadIdx.x % TPG, nlo = lg - s0 - IT;
    const size_t g = (size_t)blockIdx.x * GPB + threadIdx.x / TPG;
    const size_t lo = g & (((size_t)1 << nlo) - 1), base = ((g >> nlo) << (lg - s0)) | lo;

    fr_t r[8];
    uint32_t p = IT - 3;  // the register bits: the top three of m first
#pragma unroll
    for (uint32_t e = 0; e < 8; e++)
        r[e] = x[base + ((size_t)element(tg, e, p) << nlo)];
#pragma unroll
    for (uint32_t c = 0; c < CHUNKS; c++) {
        const uint32_t hb = IT - 1 - 3 * c, np = hb >= 2 ? hb - 2 : 0;  // this chunk's stage bits: hb down
        if (np != p) {  // exchange: the thread's registers hold bits np .. np + 2 from here
            if (c > 1)
                __syncthreads();  // the last exchange's reads are done
#pragma unroll
            for (uint32_t e = 0; e < 8; e++)
                sm[slot(element(tg, e, p))] = r[e];
            __syncthreads();
            p = np;
#pragma unroll
            for (uint32_t e = 0; e < 8; e++)
                r[e] = sm[slot(element(tg, e, p))];
        }
#pragma unroll
        for (uint32_t q = hb + 1; q-- > (hb >= 2 ? hb - 2 : 0);) {
            const uint32_t j = q - p;
#pragma unroll
            for (uint32_t e = 0; e < 8; e++) {
                if (e & (1u << j))
                    continue;
                const uint32_t e1 = e | (1u << j), m = element(tg, e, p);
                const fr_t w = roots[1][(m & ((1u << q) - 1)) << (13 - q)];  // ω_{2^(q+1)}^(m mod 2^q)
                const fr_t u = r[e], v = r[e1];
                r[e] = u + v;
                r[e1] = (u - v) * w;
            }
        }
    }
#pragma unroll
    for (uint32_t e = 0; e < 8; e++) {
        const uint32_t m = element(tg, e, p);
        if (!last) {  // ω_M^(lo·bitrev(m)) = ω^(that << (28 − log M))
            const uint32_t f = (uint32_t)(lo * (__brev(m) >> (32 - IT))) << (28 - (lg - s0));
            r[e] *= roots[0][f & (WINDOW_SIZE - 1)];
            if (f >> 14)
                r[e] *= roots[1][f >> 14];
        } else if (scale) {
            r[e] *= inv_n;
        }
        x[base + ((size_t)m << nlo)] = r[e];
    }
}

// The passes' sizes for 2^lg: as even as possible, 6..9 levels each, the larger first.
inline std::vector<uint32_t> passes(uint32_t lg)
{
    const uint32_t n = (lg + 8) / 9;
    std::vector<uint32_t> it(n, lg / n);
    for (uint32_t i = 0; i < lg % n; i++)
        it[i]++;
    return it;
}

template<uint32_t IT>
inline void launch(stream_t& s, fr_t* x, uint32_t lg, uint32_t s0, const fr_t (*roots)[WINDOW_SIZE], bool last,
                   bool scale, const fr_t& inv_n)
{
    constexpr uint32_t GPB = THREADS / (1u << (IT - 3)), SLOTS = (1u << IT) + (1u << (IT - 3));
    const size_t blocks = ((size_t)1 << (lg - IT)) / GPB;
    pass<IT><<<(uint32_t)blocks, THREADS, GPB * SLOTS * sizeof(fr_t), s>>>(x, lg, s0, roots, last, scale, inv_n);
    CUDA_OK(cudaGetLastError());
}

// The NTT of x (2^lg elements on `s`, MIN_LG <= lg <= MAX_LG), natural order in, bit-reversed out,
// in sppark's conventions (the inverse scaled by 1/2^lg).
inline void nr(stream_t& s, fr_t* x, uint32_t lg, bool intt)
{
    const fr_t(*roots)[WINDOW_SIZE] = NTTParameters::all(intt)[s].partial_twiddles;
    const fr_t inv_n = domain_size_inverse[lg];
    uint32_t s0 = 0;
    for (uint32_t it : passes(lg)) {
        const bool last = s0 + it == lg, scale = last && intt;
        switch (it) {
        case 9: launch<9>(s, x, lg, s0, roots, last, scale, inv_n); break;
        case 8: launch<8>(s, x, lg, s0, roots, last, scale, inv_n); break;
        case 7: launch<7>(s, x, lg, s0, roots, last, scale, inv_n); break;
        default: launch<6>(s, x, lg, s0, roots, last, scale, inv_n); break;
        }
        s0 += it;
    }
}

} // namespace dif
} // namespace cuzk

#endif
