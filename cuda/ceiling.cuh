// The device's own arithmetic ceiling, for reporting the prover as a fraction of it: the rate
// of plain 32-bit integer multiply-adds (the instruction all 381-bit field arithmetic is made
// of) and of sppark's BLS12-381 base-field Montgomery multiplication (the unit of MSM work).
// Every thread runs independent chains so the rates are throughput, not latency.
#ifndef CUZK_CUDA_CEILING_CUH
#define CUZK_CUDA_CEILING_CUH

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

__global__ void fp_mul_kernel(fp_t* out, uint32_t iters)
{
    fp_t x[FP_CHAINS];
    fp_t m = fp_t::one();
    for (int i = 0; i <= (int)(threadIdx.x & 7); i++)
        m += m;  // a thread-dependent multiplier the compiler cannot fold
    for (int i = 0; i < FP_CHAINS; i++) {
        x[i] = fp_t::one();
        for (int j = 0; j <= i; j++)
            x[i] += m;
    }
    for (uint32_t k = 0; k < iters; k++) {
#pragma unroll
        for (int i = 0; i < FP_CHAINS; i++)
            x[i] *= m;
    }
    fp_t r = x[0];
    for (int i = 1; i < FP_CHAINS; i++)
        r += x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
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

// Operations per second on device `dev`: [0] 32-bit IMADs, [1] Fp Montgomery multiplications.
inline void measure(int32_t dev, double rates[2])
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
    fp_mul_kernel<<<blocks, threads>>>(out.get(), 16);
    s = timed([&] { fp_mul_kernel<<<blocks, threads>>>(out.get(), fp_iters); });
    rates[1] = (double)n * fp_iters * FP_CHAINS / s;
    CUDA_OK(cudaDeviceSynchronize());
}

} // namespace ceiling

#endif
