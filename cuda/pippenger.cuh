// sppark's MSM kernels as the sparse stage calls them: Pippenger over device-resident bases and
// scalars (owned so that a lost device context cannot terminate the process), and the
// bitmap-driven batch addition of the bases whose scalar is one.
#ifndef CUZK_CUDA_PIPPENGER_CUH
#define CUZK_CUDA_PIPPENGER_CUH

#include <cstring>
#include <string>

#include "cuzk_cuda.h"
#include "faults.cuh"
#include "raii.cuh"
#include "types.cuh"

namespace cuzk {

// Whether sppark's streams of `gpu` have drained without error; never throws.
inline bool streams_idle(const gpu_t& gpu) noexcept
{
    bool ok = cudaStreamSynchronize((cudaStream_t)gpu) == cudaSuccess;
    for (size_t i = 0; i < gpu_t::FLIP_FLOP; i++)
        ok = cudaStreamSynchronize(gpu[i]) == cudaSuccess && ok;
    return ok;
}

// Owns an sppark msm_t. ~msm_t synchronises the device's streams through CUDA_OK, so after a
// sticky error it would throw from a destructor and terminate the process. The msm is deleted
// only once a non-throwing synchronisation succeeds; otherwise it is left allocated: its device
// is unusable from then on, and a few leaked host bytes are the price of not terminating. (A
// sticky fault of the B_G2 thread landing between that check and the delete is not covered:
// CUDA offers no way to free sppark's buckets without its throwing destructor.)
template<class M> struct msm_owner {
    const gpu_t& gpu;
    M* msm;
    msm_owner(const msm_owner&) = delete;
    msm_owner& operator=(const msm_owner&) = delete;
    ~msm_owner()
    {
        if (msm != nullptr && streams_idle(gpu))
            delete msm;
    }
};

// sppark Pippenger of n points (`points`: a dev_ptr_t for device-resident bases, or a pointer to
// page-locked host memory, which sppark copies in double-buffered batches on its own streams)
// with device-resident scalars (Montgomery form). Synchronous.
template<class bucket, class point, class affine, class points_t>
point sppark_msm(const gpu_t& gpu, points_t points, const fr_t* d_scalars, size_t n, const char* what)
{
    point out;
    out.inf();
    if (n == 0)
        return out;
    using msm_type = msm_t<bucket, point, affine, scalar_t>;
    msm_owner<msm_type> msm{gpu, new msm_type{nullptr, n, sizeof(affine), gpu.id()}};
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)gpu);
    RustError e = msm.msm->invoke(out, points, n, dev_ptr_t<scalar_t>{const_cast<scalar_t*>(d_scalars), n}, true);
    if (e.code != 0) {
        std::string msg = e.message != nullptr ? e.message : "sppark MSM failed";
        free(e.message);
        throw sppark_error{e.code, "MSM of " + std::to_string(n) + " " + what + ": " + msg};
    }
    return out;
}

// sppark Pippenger over device-resident points.
template<class bucket, class point, class affine>
point pippenger(const gpu_t& gpu, const affine* d_points, const fr_t* d_scalars, size_t n)
{
    return sppark_msm<bucket, point, affine>(gpu, dev_ptr_t<affine>{const_cast<affine*>(d_points), n}, d_scalars, n, "points");
}

// sppark Pippenger over points in page-locked host memory, copied by sppark.
template<class bucket, class point, class affine>
point pippenger_host_points(const gpu_t& gpu, const affine* h_points, const fr_t* d_scalars, size_t n)
{
    return sppark_msm<bucket, point, affine>(gpu, h_points, d_scalars, n, "points in host memory");
}

template<class point, class out_t> void write_point(out_t& dst, const point& p)
{
#ifndef __CUDA_ARCH__
    static_assert(sizeof(point) == sizeof(out_t), "point layout");
#endif
    memcpy(&dst, &p, sizeof(dst));
}

// Launch the bitmap-driven batch addition (cooperative) over bases[0..npoints); with
// `accumulate`, the per-warp sums already in ret are added in (a streamed query's later tiles).
template<class bucket, class affine_m, class bucket_m>
void batch_add(stream_t& s, const gpu_t& gpu, bucket* ret, const void* bases, uint32_t npoints,
               const uint32_t* bitmap, bool accumulate = false)
{
    typedef void (*fn_t)(bucket_m*, const affine_m*, uint32_t, const uint32_t*, bool, uint32_t);
    fn_t fn = batch_addition<bucket, affine_m>;
    bucket_m* r = reinterpret_cast<bucket_m*>(ret);
    const affine_m* pts = reinterpret_cast<const affine_m*>(bases);
    uint32_t sid = 0;
    s.launch_coop(fn, launch_params_t{dim3(gpu.sm_count()), dim3(BATCH_ADD_BLOCK_SIZE), 0}, r, pts, npoints,
                  bitmap, accumulate, sid);
}
} // namespace cuzk

#endif
