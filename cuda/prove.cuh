// The GPU half of a Groth16 partition proof, as two stages on a workspace: stage H (a, b, c
// uploaded or evaluated from the recorded circuit, H = (A·B − C)/Z through sppark's NTTs), then
// the sparse stage: the G1 and G2 multi-scalar multiplications over device-resident SRS bases.
// Scalars equal to one are summed by affine rounds (G1, sum_ones.cuh) or sppark's bitmap-driven
// batch addition (G2); the remaining ("significant") scalars go through sppark's Pippenger over
// bases gathered by index, the dense H through the one-pass big-MSM (msm_big.cuh). The kernels are in kernels.cuh, what a device keeps
// between proofs in workspace.cuh. Everything runs on the workspace's streams or on sppark's
// per-device streams (never the legacy default stream). Called only from groth16.cu, which turns
// exceptions into status codes.
#ifndef CUZK_CUDA_PROVE_CUH
#define CUZK_CUDA_PROVE_CUH

#include <exception>
#include <string>
#include <thread>

#include "cuzk_cuda.h"
#include "sparse.cuh"
#include "stage_h.cuh"
#include "stream.cuh"
#include "workspace.cuh"

namespace cuzk {

// Stage H on this thread and, on a second, the sparse stage's work that needs no H (the queries
// uploaded first, on the copy stream ahead of a, b, c): the batch additions and the significant
// A (L, B_G1 unless folded) and B_G2 scalars' Pippengers use SMs the upload leaves idle. The next
// sparse stage on the workspace then runs ΣH only. It runs sppark's MSM kernels: the caller holds
// the device's MSM gate. An error of stage H wins over one of the other thread.
inline void prove_beside_h(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                           cuzk_cuda_prove_out& out)
{
    if (in.lg_domain > MAX_LG_DOMAIN_SIZE)
        throw invalid("domain 2^" + std::to_string(in.lg_domain) + " is larger than supported");
    const sparse_plan plan = plan_sparse(srs, in, (size_t)1 << in.lg_domain);
    const sparse_queries qs = take_queries(ws, srs, in);  // uploaded unless a queries stage did
    const uploaded_queries up = ws.queries;
    std::exception_ptr rest_error;
    {
        joined_thread rest;  // joined before an error of stage H leaves this scope
        rest.t = std::thread([&] {
            try {
                rest_beside_h(ws, srs, in, qs, plan, out);
            } catch (...) {
                rest_error = std::current_exception();
            }
        });
        stage_h(ws, in, out);
    }
    if (rest_error)
        std::rethrow_exception(rest_error);
    ws.early = up;
    ws.early.flags = in.flags;  // (a reused upload may have been made with other flags)
    ws.early.ready = true;
}

inline void prove(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                  cuzk_cuda_prove_out& out, uint32_t stages)
{
    if (srs.dev != ws.gpu.id())
        throw invalid("SRS was uploaded to another device");
    const uint32_t known = CUZK_CUDA_STAGE_H | CUZK_CUDA_STAGE_QUERIES | CUZK_CUDA_STAGE_SPARSE | CUZK_CUDA_STAGE_EARLY;
    if ((stages & ~known) != 0 || stages == 0)
        throw invalid("unknown stages " + std::to_string(stages));
    const bool early = (stages & CUZK_CUDA_STAGE_EARLY) != 0;
    if (early && ((stages & CUZK_CUDA_STAGE_H) == 0 || (stages & CUZK_CUDA_STAGE_QUERIES) != 0))
        throw invalid("STAGE_EARLY runs beside STAGE_H and uploads the queries itself (no STAGE_QUERIES)");
    const bool streamed = (in.flags & CUZK_CUDA_STREAMED) != 0;
    if (streamed && early)
        throw invalid("a STREAMED proof's sparse stage cannot run beside stage H (STAGE_EARLY)");
    if (!streamed && (in.nriders != 0 || (in.flags & CUZK_CUDA_SUMS_GIVEN) != 0))
        throw invalid("riders and given sums are for STREAMED proofs only");
    if (!streamed && !srs.all_resident() && (stages & (CUZK_CUDA_STAGE_SPARSE | CUZK_CUDA_STAGE_EARLY)) != 0)
        throw invalid("the SRS keeps sections in host memory: only a STREAMED proof can use it");
    if (stages & CUZK_CUDA_STAGE_H)
        ws.pcie.reset();  // a new proof
    if (early)
        prove_beside_h(ws, srs, in, out);
    else if (stages & CUZK_CUDA_STAGE_H)
        stage_h(ws, in, out);
    if (stages & CUZK_CUDA_STAGE_QUERIES)
        upload_queries(ws, srs, in);
    if ((stages & CUZK_CUDA_STAGE_SPARSE) && streamed)
        stage_sparse_streamed(ws, srs, in, out);
    else if (stages & CUZK_CUDA_STAGE_SPARSE)
        stage_sparse(ws, srs, in, out);
    if (stages & CUZK_CUDA_STAGE_SPARSE)  // its copies are done: the sparse stage waited for them
        ws.pcie.take(out.h2d_bytes, out.d2h_bytes, out.ms[CUZK_CUDA_PH_PCIE_BUSY]);
}

} // namespace cuzk

#endif
