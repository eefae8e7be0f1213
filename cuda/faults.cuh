// Fault injection for tests (compiled only with CUZK_CUDA_FAULT_INJECTION, i.e. the cargo
// feature `cuda-fault-injection`; release builds get empty inline hooks). A fault armed by
// cuzk_cuda_inject_fault fires once, at the first proof step that reaches its site, as a real
// CUDA error: a failed runtime call (recoverable) or an out-of-bounds kernel write (sticky: the
// device's context is lost and every later call on it fails).
#ifndef CUZK_CUDA_FAULTS_CUH
#define CUZK_CUDA_FAULTS_CUH

#include <atomic>
#include <cstdint>
#include <util/exception.cuh>

#include "cuzk_cuda.h"

namespace cuzk {

#ifdef CUZK_CUDA_FAULT_INJECTION

// kind << 8 | site of the armed fault; 0: none.
inline std::atomic<int32_t> armed_fault{0};

__global__ void cuzk_fault_write(uint32_t* p)
{
    *p = 0xdead;
}

inline void fault_point(int32_t site, cudaStream_t s)
{
    int32_t a = armed_fault.load();
    if (a == 0 || (a & 0xff) != site || !armed_fault.compare_exchange_strong(a, 0))
        return;
    if ((a >> 8) == CUZK_CUDA_FAULT_ERROR) {
        void* p = nullptr;
        CUDA_OK(cudaMalloc(&p, (size_t)1 << 62));  // fails: cudaErrorMemoryAllocation
        (void)cudaFree(p);
    } else {
        // An address no allocation has: the kernel faults asynchronously, the context is lost.
        cuzk_fault_write<<<1, 1, 0, s>>>(reinterpret_cast<uint32_t*>(0x10));
    }
}

#else

inline void fault_point(int32_t, cudaStream_t) {}

#endif

} // namespace cuzk

#endif
