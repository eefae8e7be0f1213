// The device's own ceiling, for reporting the prover as a fraction of it: the rate of plain 32-bit
// integer multiply-adds (the instruction all 381-bit field arithmetic is made of), of sppark's
// BLS12-381 base-field Montgomery multiplication (the unit of MSM work) and scalar-field one (the
// unit of NTT work), the device-to-device copy rate (what bounds a memory-bound pass), and what
// sppark's NTT takes at a partition's domain size in each form stage H runs. Every thread runs
// independent chains so the multiplication rates are throughput, not latency.
#ifndef CUZK_CUDA_CEILING_CUH
#define CUZK_CUDA_CEILING_CUH

#include "fp64.cuh"
#include "ntt_split.cuh"
#include "random.cuh"
#include "raii.cuh"
#include "types.cuh"

namespace ceiling {

constexpr int IMAD_CHAINS = 8;
constexpr int FP_CHAINS = 4;

__global__ void imad_kernel(uint32_t* out, uint32_t iters, uint32_t m)
{
    uint32_t x[IMAD_CHAINS];
    for (int i = 0; i < IMAD_CHAINS; i++)
        x[i] = threadIdx.x + i * 7919u + blockIdx.x;
    for (uint32_t k = 0; k < iters; k++) {
#pragma unroll
        for (int i = 0; i < IMAD_CHAINS; i++)
            asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[i]) : "r"(m), "r"(k));
    }
    uint32_t r = 0;
    for (int i = 0; i < IMAD_CHAINS; i++)
        r ^= x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

// A thread's multiplier m (thread-dependent, so the compiler cannot fold it) and its chains'
// starting values.
template<class F> __device__ __forceinline__ void chain_start(F& m, F* x, int chains)
{
    m = F::one();
    for (int i = 0; i <= (int)(threadIdx.x & 7); i++)
        m += m;
    for (int i = 0; i < chains; i++) {
        x[i] = F::one();
        for (int j = 0; j <= i; j++)
            x[i] += m;
    }
}

template<class F> __global__ void mul_kernel(F* out, uint32_t iters)
{
    F m, x[FP_CHAINS];
    chain_start(m, x, FP_CHAINS);
    for (uint32_t k = 0; k < iters; k++) {
#pragma unroll
        for (int i = 0; i < FP_CHAINS; i++)
            x[i] *= m;
    }
    F r = x[0];
    for (int i = 1; i < FP_CHAINS; i++)
        r += x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

// FP_CHAINS chains of the FP64 product (fp64.cuh); `mixed`: half of them sppark's fp_t product
// instead, in the same loop, so the IMAD and FP64 pipes can run side by side.
template<bool MIXED> __global__ void fp64_kernel(double* out, uint32_t iters)
{
#ifdef __CUDA_ARCH__
    constexpr int F = MIXED ? FP_CHAINS / 2 : FP_CHAINS, S = FP_CHAINS - F;
    fp_t m, x[FP_CHAINS];
    chain_start(m, x, FP_CHAINS);  // mul_kernel<fp_t>'s residues
    fp64::fe mf = fp64::from_fp(m), y[F];
    for (int i = 0; i < F; i++)
        y[i] = fp64::from_fp(x[i]);
    for (uint32_t k = 0; k < iters; k++) {
#pragma unroll
        for (int i = 0; i < F; i++)
            y[i] = fp64::mul(y[i], mf);
#pragma unroll
        for (int i = 0; i < S; i++)
            x[F + i] *= m;
    }
    double r = 0;
    for (int i = 0; i < F; i++)
        for (int k = 0; k < 8; k++)
            r += y[i].l[k];
    for (int i = 0; i < S; i++)
        r += (double)x[F + i][0];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
#endif
}

// Each thread's chain of `iters` products both ways (sppark's fp_t and fp64), compared as residues
// after every step; mismatching threads counted in *bad.
__global__ void fp64_check_kernel(uint32_t* bad, uint32_t iters)
{
#ifdef __CUDA_ARCH__
    fp_t m, x[1];
    chain_start(m, x, 1);
    for (uint32_t i = 0; i < (threadIdx.x + blockIdx.x) % 61; i++)
        m = m * m + fp_t::one();  // spread the multipliers over the field
    fp64::fe mf = fp64::from_fp(m), y = fp64::from_fp(x[0]);
    bool ok = true;
    for (uint32_t k = 0; k < iters; k++) {
        x[0] *= m;
        y = fp64::mul(y, mf);
        ok = ok && fp64::same(fp64::from_fp(x[0]), y);
    }
    if (!ok)
        atomicAdd(bad, 1u);
#endif
}

// *bad += the elements where x and y differ.
__global__ void count_unequal(const fr_t* x, const fr_t* y, size_t n, uint32_t* bad)
{
#ifdef __CUDA_ARCH__  // fr_t's limbs are reachable in device code only
    uint32_t k = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const fr_t a = x[i], b = y[i];
        uint32_t diff = 0;
        for (int l = 0; l < 8; l++)
            diff |= a[l] ^ b[l];  // the limbs, not the values mod r: byte identity
        k += diff != 0;
    }
    if (k != 0)
        atomicAdd(bad, k);
#endif
}

// Seconds the kernel ran, by CUDA events on the current device.
template<class Launch> double timed(Launch&& launch)
{
    timing_event start, stop;
    start.record(0);
    launch();
    CUDA_OK(cudaGetLastError());
    stop.record(0);
    CUDA_OK(cudaEventSynchronize(stop));
    return elapsed_ms(start, stop) / 1e3;
}

// Per second on device `dev`: [0] 32-bit IMADs, [1] Fp and [2] Fr Montgomery multiplications,
// [3] bytes moved (read + written) by a device-to-device copy; then seconds per 2^ntt_lg sppark
// NTT as stage H runs them: [4] inverse, natural in → bit-reversed out (to_coset's first half),
// [5] forward coset, bit-reversed in → natural out (its second), [6] inverse coset, natural in →
// bit-reversed out (product_coefficients'); [7] FP64 Fp products per second (fp64.cuh), [8]
// products per second with half the chains sppark's and half FP64, [9] threads whose FP64 chain
// of products left sppark's
// (must be 0); [10..12] seconds per NTT of [4..6]'s forms with the passes split evenly
// (ntt_split.cuh; sppark's own split where that is even already), [13] elements where the
// even split's three forms in a row differ from sppark's on the same pseudo-random vector
// (must be 0).
inline void measure(int32_t dev, uint32_t ntt_lg, double rates[14])
{
    select_gpu(dev);
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    const uint32_t threads = 256, blocks = (uint32_t)prop.multiProcessorCount * 8;
    const size_t n = (size_t)threads * blocks;
    device_buffer<fp_t> out;
    out.reserve(n);
    uint32_t* out32 = reinterpret_cast<uint32_t*>(out.get());
    const uint32_t imad_iters = 1u << 16, fp_iters = 1u << 10;
    imad_kernel<<<blocks, threads>>>(out32, 64, 3); // warm-up
    double s = timed([&] { imad_kernel<<<blocks, threads>>>(out32, imad_iters, 0x9e3779b1u); });
    rates[0] = (double)n * imad_iters * IMAD_CHAINS / s;
    mul_kernel<fp_t><<<blocks, threads>>>(out.get(), 16);
    s = timed([&] { mul_kernel<fp_t><<<blocks, threads>>>(out.get(), fp_iters); });
    rates[1] = (double)n * fp_iters * FP_CHAINS / s;
    fr_t* out_r = reinterpret_cast<fr_t*>(out.get());  // fr_t (32 bytes) fits where fp_t (48) did
    mul_kernel<fr_t><<<blocks, threads>>>(out_r, 16);
    s = timed([&] { mul_kernel<fr_t><<<blocks, threads>>>(out_r, fp_iters); });
    rates[2] = (double)n * fp_iters * FP_CHAINS / s;
    double* out_d = reinterpret_cast<double*>(out.get());  // a double per thread fits too
    fp64_kernel<false><<<blocks, threads>>>(out_d, 16);
    s = timed([&] { fp64_kernel<false><<<blocks, threads>>>(out_d, fp_iters); });
    rates[7] = (double)n * fp_iters * FP_CHAINS / s;
    fp64_kernel<true><<<blocks, threads>>>(out_d, 16);
    s = timed([&] { fp64_kernel<true><<<blocks, threads>>>(out_d, fp_iters); });
    rates[8] = (double)n * fp_iters * FP_CHAINS / s;
    CUDA_OK(cudaMemset(out32, 0, sizeof(uint32_t)));
    fp64_check_kernel<<<blocks, threads>>>(out32, 64);
    uint32_t bad = 0;
    CUDA_OK(cudaMemcpy(&bad, out32, sizeof(bad), cudaMemcpyDeviceToHost));
    rates[9] = bad;
    CUDA_OK(cudaDeviceSynchronize());

    // One 2^ntt_lg vector (2 GiB at 2^26): the copy's rate over it, then each NTT form twice (the
    // second timed; the values are whatever the previous form left, which costs the same).
    const size_t len = (size_t)1 << ntt_lg;
    device_buffer<fr_t> v, w;
    v.reserve(len);
    w.reserve(len);
    CUDA_OK(cudaMemset(v.get(), 0x11, len * sizeof(fr_t)));
    CUDA_OK(cudaMemcpy(w.get(), v.get(), len * sizeof(fr_t), cudaMemcpyDeviceToDevice));  // warm-up
    s = timed([&] { CUDA_OK(cudaMemcpyAsync(w.get(), v.get(), len * sizeof(fr_t), cudaMemcpyDeviceToDevice, 0)); });
    rates[3] = 2.0 * len * sizeof(fr_t) / s;
    stream_t st{dev};
    using IO = NTT::InputOutputOrder;
    const struct {
        IO order;
        NTT::Direction dir;
        NTT::Type type;
    } forms[3] = {{IO::NR, NTT::Direction::inverse, NTT::Type::standard},
                  {IO::RN, NTT::Direction::forward, NTT::Type::coset},
                  {IO::NR, NTT::Direction::inverse, NTT::Type::coset}};
    for (bool even : {false, true})
        for (int f = 0; f < 3; f++) {
            for (int rep = 0; rep < 2; rep++) {
                timing_event start, stop;
                start.record(st);
                if (even)  // stage H's: the passes split evenly where sppark's are not
                    cuzk::stage_ntt::run(st, v.get(), ntt_lg, forms[f].order, forms[f].dir, forms[f].type);
                else  // sppark's own split
                    NTT::Base_dev_ptr(st, v.get(), ntt_lg, forms[f].order, forms[f].dir, forms[f].type);
                stop.record(st);
                st.sync();
                rates[(even ? 10 : 4) + f] = elapsed_ms(start, stop) / 1e3;
            }
        }
    // The same pseudo-random vector through the three forms both ways: every element equal.
    rnd::scalars<<<prop.multiProcessorCount * 8, 256, 0, st>>>(v.get(), len, 0x6e74);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpyAsync(w.get(), v.get(), len * sizeof(fr_t), cudaMemcpyDeviceToDevice, st));
    for (int f = 0; f < 3; f++) {
        NTT::Base_dev_ptr(st, v.get(), ntt_lg, forms[f].order, forms[f].dir, forms[f].type);
        cuzk::stage_ntt::run(st, w.get(), ntt_lg, forms[f].order, forms[f].dir, forms[f].type);
    }
    CUDA_OK(cudaMemsetAsync(out32, 0, sizeof(uint32_t), st));
    count_unequal<<<prop.multiProcessorCount * 8, 256, 0, st>>>(v.get(), w.get(), len, out32);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpyAsync(&bad, out32, sizeof(bad), cudaMemcpyDeviceToHost, st));
    st.sync();
    rates[13] = bad;
    CUDA_OK(cudaDeviceSynchronize());
}

} // namespace ceiling

#endif
