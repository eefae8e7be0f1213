// The sparse stage on a device whose memory cannot hold the resident mode (CUZK_CUDA_STREAMED):
// the SRS sections the SRS handle keeps in page-locked host memory cross PCIe in tiles of
// `tile_points` bases, double-buffered on the workspace's copy stream, while the previous tile is
// being summed on the main stream. Each tile serves its query twice: the bases whose scalar is one
// are added into the query's per-warp sums (sppark's batch addition, accumulating from tile to
// tile), and the bases of its significant scalars are gathered into one contiguous array, which
// sppark's Pippenger then sums with their scalars — so every base crosses PCIe once per proof.
// ΣH is the big-MSM in tiles (msm_big::msm_tiled: 2^23 bases a tile at 2^27), its own tiles
// copied from host memory under its work. Sections
// the handle holds on the device run the same code as a single tile with no copy. Where the plan
// has room for both (CUZK_CUDA_H_BESIDE_TILES), ΣH runs beside the passes over the tiles, else
// after them: device memory beyond H's slot and the queries is then the larger of two tiles and
// ΣH's buffers, not their sum.
#ifndef CUZK_CUDA_STREAM_CUH
#define CUZK_CUDA_STREAM_CUH

#include <algorithm>
#include <future>
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

// One query's pass over one section's tiles, queued on `s`: its ones summed into `ret` (nret
// per-warp sums), its significant bases gathered into `gathered`. W: 16-byte words per point (G1
// 6, G2 12).
template<int W, class bucket, class affine, class affine_m, class bucket_m>
void pass_query(cuzk_cuda_workspace& ws, stream_t& s, const section_t<affine>& sec, affine* slots, size_t tile,
                const cuzk_cuda_sparse& q, const uint32_t* d_bitmap, const uint32_t* d_sig_idx, affine* gathered,
                bucket* ret)
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
}

inline void check_ascending(const char* what, const cuzk_cuda_sparse& q)
{
    if (!std::is_sorted(q.sig_idx, q.sig_idx + q.nsig))
        throw invalid(std::string(what) + ": significant indices are not ascending");
}

// Where a streamed proof's sparse stage finds its bases and its uploaded queries.
struct streamed_view {
    section_t<affine_t> g1[3];  // L, A, B_G1
    section_t<affine2_t> g2;
    const cuzk_cuda_sparse* q[3];
    sparse_queries qs;
    size_t tile;
    bool any_host;  // some section is streamed from host memory (the passes need tile slots)
};

// G1 query f's pass (0 L, 1 A, 2 B_G1) on `s`, between events SIG + 4f and + 1, its significant
// bases gathered at `gathered`.
inline void g1_pass(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, int f, affine_t* slots, affine_t* gathered)
{
    timing_event* e = ws.ev + 8 + sparse_ev::SIG + 4 * f;
    e[0].record(s);
    pass_query<6, bucket_t, affine_t, affine_h, bucket_h>(ws, s, v.g1[f], slots, v.tile, *v.q[f], ws.bitmaps.get() + v.qs.woff[f],
                                                          ws.sig_idx.get() + v.qs.soff[f], gathered, ws.ret.get() + f * ws.nret());
    e[1].record(s);
}

// The G1 passes' per-warp sums (nret per query) copied into `partial`; waits for them.
inline void download_ones_g1(cuzk_cuda_workspace& ws, stream_t& s, std::vector<bucket_t>& partial)
{
    partial.resize(3 * ws.nret());
    CUDA_OK(cudaMemcpyAsync(partial.data(), ws.ret.get(), partial.size() * sizeof(bucket_t), cudaMemcpyDeviceToHost, s));
    s.sync();
}

// The G2 pass over B (ones, gathers) on `s` and its significant scalars' Pippenger, between
// B2_START and B2_END; the per-warp sums copied into `partial2`. Returns the significant part.
inline point2_t g2_pass(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, affine2_t* slots,
                        std::vector<bucket2_t>& partial2)
{
    timing_event* ev = ws.ev + 8;
    const cuzk_cuda_sparse& b = *v.q[2];
    ev[sparse_ev::B2_START].record(s);
    pass_query<12, bucket2_t, affine2_t, affine2_h, bucket2_h>(ws, s, v.g2, slots, v.tile, b, ws.bitmaps.get() + v.qs.woff[2],
                                                               ws.sig_idx.get() + v.qs.soff[2], ws.gathered2.get(), ws.ret2.get());
    s.sync();
    point2_t sig = pippenger<bucket2_t, point2_t, affine2_t>(ws.gpu, ws.gathered2.get(), ws.sig_scalars.get() + v.qs.soff[2], b.nsig);
    ev[sparse_ev::B2_END].record(s);
    partial2.resize(ws.nret());
    CUDA_OK(cudaMemcpyAsync(partial2.data(), ws.ret2.get(), ws.nret() * sizeof(bucket2_t), cudaMemcpyDeviceToHost, s));
    s.sync();
    return sig;
}

// ΣH's tile: twice the plan's tile of SRS bases, at most 2^23 bases (src/prover/vram.rs,
// `sigma_h_tile`, sizes the plan from the same rule).
constexpr size_t SIGMA_H_TILE_MAX = (size_t)1 << 23;
inline size_t sigma_h_tile(size_t tile_points)
{
    return std::min(SIGMA_H_TILE_MAX, 2 * tile_points);
}

// ΣH over the H coefficients in the workspace's first domain slot (spent by it): the tiled
// big-MSM, over the resident h bases or tiles of them copied from host memory. sppark's Pippenger
// streaming the host bases took 1.1 s at 2^27 against the one-pass big-MSM's 0.6 s, which the
// whole h needs 13 GB more to run (BENCHMARKS.md).
inline point_t sigma_h_streamed(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, size_t nh, size_t tile)
{
    ws.stream.sync();  // stage H wrote the coefficients on it
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)ws.gpu);
    const bool dev = (srs.resident & CUZK_CUDA_SEC_H) != 0;
    return msm_big::msm_tiled(ws.gpu, dev ? srs.h.get() : nullptr, srs.host_h, ws.abc.get(), nh, sigma_h_tile(tile));
}

// The significant part of G1 query f: sppark's Pippenger over its gathered bases, between events
// SIG + 4f + 2 and + 3.
inline point_t g1_significant(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, int f, const affine_t* gathered)
{
    timing_event* e = ws.ev + 8 + sparse_ev::SIG + 4 * f;
    e[2].record(s);
    s.sync();
    point_t r = pippenger<bucket_t, point_t, affine_t>(ws.gpu, gathered, ws.sig_scalars.get() + v.qs.soff[f], v.q[f]->nsig);
    e[3].record(s);
    return r;
}

// What a streamed sparse stage writes: ΣH, the sums of ones and the significant parts.
struct streamed_sums {
    point_t h, sig[3];
    point2_t b2_sig;
    std::vector<bucket_t> partial;
    std::vector<bucket2_t> partial2;
    streamed_sums()
    {
        h.inf();
        b2_sig.inf();
        for (auto& x : sig)
            x.inf();
    }
};

// One after the other on the main stream: the G1 passes (each query's Pippenger right after its
// pass, over one shared gathered buffer), the G2 pass, then ΣH once the tiles' memory is back
// with the driver. Device memory: the larger of two tiles and ΣH's batches.
inline void sparse_in_turn(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const streamed_view& v, bool g2,
                           size_t nh, streamed_sums& out)
{
    using namespace sparse_ev;
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;
    {
        pool_buffer<affine_t> slots(v.any_host ? 2 * v.tile : 0, s);
        s.sync();
        for (int f = 0; f < 3; f++) {
            g1_pass(ws, s, v, f, slots.get(), ws.gathered.get());
            out.sig[f] = g1_significant(ws, s, v, f, ws.gathered.get());
        }
        download_ones_g1(ws, s, out.partial);
    }
    release_pool(ws.gpu, s);
    ev[BATCH_G1].record(s);
    if (g2) {
        pool_buffer<affine2_t> slots(v.g2.dev == nullptr ? 2 * v.tile : 0, s);
        s.sync();
        out.b2_sig = g2_pass(ws, s, v, slots.get(), out.partial2);
    }
    ev[BATCH_G2].record(s);
    release_pool(ws.gpu, s);
    ev[H_START].record(s);
    out.h = sigma_h_streamed(ws, srs, nh, v.tile);
    ev[H_END].record(s);
}

// ΣH on this thread while a second thread walks every query's tiles on the workspace's `rest`
// stream (its copies on `copy`): ΣH is bound by arithmetic and crosses PCIe lightly (its tiles
// copy under its own work), the passes over the tiles are bound by PCIe, so each hides under the
// other. Once both ΣH and the G1 passes are done, the G1 significant parts from one gathered
// buffer per query, on this thread, while the second one goes on with B_G2's pass and Pippenger
// (sppark's G1 and G2 Pippengers are distinct instantiations: their device counters are their
// own). Device memory: ΣH's buffers, two tiles (of G2's size) and the three queries' gathered
// bases at once (the plan counts them: src/prover/vram.rs, `Streamed::h_beside_tiles`).
inline void sparse_beside(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const streamed_view& v, bool g2, size_t nh,
                          streamed_sums& out)
{
    using namespace sparse_ev;
    stream_t& s = ws.stream;
    stream_t& r = ws.rest;
    timing_event* ev = ws.ev + 8;
    affine_t* const gathered[3] = {ws.gathered.get(), ws.gathered.get() + v.qs.soff[1], ws.gathered.get() + v.qs.soff[2]};
    std::exception_ptr passes_error;  // B_G2's part (the G1 passes' errors come through g1_done)
    std::promise<void> g1_done;
    std::future<void> g1_ready = g1_done.get_future();
    {
        joined_thread passes;
        CUDA_OK(cudaStreamWaitEvent(r, ev[UPLOADED]));
        passes.t = std::thread([&] {
            bool g1 = false;
            try {
                ws.gpu.select();
                // G2's slots are twice G1's: one allocation serves both passes.
                pool_buffer<affine2_t> slots(v.any_host ? 2 * v.tile : 0, r);
                r.sync();
                for (int f = 0; f < 3; f++)
                    g1_pass(ws, r, v, f, reinterpret_cast<affine_t*>(slots.get()), gathered[f]);
                download_ones_g1(ws, r, out.partial);
                ev[BATCH_G1].record(r);
                r.sync();  // the gathered bases are in place
                g1 = true;
                g1_done.set_value();
                if (g2)
                    out.b2_sig = g2_pass(ws, r, v, slots.get(), out.partial2);
                ev[BATCH_G2].record(r);
                r.sync();
            } catch (...) {
                if (g1)
                    passes_error = std::current_exception();
                else
                    g1_done.set_exception(std::current_exception());
            }
        });
        ev[H_START].record(s);
        out.h = sigma_h_streamed(ws, srs, nh, v.tile);
        ev[H_END].record(s);
        g1_ready.get();  // rethrows a G1 pass's error (the thread is joined on the way out)
        CUDA_OK(cudaStreamWaitEvent(s, ev[BATCH_G1]));
        for (int f = 0; f < 3; f++)
            out.sig[f] = g1_significant(ws, s, v, f, gathered[f]);
    }
    if (passes_error)
        std::rethrow_exception(passes_error);
    r.sync();  // the slots' free, before the pool is trimmed
    CUDA_OK(cudaStreamWaitEvent(s, ev[BATCH_G2]));
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
    check_ascending("l", in.l);
    check_ascending("a", in.a_q);
    check_ascending("b", in.b_q);
    const bool beside = (in.flags & CUZK_CUDA_H_BESIDE_TILES) != 0;
    if (beside)  // one gathered buffer per query (nothing in it yet: reserving keeps nothing)
        ws.gathered.reserve(in.l.nsig + in.a_q.nsig + in.b_q.nsig);
    const bool g2 = in.b_q.npoints != 0;
    streamed_view v{{{(srs.resident & CUZK_CUDA_SEC_L) ? srs.l.get() : nullptr, srs.host_l, srs.nl},
                     {(srs.resident & CUZK_CUDA_SEC_A) ? srs.a.get() : nullptr, srs.host_a, srs.na},
                     {(srs.resident & CUZK_CUDA_SEC_B_G1) ? srs.b_g1.get() : nullptr, srs.host_b_g1, srs.nb}},
                    {(srs.resident & CUZK_CUDA_SEC_B_G2) ? srs.b_g2.get() : nullptr, srs.host_b_g2, srs.nb2},
                    {&in.l, &in.a_q, &in.b_q},
                    qs,
                    tile,
                    false};
    v.any_host = v.g1[0].dev == nullptr || v.g1[1].dev == nullptr || v.g1[2].dev == nullptr || (g2 && v.g2.dev == nullptr);
    CUDA_OK(cudaStreamWaitEvent(s, ev[UPLOADED]));
    ev[BEGIN].record(s);
    s.sync();  // stage H's coefficients and the queries are on the device

    streamed_sums sums;
    if (beside)
        sparse_beside(ws, srs, v, g2, plan.nh, sums);
    else
        sparse_in_turn(ws, srs, v, g2, plan.nh, sums);
    release_pool(ws.gpu, s);  // for the next proof's stage H
    ws.h_domain = 0;
    write_point(out.h, sums.h);
    write_ones(out, v.q, sums.partial, ws.nret(), g2, sums.partial2);
    cuzk_cuda_g1* sig_out[3] = {&out.l_sig, &out.a_sig, &out.b_sig};
    for (int f = 0; f < 3; f++)
        write_point(*sig_out[f], sums.sig[f]);
    write_point(out.b2_sig, sums.b2_sig);
    ev[END].record(s);
    s.sync();

    out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] = elapsed_ms(ev[START], ev[UPLOADED]);
    // The G1 passes over the bases (ones and gathers; in turn, their Pippengers too) and the G2
    // pass with its Pippenger; beside ΣH, these spans overlap PH_MSM_H.
    out.ms[CUZK_CUDA_PH_BATCH_ADD] = elapsed_ms(ev[BEGIN], ev[BATCH_G1]);
    out.ms[CUZK_CUDA_PH_BATCH_ADD_G2] = elapsed_ms(ev[BATCH_G1], ev[BATCH_G2]);
    float gather = 0;
    for (int f = 0; f < 3; f++)
        gather += elapsed_ms(ev[SIG + 4 * f], ev[SIG + 4 * f + 1]);
    out.ms[CUZK_CUDA_PH_GATHER] = gather;  // the passes' own spans
    out.ms[CUZK_CUDA_PH_MSM_L] = elapsed_ms(ev[SIG + 2], ev[SIG + 3]);
    out.ms[CUZK_CUDA_PH_MSM_A] = elapsed_ms(ev[SIG + 6], ev[SIG + 7]);
    out.ms[CUZK_CUDA_PH_MSM_B_G1] = elapsed_ms(ev[SIG + 10], ev[SIG + 11]);
    out.ms[CUZK_CUDA_PH_MSM_B_G2] = g2 ? elapsed_ms(ev[B2_START], ev[B2_END]) : 0.0f;
    out.ms[CUZK_CUDA_PH_MSM_H] = elapsed_ms(ev[H_START], ev[H_END]);
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] + elapsed_ms(ev[BEGIN], ev[END]);
    out.ms[CUZK_CUDA_PH_EARLY] = 0.0f;
}

} // namespace cuzk

#endif
