// A Montgomery product over BLS12-381's base field in FP64 arithmetic only: 8 signed limbs of 48
// bits held in doubles, every limb product split exactly into a multiple of 2^48 and a remainder
// of at most 2^47 by two round-to-nearest FMAs, column sums kept exact below 2^53, R = 2^384 as in
// sppark's fp_t. The device form of scripts/sim-fp64-mont.c (which checks it against an integer
// Montgomery product and counts 732 FP64 instructions per product against sppark's 607 IMADs).
// Hopper issues FP64 FMAs and IMADs at the same rate from separate pipes, so a product on each at
// once could bound the multiplication throughput at ~1.8x; `cuzk-gpu ceiling` measures that here
// before any kernel of the prover uses it.
#ifndef CUZK_CUDA_FP64_CUH
#define CUZK_CUDA_FP64_CUH

#include "types.cuh"

namespace fp64 {

// Σ l[k]·2^(48k); signed limbs, |l[k]| <= 2^48 for inputs, the value anywhere in (−p, 2p).
struct fe {
    double l[8];
};

// p in 48-bit limbs, and −p^-1 mod 2^48 as a signed limb (printed by scripts/sim-fp64-mont.c).
__device__ __constant__ const double P48[8] = {281474976688811.0, 194974335351294.0, 270634993844222.0,
                                               113459389855408.0, 83034393350847.0,  73992301405303.0,
                                               253550359455670.0, 28591897852287.0};
constexpr double PINV48 = -12885098499.0;
constexpr double C99 = 0x3p99;   // a·b + C99 lies in [2^100, 2^101), whose ulp is 2^48
constexpr double C51 = 0x3p51;   // x + C51 rounds x to an integer
constexpr double T48 = 0x1p48, TM48 = 0x1p-48;

#ifdef __CUDA_ARCH__
// a·b = hi + lo exactly, hi a multiple of 2^48, |lo| <= 2^47 (|a·b| < 2^99). The caller adds
// hi·2^-48 to the next column by one FMA (exact: a power-of-two scaling).
__device__ __forceinline__ void split(double a, double b, double& hi, double& lo)
{
    hi = __dadd_rn(__fma_rn(a, b, C99), -C99);
    lo = __fma_rn(a, b, -hi);
}

// x = q·2^48 + r, |r| <= 2^47: returns r and adds q to next.
__device__ __forceinline__ double carry(double x, double& next)
{
    const double q = __dadd_rn(__fma_rn(x, TM48, C51), -C51);
    next = __dadd_rn(next, q);
    return __fma_rn(q, -T48, x);
}

__device__ __forceinline__ fe mul(const fe& a, const fe& b)
{
    double t[17];
#pragma unroll
    for (int k = 0; k < 17; k++)
        t[k] = 0.0;
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            double hi, lo;
            split(a.l[i], b.l[j], hi, lo);
            t[i + j] = __dadd_rn(t[i + j], lo);
            t[i + j + 1] = __fma_rn(hi, TM48, t[i + j + 1]);
        }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        t[i] = carry(t[i], t[i + 1]);
        double mhi, m;  // m = t[i]·(−p^-1) mod 2^48, signed
        split(t[i], PINV48, mhi, m);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            double hi, lo;
            split(m, P48[j], hi, lo);
            t[i + j] = __dadd_rn(t[i + j], lo);
            t[i + j + 1] = __fma_rn(hi, TM48, t[i + j + 1]);
        }
        t[i + 1] = __fma_rn(t[i], TM48, t[i + 1]);  // t[i] is a multiple of 2^48 now
    }
#pragma unroll
    for (int k = 8; k < 15; k++)
        t[k] = carry(t[k], t[k + 1]);
    fe r;
#pragma unroll
    for (int k = 0; k < 8; k++)
        r.l[k] = t[8 + k];
    return r;
}

// fp_t (12 × 32-bit limbs, Montgomery form) to 48-bit limbs, the same residue.
__device__ __forceinline__ fe from_fp(const fp_t& x)
{
    fe r;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const int bit = 48 * k, w = bit / 32, o = bit % 32;  // o is 0 or 16
        uint64_t v = (uint64_t)x[w] | ((uint64_t)x[w + 1] << 32);
        if (o != 0)
            v = (v >> o) | ((w + 2 < 12 ? (uint64_t)x[w + 2] : 0) << (64 - o));
        r.l[k] = (double)(v & ((1ull << 48) - 1));
    }
    return r;
}

// Whether x and y are the same residue: their 48-bit-limb difference is 0, ±p or ±2p (both in
// (−p, 2p)), told by exact integer arithmetic over the limbs.
__device__ __forceinline__ bool same(const fe& x, const fe& y)
{
    for (int kp = -3; kp <= 3; kp++) {
        int64_t c = 0;
        bool zero = true;
        for (int k = 0; k < 8; k++) {
            c += (int64_t)x.l[k] - (int64_t)y.l[k] - (int64_t)kp * (int64_t)P48[k];
            const int64_t low = c & ((1ll << 48) - 1);
            zero = zero && low == 0;
            c = (c - low) / (1ll << 48);
        }
        if (zero && c == 0)
            return true;
    }
    return false;
}
#endif

} // namespace fp64

#endif
