// The sparse stage on a device whose memory cannot hold the resident mode (CUZK_CUDA_STREAMED):
// the SRS sections the SRS handle keeps in page-locked host memory cross PCIe in tiles of
// `tile_points` bases, double-buffered on the workspace's copy stream, while the previous tile is
// being summed on the main stream. Each tile serves its query twice: the bases whose scalar is one
// are added into the query's per-warp sums (sppark's batch addition, accumulating from tile to
// tile), and the bases of its significant scalars are gathered into one contiguous array, which
// sppark's Pippenger then sums with their scalars — so every base crosses PCIe once per proof.
// ΣH is sppark's Pippenger, which streams host bases itself (8 batches of 2^24 at 2^27). Sections
// the handle holds on the device run the same code as a single tile with no copy. Device memory
// beyond H's slot and the queries: two tiles (G1, then G2) or ΣH's batches, one after the other.
#ifndef CUZK_CUDA_STREAM_CUH
#define CUZK_CUDA_STREAM_CUH

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cuzk_cuda.h"
#include "kernels.cuh"
#include "pippenger.cuh"
#include "raii.cuh"
#include "sparse.cuh"
#include "types.cuh"
#include "workspace.cuh"

namespace cuzk {

// Where a section's bases are: on the device (resident) or in page-locked host memory.
template<class A> struct section_t {
    const A* dev;
    const A* host;
    size_t n;
};

// Calls work(bases, first, len) on `s` for consecutive tiles [first, first + len) of a section's
// bases: once over the whole section when it is resident, else per tile of `tile` bases copied
// into `slots` (two tiles) on the copy stream, tile k + 1's copy overlapping tile k's work.
// Queues everything without waiting on the host.
template<class A, class F>
void for_each_tile(cuzk_cuda_workspace& ws, stream_t& s, const section_t<A>& sec, A* slots, size_t tile, F&& work)
{
    if (sec.n == 0)
        return;
    if (sec.dev != nullptr) {
        work(sec.dev, (size_t)0, sec.n);
        return;
    }
    for (size_t first = 0, k = 0; first < sec.n; first += tile, k++) {
        const size_t len = std::min(tile, sec.n - first);
        const int j = k & 1;
        A* slot = slots + j * tile;
        CUDA_OK(cudaStreamWaitEvent(ws.copy, ws.tile_free[j]));
        CUDA_OK(cudaMemcpyAsync(slot, sec.host + first, len * sizeof(A), cudaMemcpyHostToDevice, ws.copy));
        ws.tile_ready[j].record(ws.copy);
        CUDA_OK(cudaStreamWaitEvent(s, ws.tile_ready[j]));
        work(static_cast<const A*>(slot), first, len);
        ws.tile_free[j].record(s);
    }
}

// The range [k0, k1) of an ascending index list whose indices fall in [first, first + len).
inline std::pair<size_t, size_t> indices_in(const uint32_t* idx, size_t n, size_t first, size_t len)
{
    const uint32_t* b = std::lower_bound(idx, idx + n, (uint32_t)first);
    const uint32_t* e = std::lower_bound(b, idx + n, (uint32_t)(first + len));
    return {(size_t)(b - idx), (size_t)(e - idx)};
}

// One query over one section: its ones summed into `ret` (nret per-warp sums), its significant
// bases gathered into `gathered` tile by tile, then summed with their scalars by Pippenger.
// W: 16-byte words per point (G1 6, G2 12). Returns the significant part.
template<int W, class bucket, class point, class affine, class affine_m, class bucket_m>
point stream_query(cuzk_cuda_workspace& ws, stream_t& s, const section_t<affine>& sec, affine* slots, size_t tile,
                   const cuzk_cuda_sparse& q, const uint32_t* d_bitmap, const uint32_t* d_sig_idx,
                   const fr_t* d_sig_scalars, affine* gathered, bucket* ret)
{
    const gpu_t& gpu = ws.gpu;
    const section_t<affine> part{sec.dev, sec.host, q.npoints};  // a query may use fewer bases than its section has
    for_each_tile(ws, s, part, slots, tile, [&](const affine* bases, size_t first, size_t len) {
        batch_add<bucket, affine_m, bucket_m>(s, gpu, ret, bases, (uint32_t)len, d_bitmap + first / 32, first != 0);
        auto [k0, k1] = indices_in(q.sig_idx, q.nsig, first, len);
        if (k1 > k0) {
            cuzk_gather<W><<<grid_for(gpu.sm_count(), k1 - k0), 256, 0, s>>>(
                reinterpret_cast<uint4*>(gathered + k0), reinterpret_cast<const uint4*>(bases), d_sig_idx + k0,
                (uint32_t)(k1 - k0), (uint32_t)first);
            CUDA_OK(cudaGetLastError());
        }
    });
    s.sync();
    return pippenger<bucket, point, affine>(gpu, gathered, d_sig_scalars, q.nsig);
}

inline void check_ascending(const char* what, const cuzk_cuda_sparse& q)
{
    if (!std::is_sorted(q.sig_idx, q.sig_idx + q.nsig))
        throw invalid(std::string(what) + ": significant indices are not ascending");
}

// The sparse stage of a STREAMED proof (see the head of this file).
inline void stage_sparse_streamed(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                                  cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    const size_t tile = in.tile_points;
    if (tile == 0 || tile % 1024 != 0 || tile >= (1ull << 31))
        throw invalid("tile of " + std::to_string(tile) + " bases: not a positive multiple of 1024 below 2^31");
    if (ws.early.ready)
        throw invalid("a streamed proof's sparse stage runs after stage H, never beside it");
    const sparse_plan plan = plan_sparse(srs, in, ws.h_domain);
    ws.gpu.select();
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;
    const sparse_queries qs = take_queries(ws, srs, in);
    const cuzk_cuda_sparse* q[3] = {&in.l, &in.a_q, &in.b_q};
    check_ascending("l", in.l);
    check_ascending("a", in.a_q);
    check_ascending("b", in.b_q);
    CUDA_OK(cudaStreamWaitEvent(s, ev[UPLOADED]));
    ev[BEGIN].record(s);

    const size_t nret = ws.nret();
    const section_t<affine_t> g1[3] = {{(srs.resident & CUZK_CUDA_SEC_L) ? srs.l.get() : nullptr, srs.host_l, srs.nl},
                                       {(srs.resident & CUZK_CUDA_SEC_A) ? srs.a.get() : nullptr, srs.host_a, srs.na},
                                       {(srs.resident & CUZK_CUDA_SEC_B_G1) ? srs.b_g1.get() : nullptr, srs.host_b_g1, srs.nb}};
    point_t sig[3];
    {
        const bool any_host = g1[0].dev == nullptr || g1[1].dev == nullptr || g1[2].dev == nullptr;
        pool_buffer<affine_t> slots(any_host ? 2 * tile : 0, s);
        s.sync();
        for (int f = 0; f < 3; f++) {
            timing_event* e = ws.ev + 8 + SIG + 4 * f;
            e[0].record(s);
            sig[f] = stream_query<6, bucket_t, point_t, affine_t, affine_h, bucket_h>(
                ws, s, g1[f], slots.get(), tile, *q[f], ws.bitmaps.get() + qs.woff[f], ws.sig_idx.get() + qs.soff[f],
                ws.sig_scalars.get() + qs.soff[f], ws.gathered.get(), ws.ret.get() + f * nret);
            e[3].record(s);
        }
        s.sync();
    }
    release_pool(ws.gpu, s);
    std::vector<bucket_t> partial(3 * nret);
    CUDA_OK(cudaMemcpyAsync(partial.data(), ws.ret.get(), 3 * nret * sizeof(bucket_t), cudaMemcpyDeviceToHost, s));
    ev[BATCH_G1].record(s);

    point2_t b2_sig;
    b2_sig.inf();
    std::vector<bucket2_t> partial2;
    if (plan.g2 && in.b_q.npoints != 0) {
        const section_t<affine2_t> g2{(srs.resident & CUZK_CUDA_SEC_B_G2) ? srs.b_g2.get() : nullptr, srs.host_b_g2, srs.nb2};
        pool_buffer<affine2_t> slots(g2.dev == nullptr ? 2 * tile : 0, s);
        s.sync();
        ev[B2_START].record(s);
        b2_sig = stream_query<12, bucket2_t, point2_t, affine2_t, affine2_h, bucket2_h>(
            ws, s, g2, slots.get(), tile, in.b_q, ws.bitmaps.get() + qs.woff[2], ws.sig_idx.get() + qs.soff[2],
            ws.sig_scalars.get() + qs.soff[2], ws.gathered2.get(), ws.ret2.get());
        ev[B2_END].record(s);
        partial2.resize(nret);
        CUDA_OK(cudaMemcpyAsync(partial2.data(), ws.ret2.get(), nret * sizeof(bucket2_t), cudaMemcpyDeviceToHost, s));
        s.sync();
    }
    ev[BATCH_G2].record(s);

    // ΣH once the tiles' memory is back with the driver.
    release_pool(ws.gpu, s);
    ev[H_START].record(s);
    point_t hsum;
    hsum.inf();
    if (plan.nh != 0) {
        const bool h_dev = (srs.resident & CUZK_CUDA_SEC_H) != 0;
        hsum = h_dev ? pippenger<bucket_t, point_t, affine_t>(ws.gpu, srs.h.get(), ws.abc.get(), plan.nh)
                     : pippenger_host_points<bucket_t, point_t, affine_t>(ws.gpu, srs.host_h, ws.abc.get(), plan.nh);
    }
    ev[H_END].record(s);
    release_pool(ws.gpu, s);  // for the next proof's stage H
    ws.h_domain = 0;
    write_point(out.h, hsum);

    write_ones(out, q, partial, nret, !partial2.empty(), partial2);
    cuzk_cuda_g1* sig_out[3] = {&out.l_sig, &out.a_sig, &out.b_sig};
    for (int f = 0; f < 3; f++)
        write_point(*sig_out[f], sig[f]);
    write_point(out.b2_sig, b2_sig);
    ev[END].record(s);
    s.sync();

    out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] = elapsed_ms(ev[START], ev[UPLOADED]);
    // The G1 and G2 passes over the bases (ones, gathers and the significant Pippengers).
    out.ms[CUZK_CUDA_PH_BATCH_ADD] = elapsed_ms(ev[BEGIN], ev[BATCH_G1]);
    out.ms[CUZK_CUDA_PH_BATCH_ADD_G2] = elapsed_ms(ev[BATCH_G1], ev[BATCH_G2]);
    out.ms[CUZK_CUDA_PH_GATHER] = 0.0f;
    out.ms[CUZK_CUDA_PH_MSM_L] = elapsed_ms(ws.ev[8 + SIG], ws.ev[8 + SIG + 3]);
    out.ms[CUZK_CUDA_PH_MSM_A] = elapsed_ms(ws.ev[8 + SIG + 4], ws.ev[8 + SIG + 7]);
    out.ms[CUZK_CUDA_PH_MSM_B_G1] = elapsed_ms(ws.ev[8 + SIG + 8], ws.ev[8 + SIG + 11]);
    out.ms[CUZK_CUDA_PH_MSM_B_G2] = plan.g2 && in.b_q.npoints != 0 ? elapsed_ms(ev[B2_START], ev[B2_END]) : 0.0f;
    out.ms[CUZK_CUDA_PH_MSM_H] = elapsed_ms(ev[H_START], ev[H_END]);
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] + elapsed_ms(ev[BEGIN], ev[END]);
    out.ms[CUZK_CUDA_PH_EARLY] = 0.0f;
}

} // namespace cuzk

#endif
