// Stage H's NTTs: sppark's, except for the sizes where sppark's three passes are uneven: there
// sppark's kernels with the passes split evenly (2^26 partition 0.980x the time of sppark's own
// split: BENCHMARKS.md, 2026-12-04). For lg = 3s + 2 sppark runs passes of s + 2, s and s
// levels; the (s + 2)-level pass takes 512-thread blocks with 80 registers (one block, 16
// warps, per SM) and computes its twiddles, and at lg 26 it took 10.3–11.9 ms of a 22–27 ms
// NTT against ~5.8 ms for each 8-level pass (Nsight Compute on the H200, cuda/NOTES.md). Split
// s + 1, s + 1, s, every pass has 256-thread blocks. The transform is the same exact
// computation in another order of passes, so the values are the same (checked against sppark's
// by `cuzk-gpu ceiling` and the byte-identity tests, which run 2^20 through it).
#ifndef CUZK_CUDA_NTT_SPLIT_CUH
#define CUZK_CUDA_NTT_SPLIT_CUH

#include "types.cuh"

namespace cuzk {

struct stage_ntt : private NTT {  // (for NTT's protected bit_rev)
    using IO = NTT::InputOutputOrder;

    // Whether `lg` gets the even split (sppark's passes for the other sizes are even already, or
    // small enough that one pass or two do it).
    static bool even_split(uint32_t lg) { return lg >= 20 && lg <= 26 && lg % 3 == 2; }

    // The NTT of x (2^lg elements, on `s`) in sppark's orders and types, as NTT::Base_dev_ptr.
    static void run(stream_t& s, fr_t* x, uint32_t lg, IO order, NTT::Direction dir, NTT::Type type)
    {
        if (!even_split(lg)) {
            NTT::Base_dev_ptr(s, x, lg, order, dir, type);
            return;
        }
        const bool intt = dir == NTT::Direction::inverse, coset = type == NTT::Type::coset;
        const NTTParameters& params = NTTParameters::all(intt)[s];
        bool bitrev, gs;
        switch (order) {
        case IO::NN:
            NTT::bit_rev(x, x, lg, s);
            bitrev = true, gs = false;
            break;
        case IO::NR:
            bitrev = false, gs = true;
            break;
        case IO::RN:
            bitrev = true, gs = false;
            break;
        default:  // RR: stage H never asks for it
            NTT::Base_dev_ptr(s, x, lg, order, dir, type);
            return;
        }
        if (!intt && coset)
            lde_powers(s, x, lg, false, bitrev);
        const int third = (int)lg / 3;  // lg = 3·third + 2
        if (gs) {
            GS_launcher l{x, (int)lg, intt, params, s};
            l.step(third + 1);
            l.step(third + 1);
            l.step(third);
        } else {
            CT_launcher l{x, (int)lg, intt, params, s};
            l.step(third);
            l.step(third + 1);
            l.step(third + 1);
        }
        if (intt && coset)
            lde_powers(s, x, lg, true, !bitrev);
    }

    // x in bit-reversed order ↔ natural order, in place (sppark's permutation).
    static void bit_reverse(stream_t& s, fr_t* x, uint32_t lg) { NTT::bit_rev(x, x, lg, s); }

private:
    // sppark's coset shift (its private LDE_powers for lg_blowup 0, domains of 2^20 and up).
    static void lde_powers(stream_t& s, fr_t* x, uint32_t lg, bool intt, bool bitrev)
    {
        const uint32_t warp = gpu_props(s).warpSize;
        LDE_distribute_powers<<<((size_t)1 << lg) / warp, warp, 0, s>>>(x, lg, 0, bitrev,
                                                                         NTTParameters::all(intt)[s].partial_group_gen_powers);
        CUDA_OK(cudaGetLastError());
    }
};

} // namespace cuzk

#endif
