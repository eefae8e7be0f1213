// The only extern "C" file of the CUDA backend. Each entry point checks its arguments, runs the
// C++ implementation (cuda/prove.cuh) inside `guard`, and returns a status by value: C++
// exceptions, CUDA errors included, never cross into Rust.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "cuzk_cuda.h"
#include "prove.cuh"
// Development tools (feature `tools`: the device ceiling, the MSM and ones benchmarks, the test
// SRS's fixed-base multiples): never compiled into the shipped library.
#ifdef CUZK_CUDA_TOOLS
#include "ceiling.cuh"
#include "fixed_base.cuh"
#include "msm_bench.cuh"
#endif

namespace {

cuzk_cuda_status status_ok()
{
    return cuzk_cuda_status{0, nullptr};
}

cuzk_cuda_status status_fail(int code, const char* what)
{
    return cuzk_cuda_status{code == 0 ? CUZK_CUDA_E_INTERNAL : code, strdup(what != nullptr ? what : "")};
}

template<class F> cuzk_cuda_status guard(F&& body)
{
    try {
        body();
        return status_ok();
    } catch (const sppark_error& e) {
        return status_fail(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        return status_fail(CUZK_CUDA_E_INTERNAL, "host allocation failed (std::bad_alloc)");
    } catch (const std::exception& e) {
        return status_fail(CUZK_CUDA_E_INTERNAL, e.what());
    } catch (...) {
        return status_fail(CUZK_CUDA_E_INTERNAL, "unknown C++ exception");
    }
}

void check_device(int32_t dev)
{
    size_t n = ngpus();
    if (dev < 0 || (size_t)dev >= n)
        throw sppark_error{CUZK_CUDA_E_INVALID,
                           "device " + std::to_string(dev) + " out of range (" + std::to_string(n) + " usable)"};
}

} // namespace

extern "C" {

void cuzk_cuda_abi_sizes(uint64_t out[CUZK_CUDA_ABI_NSIZES])
{
    if (out == nullptr)
        return;
    out[0] = sizeof(cuzk_cuda_status);
    out[1] = sizeof(cuzk_cuda_g1);
    out[2] = sizeof(cuzk_cuda_g2);
    out[3] = sizeof(cuzk_cuda_sparse);
    out[4] = sizeof(cuzk_cuda_prove_in);
    out[5] = sizeof(cuzk_cuda_prove_out);
    out[6] = sizeof(cuzk_cuda_matrix);
    out[7] = sizeof(cuzk_cuda_rider);
}

void cuzk_cuda_message_free(char* message)
{
    free(message);
}

cuzk_cuda_status cuzk_cuda_device_count(int32_t* count)
{
    return guard([&] {
        if (count == nullptr)
            throw invalid("count is NULL");
        *count = 0;
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            throw sppark_error{CUZK_CUDA_E_NODEVICE,
                               std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e)};
        }
        if (n == 0)
            throw sppark_error{CUZK_CUDA_E_NODEVICE, std::string("cudaGetDeviceCount found no device")};
        size_t usable = ngpus();
        if (usable == 0)
            throw sppark_error{CUZK_CUDA_E_NODEVICE,
                               std::to_string(n) +
                                   " CUDA device(s), none with compute capability >= 7.0 and cooperative launch"};
        *count = (int32_t)usable;
    });
}

cuzk_cuda_status cuzk_cuda_device_info(int32_t dev, char* name, uint64_t len, uint64_t* free_bytes,
                                       uint64_t* total_bytes)
{
    return guard([&] {
        check_device(dev);
        const gpu_t& gpu = select_gpu(dev);
        if (name != nullptr && len != 0) {
            strncpy(name, gpu.props().name, len - 1);
            name[len - 1] = '\0';
        }
        size_t fr = 0, tot = 0;
        CUDA_OK(cudaMemGetInfo(&fr, &tot));
        if (free_bytes != nullptr)
            *free_bytes = fr;
        if (total_bytes != nullptr)
            *total_bytes = tot;
    });
}

#ifdef CUZK_CUDA_TOOLS
cuzk_cuda_status cuzk_cuda_ceiling(int32_t dev, uint32_t ntt_lg, double* rates)
{
    return guard([&] {
        check_device(dev);
        if (rates == nullptr)
            throw sppark_error{CUZK_CUDA_E_INVALID, "rates is NULL"};
        if (ntt_lg < 10 || ntt_lg > 27)
            throw sppark_error{CUZK_CUDA_E_INVALID, "NTT size 2^" + std::to_string(ntt_lg) + " outside 2^10..2^27"};
        ceiling::measure(dev, ntt_lg, rates);
    });
}

cuzk_cuda_status cuzk_cuda_msm_bench(int32_t dev, const void* points, uint64_t npoints, uint64_t n,
                                     const uint32_t* windows, uint32_t nwindows, uint64_t seed,
                                     cuzk_cuda_g1* ours, cuzk_cuda_g1* peer, float* ms)
{
    return guard([&] {
        check_device(dev);
        if (points == nullptr || windows == nullptr || ours == nullptr || peer == nullptr || ms == nullptr)
            throw sppark_error{CUZK_CUDA_E_INVALID, "msm_bench: NULL argument"};
        if (npoints == 0 || n == 0 || n >= (1ull << 31))
            throw sppark_error{CUZK_CUDA_E_INVALID, "msm_bench: sizes " + std::to_string(npoints) + ", " + std::to_string(n)};
        msm_bench::run(dev, static_cast<const affine_t*>(points), npoints, n, windows, nwindows, seed, ours, peer, ms);
    });
}

cuzk_cuda_status cuzk_cuda_ones_bench(int32_t dev, const void* points, uint64_t npoints, uint64_t n, uint64_t max_chunk,
                                      uint64_t seed, cuzk_cuda_g1* ours, cuzk_cuda_g1* peer, float* ms)
{
    return guard([&] {
        check_device(dev);
        if (points == nullptr || ours == nullptr || peer == nullptr || ms == nullptr)
            throw sppark_error{CUZK_CUDA_E_INVALID, "ones_bench: NULL argument"};
        if (npoints == 0 || n == 0 || n >= (1ull << 31))
            throw sppark_error{CUZK_CUDA_E_INVALID, "ones_bench: sizes " + std::to_string(npoints) + ", " + std::to_string(n)};
        msm_bench::ones(dev, static_cast<const affine_t*>(points), npoints, n,
                        max_chunk == 0 ? cuzk::ones::CHUNK : max_chunk, seed, ours, peer, ms);
    });
}
#endif

cuzk_cuda_status cuzk_cuda_device_check(int32_t dev)
{
    return guard([&] {
        check_device(dev);
        select_gpu(dev);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            throw sppark_error{-e, std::string("device synchronize: ") + cudaGetErrorString(e)};
        (void)cudaGetLastError();  // a recoverable error of the failed call, if any
        uint32_t* d = nullptr;
        uint32_t back = 0;
        CUDA_OK(cudaMalloc(&d, sizeof(uint32_t)));
        e = cudaMemset(d, 0x5a, sizeof(uint32_t));
        if (e == cudaSuccess)
            e = cudaMemcpy(&back, d, sizeof(uint32_t), cudaMemcpyDeviceToHost);
        (void)cudaFree(d);
        if (e != cudaSuccess)
            throw sppark_error{-e, std::string("device memory round trip: ") + cudaGetErrorString(e)};
        if (back != 0x5a5a5a5a)
            throw sppark_error{CUZK_CUDA_E_INTERNAL, "device memory round trip returned wrong bytes"};
    });
}

#ifdef CUZK_CUDA_FAULT_INJECTION
cuzk_cuda_status cuzk_cuda_inject_fault(int32_t kind, int32_t site)
{
    return guard([&] {
        if (kind != CUZK_CUDA_FAULT_ERROR && kind != CUZK_CUDA_FAULT_STICKY)
            throw invalid("unknown fault kind " + std::to_string(kind));
        if (site != CUZK_CUDA_SITE_STAGE_H && site != CUZK_CUDA_SITE_MSM)
            throw invalid("unknown fault site " + std::to_string(site));
        cuzk::armed_fault.store(kind << 8 | site);
    });
}
#endif

#ifdef CUZK_CUDA_TOOLS
// A fixed-base call over the points `affine` (G1's or G2's), its arguments checked.
extern "C++" {
template<class affine>
static cuzk_cuda_status fixed_base_call(void (*multiples)(const gpu_t&, const affine*, const uint32_t*, size_t, affine*),
                                        int32_t dev, const void* table, const void* scalars, uint64_t n, void* out)
{
    return guard([&] {
        if (table == nullptr || (n != 0 && (scalars == nullptr || out == nullptr)))
            throw invalid("table, scalars or out is NULL");
        check_device(dev);
        multiples(select_gpu(dev), static_cast<const affine*>(table), static_cast<const uint32_t*>(scalars), n,
                  static_cast<affine*>(out));
    });
}
} // extern "C++"

cuzk_cuda_status cuzk_cuda_fixed_base_g1(int32_t dev, const void* table, const void* scalars, uint64_t n, void* out)
{
    return fixed_base_call<affine_t>(cuzk::fixed_base_g1, dev, table, scalars, n, out);
}

cuzk_cuda_status cuzk_cuda_fixed_base_g2(int32_t dev, const void* table, const void* scalars, uint64_t n, void* out)
{
    return fixed_base_call<affine2_h>(cuzk::fixed_base_g2, dev, table, scalars, n, out);
}
#endif

cuzk_cuda_status cuzk_cuda_workspace_new(int32_t dev, cuzk_cuda_workspace** out)
{
    return guard([&] {
        if (out == nullptr)
            throw invalid("out is NULL");
        *out = nullptr;
        check_device(dev);
        *out = new cuzk_cuda_workspace(dev);
    });
}

void cuzk_cuda_workspace_free(cuzk_cuda_workspace* ws)
{
    try {
        delete ws;
    } catch (...) {
    }
}

uint64_t cuzk_cuda_workspace_bytes(const cuzk_cuda_workspace* ws)
{
    return ws == nullptr ? 0 : ws->bytes();
}

cuzk_cuda_status cuzk_cuda_srs_new(cuzk_cuda_workspace* ws, const void* h, uint64_t nh, const void* l,
                                   uint64_t nl, const void* a, uint64_t na, const void* b_g1, uint64_t nb,
                                   const void* b_g2, uint64_t nb2, uint32_t resident, cuzk_cuda_srs** out,
                                   float* upload_ms)
{
    return guard([&] {
        if (ws == nullptr || out == nullptr)
            throw invalid("workspace or out is NULL");
        *out = nullptr;
        *out = cuzk::srs_new(*ws, h, nh, l, nl, a, na, b_g1, nb, b_g2, nb2, resident, upload_ms);
    });
}

cuzk_cuda_status cuzk_cuda_host_register(const void* ptr, uint64_t bytes)
{
    return guard([&] {
        if (ptr == nullptr || bytes == 0)
            throw invalid("nothing to page-lock");
        cudaError_t e = cudaHostRegister(const_cast<void*>(ptr), bytes, cudaHostRegisterPortable);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();  // not sticky: leave no error behind for the next check
            CUDA_OK(e);
        }
    });
}

cuzk_cuda_status cuzk_cuda_host_unregister(const void* ptr)
{
    return guard([&] {
        if (ptr == nullptr)
            throw invalid("ptr is NULL");
        CUDA_OK(cudaHostUnregister(const_cast<void*>(ptr)));
    });
}

cuzk_cuda_status cuzk_cuda_device_memory(int32_t dev, uint64_t* out)
{
    return guard([&] {
        if (out == nullptr)
            throw invalid("out is NULL");
        check_device(dev);
        select_gpu(dev).select();
        size_t free_b = 0, total = 0;
        CUDA_OK(cudaMemGetInfo(&free_b, &total));
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, dev));
        uint64_t reserved = 0, used = 0, zero = 0;
        CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved));
        CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used));
        CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
        CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
        out[0] = free_b;
        out[1] = total;
        out[2] = reserved;
        out[3] = used;
    });
}

void cuzk_cuda_srs_free(cuzk_cuda_srs* srs)
{
    try {
        if (srs != nullptr) {
            select_gpu(srs->dev);
            delete srs;
        }
    } catch (...) {
    }
}

cuzk_cuda_status cuzk_cuda_r1cs_new(cuzk_cuda_workspace* ws, const cuzk_cuda_matrix* abc, uint64_t rows,
                                    const void* coeffs, uint64_t ncoeffs, uint64_t inputs, uint64_t aux,
                                    uint64_t tile_rows, cuzk_cuda_r1cs** out, float* upload_ms)
{
    return guard([&] {
        if (ws == nullptr || abc == nullptr || out == nullptr)
            throw invalid("workspace, matrices or out is NULL");
        *out = nullptr;
        *out = cuzk::r1cs_new(*ws, abc, rows, coeffs, ncoeffs, inputs, aux, tile_rows, upload_ms);
    });
}

void cuzk_cuda_r1cs_free(cuzk_cuda_r1cs* r1cs)
{
    try {
        if (r1cs != nullptr) {
            select_gpu(r1cs->dev);
            delete r1cs;
        }
    } catch (...) {
    }
}

cuzk_cuda_status cuzk_cuda_prove(cuzk_cuda_workspace* ws, const cuzk_cuda_srs* srs,
                                 const cuzk_cuda_prove_in* in, cuzk_cuda_prove_out* out, uint32_t stages)
{
    return guard([&] {
        if (ws == nullptr || srs == nullptr || in == nullptr || out == nullptr)
            throw invalid("workspace, srs, in or out is NULL");
        cuzk::prove(*ws, *srs, *in, *out, stages);
    });
}

} // extern "C"
