// Pseudo-random device data for the benchmarks and the ceiling's checks (not for proofs).
#ifndef CUZK_CUDA_RANDOM_CUH
#define CUZK_CUDA_RANDOM_CUH

#include "types.cuh"

namespace rnd {

__device__ __forceinline__ uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Scalars below 2^254 (so below r), in Montgomery form.
__global__ void scalars(fr_t* out, size_t n, uint64_t seed)
{
#ifdef __CUDA_ARCH__  // fr_t's limbs are reachable in device code only
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t w[8];
        for (int k = 0; k < 4; k++) {
            uint64_t v = splitmix(seed ^ (i * 4 + k) * 0xd1b54a32d192ed03ull);
            w[2 * k] = (uint32_t)v;
            w[2 * k + 1] = (uint32_t)(v >> 32);
        }
        w[7] &= 0x3fffffff;
        fr_t s;
        for (int k = 0; k < 8; k++)
            s[k] = w[k];
        s.to();
        out[i] = s;
    }
#endif
}

// Bitmap words with each of the first nbits bits set with probability about 1/2, the rest clear.
__global__ void bits(uint32_t* out, size_t words, size_t nbits, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t v = (uint32_t)splitmix(seed ^ i * 0x9fb21c651e98df25ull);
        out[i] = i * 32 >= nbits ? 0 : nbits - i * 32 >= 32 ? v : v & ((1u << (nbits - i * 32)) - 1);
    }
}

} // namespace rnd

#endif
