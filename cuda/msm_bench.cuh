// The big-MSM experiment's harness (cuzk_cuda_msm_bench): synthetic bases and scalars on the
// device, sppark's Pippenger and msm_big on the same input, host-clock timings.
#ifndef CUZK_CUDA_MSM_BENCH_CUH
#define CUZK_CUDA_MSM_BENCH_CUH

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cuzk_cuda.h"
#include "msm_big.cuh"
#include "sum_ones.cuh"
#include "random.cuh"
#include "pippenger.cuh"
#include "workspace.cuh"

namespace msm_bench {

template<class F> float best_of_two_ms(F&& f)
{
    float best = 1e30f;
    for (int k = 0; k < 2; k++) {
        CUDA_OK(cudaDeviceSynchronize());
        auto t = std::chrono::steady_clock::now();
        f();
        CUDA_OK(cudaDeviceSynchronize());
        float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t).count();
        best = ms < best ? ms : best;
    }
    return best;
}

// d = the distinct bases `points` tiled over n: one upload, then doubling device copies, on `s`.
inline void tile(stream_t& s, device_buffer<affine_t>& d, const affine_t* points, size_t npoints, size_t n)
{
    d.reserve(n);
    size_t have = std::min(npoints, n);
    CUDA_OK(cudaMemcpyAsync(d.get(), points, have * sizeof(affine_t), cudaMemcpyHostToDevice, s));
    while (have < n) {
        size_t k = std::min(have, n - have);
        CUDA_OK(cudaMemcpyAsync(d.get() + have, d.get(), k * sizeof(affine_t), cudaMemcpyDeviceToDevice, s));
        have += k;
    }
}

// A window code's flag (beside msm_big::AFFINE): sum the scalars as a caller that keeps them.
constexpr uint32_t CONST_SCALARS = 64;
static_assert((CONST_SCALARS & msm_big::AFFINE) == 0, "CONST_SCALARS is the sums' flag");

inline void run(int32_t dev, const affine_t* points, size_t npoints, size_t n, const uint32_t* windows,
                uint32_t nwindows, uint64_t seed, cuzk_cuda_g1* ours, cuzk_cuda_g1* peer, float* ms)
{
    const gpu_t& gpu = select_gpu(dev);
    keep_freed_memory(gpu);  // as a prover's workspace does: the timings are the prover's
    stream_t s{dev};
    device_buffer<affine_t> d_points;
    device_buffer<fr_t> d_scalars;
    tile(s, d_points, points, npoints, n);
    d_scalars.reserve(n);
    device_buffer<fr_t> d_spent;  // the copy a run takes as spent (when one does)
    if (std::any_of(windows, windows + nwindows, [](uint32_t w) { return ((w / 100) & CONST_SCALARS) == 0; }))
        d_spent.reserve(n);
    rnd::scalars<<<gpu.sm_count() * 8, 256, 0, s>>>(d_scalars.get(), n, seed);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaStreamSynchronize(s));

    point_t p;
    ms[0] = best_of_two_ms([&] { p = cuzk::pippenger<bucket_t, point_t, affine_t>(gpu, d_points.get(), d_scalars.get(), n); });
    std::memcpy(peer, &p, sizeof(*peer));
    for (uint32_t k = 0; k < nwindows; k++) {
        point_t q;
        msm_big::timings t;
        // A window code is c + 100·flags: msm_big::AFFINE for the sums by affine rounds (the
        // proofs' ΣH; else XYZZ sums alone, the big-MSM's fallback), and CONST_SCALARS: the
        // scalars kept in Montgomery form (reduced in every window's digits) instead of taken as
        // spent, as proofs do (then each run sums a copy, made before its timing events: their
        // times exclude it, its wall time does not). msm_big::msm refuses any other flag.
        const uint32_t c = windows[k] % 100, flags = (windows[k] / 100) & ~CONST_SCALARS;
        const auto sums = static_cast<msm_big::sums_t>(flags);
        const bool spent = ((windows[k] / 100) & CONST_SCALARS) == 0;
        ms[1 + k] = best_of_two_ms([&] {
            if (!spent) {
                q = msm_big::msm(gpu, d_points.get(), d_scalars.get(), n, c, &t, sums);
                return;
            }
            CUDA_OK(cudaMemcpyAsync(d_spent.get(), d_scalars.get(), n * sizeof(fr_t), cudaMemcpyDeviceToDevice, s));
            CUDA_OK(cudaStreamSynchronize(s));
            q = msm_big::msm(gpu, d_points.get(), d_spent.get(), n, c, &t, sums, true);
        });
        float* e = ms + 1 + nwindows + 6 * k;
        e[0] = t.total;
        e[1] = t.first_sort;
        e[2] = t.sorts;
        e[3] = t.sums;
        e[4] = t.host_before;
        e[5] = t.host_after;
        std::memcpy(&ours[k], &q, sizeof(ours[k]));
    }
}

// The sums of ones (sum_ones.cuh) against sppark's batch addition: the bases whose bit is set in
// a pseudo-random bitmap over `points` repeated to n, summed both ways; our passes take at most
// max_chunk entries. ms[0] = sppark's best of two, ms[1] = ours (lists included).
inline void ones(int32_t dev, const affine_t* points, size_t npoints, size_t n, size_t max_chunk, uint64_t seed,
                 cuzk_cuda_g1* ours, cuzk_cuda_g1* peer, float* ms)
{
    const gpu_t& gpu = select_gpu(dev);
    keep_freed_memory(gpu);
    stream_t s{dev};
    device_buffer<affine_t> d_points;
    tile(s, d_points, points, npoints, n);
    const size_t words = (n + 1023) / 1024 * 32, nret = (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
    device_buffer<uint32_t> bits;
    bits.reserve(words);
    rnd::bits<<<gpu.sm_count() * 8, 256, 0, s>>>(bits.get(), words, n, seed);
    CUDA_OK(cudaGetLastError());
    device_buffer<bucket_t> ret;
    ret.reserve(nret);
    std::vector<bucket_t> partial(nret);
    CUDA_OK(cudaStreamSynchronize(s));

    ms[0] = best_of_two_ms([&] {
        cuzk::batch_add<bucket_t, affine_h, bucket_h>(s, gpu, ret.get(), d_points.get(), (uint32_t)n, bits.get());
        s.sync();
    });
    CUDA_OK(cudaMemcpy(partial.data(), ret.get(), nret * sizeof(bucket_t), cudaMemcpyDeviceToHost));
    point_t p = sum_up(partial);
    std::memcpy(peer, &p, sizeof(*peer));

    CUDA_OK(cudaMemset(ret.get(), 0xff, nret * sizeof(bucket_t)));  // ours must write every slot
    ms[1] = best_of_two_ms([&] {
        const uint32_t* b[3] = {bits.get(), bits.get(), bits.get()};
        const size_t w[3] = {words, 0, 0}, np[3] = {n, 0, 0};
        cuzk::ones::lists_t lists(gpu, s, b, w, np);
        cuzk::ones::summer_t summer(gpu, s, lists.count[0], max_chunk);
        summer.sum(d_points.get(), lists.idx->get(), lists.count[0], reinterpret_cast<bucket_h*>(ret.get()), nret);
        s.sync();
    });
    CUDA_OK(cudaMemcpy(partial.data(), ret.get(), nret * sizeof(bucket_t), cudaMemcpyDeviceToHost));
    p = sum_up(partial);
    std::memcpy(ours, &p, sizeof(*ours));
}

} // namespace msm_bench

#endif
