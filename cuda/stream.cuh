// The sparse stage on a device whose memory cannot hold the resident mode (CUZK_CUDA_STREAMED):
// the SRS sections the SRS handle keeps in page-locked host memory cross PCIe in tiles of
// `tile_points` bases, double-buffered on the workspace's copy stream, while the previous tile is
// being summed on the main stream. Each tile serves its query twice: the bases whose scalar is one
// are added into the query's per-warp sums (sppark's batch addition, accumulating from tile to
// tile), and the bases of its significant scalars are gathered into one contiguous array, which
// sppark's Pippenger then sums with their scalars — so every base crosses PCIe once per proof.
// A dense query takes no pass: its Pippenger reads the section itself, piece by piece (`dense_msm`).
// ΣH is the big-MSM in tiles (msm_big::msm_tiled: 2^23 bases a tile at 2^27), its own tiles
// copied from host memory under its work; up to 2^25 bases, sppark's Pippenger (as resident). Sections
// the handle holds on the device run the same code as a single tile with no copy. Where the plan
// has room for both (CUZK_CUDA_H_BESIDE_TILES), ΣH runs beside the passes over the tiles, else
// after them: device memory beyond H's slot and the queries is then the larger of two tiles and
// ΣH's buffers, not their sum.
// A pass serves its riders too (cuzk_cuda_prove_in.riders: other prepared partitions of the same
// circuit, like supraseal-c2's batches): each tile copied once is summed and gathered for every
// one of them, so the SRS crosses PCIe once for the lot; each rider's sums go to its own output
// and its proof's sparse stage later runs ΣH alone (SUMS_GIVEN).
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
        ws.pcie.copy(slot, sec.host + first, len * sizeof(A), cudaMemcpyHostToDevice, ws.copy);
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

// Where one partition's query meets a pass over a section's tiles: its ones bitmap and
// significant list (host view for the tile ranges, device copies for the kernels), where its
// significant bases are gathered and where its per-warp sums of ones go (nret of them).
template<class affine, class bucket> struct query_at {
    const cuzk_cuda_sparse* q;
    const uint32_t* d_bitmap;
    const uint32_t* d_sig_idx;
    affine* gathered;
    bucket* ret;
};

// One query's pass over one section's tiles for every partition it serves (the proof's own and
// its riders': one copy of each tile for all of them), queued on `s`: each one's ones summed into
// its `ret`, its significant bases gathered into its `gathered`. W: 16-byte words per point (G1
// 6, G2 12). The partitions' queries have one shape (checked by `check_riders`).
template<int W, class bucket, class affine, class affine_m, class bucket_m>
void pass_query(cuzk_cuda_workspace& ws, stream_t& s, const section_t<affine>& sec, affine* slots, size_t tile,
                const std::vector<query_at<affine, bucket>>& parts)
{
    const gpu_t& gpu = ws.gpu;
    if (parts.empty())  // a dense query alone: its Pippenger reads the bases, no pass needed
        return;
    const section_t<affine> part{sec.dev, sec.host, parts[0].q->npoints};  // a query may use fewer bases than its section has
    for_each_tile(ws, s, part, slots, tile, [&](const affine* bases, size_t first, size_t len) {
        for (const auto& p : parts) {
            batch_add<bucket, affine_m, bucket_m>(s, gpu, p.ret, bases, (uint32_t)len, p.d_bitmap + first / 32, first != 0);
            auto [k0, k1] = indices_in(p.q->sig_idx, p.q->nsig, first, len);
            if (k1 > k0) {
                cuzk_gather<W><<<grid_for(gpu.sm_count(), k1 - k0), 256, 0, s>>>(
                    reinterpret_cast<uint4*>(p.gathered + k0), reinterpret_cast<const uint4*>(bases), p.d_sig_idx + k0,
                    (uint32_t)(k1 - k0), (uint32_t)first);
                CUDA_OK(cudaGetLastError());
            }
        }
    });
}

inline void check_ascending(const char* what, const cuzk_cuda_sparse& q)
{
    if (!std::is_sorted(q.sig_idx, q.sig_idx + q.nsig))
        throw invalid(std::string(what) + ": significant indices are not ascending");
}

// One partition a streamed sparse stage serves: the proof's own (the workspace's query buffers)
// or a rider's (buffers borrowed from the pool for the stage). Its queries on the host and on
// the device, where its significant bases are gathered (per query; the proof's own three share
// one buffer when each query's Pippenger follows its pass), and its per-warp sums of ones.
struct pass_target {
    const cuzk_cuda_sparse* q[3];  // L, A, B (B's lists serve B_G1 and B_G2)
    const uint32_t* bitmap[3];
    const uint32_t* sig_idx[3];
    const fr_t* sig_scalars[3];
    affine_t* gathered[3];
    affine2_t* gathered2;
    bucket_t* ret;    // 3 · nret: L, A, B_G1
    bucket2_t* ret2;  // nret
};

// What the passes and Pippengers make for one partition: the per-warp sums of ones (added up on
// the host) and the significant parts.
struct target_sums {
    point_t sig[3];
    point2_t b2_sig;
    std::vector<bucket_t> partial;
    std::vector<bucket2_t> partial2;
    target_sums()
    {
        b2_sig.inf();
        for (auto& x : sig)
            x.inf();
    }
};

// A rider's device buffers for one sparse stage, borrowed from the pool on `s` (the caller
// syncs `s` before the uploads use them and frees them on `s` after the passes).
struct rider_buffers {
    pool_buffer<uint32_t> bitmaps, sig_idx;
    pool_buffer<fr_t> sig_scalars;
    pool_buffer<affine_t> gathered;
    pool_buffer<affine2_t> gathered2;
    pool_buffer<bucket_t> ret;
    pool_buffer<bucket2_t> ret2;

    rider_buffers(const cuzk_cuda_rider& r, size_t nret, stream_t& s)
        : bitmaps(r.l.ones_words + r.a_q.ones_words + r.b_q.ones_words, s), sig_idx(nsig(r), s), sig_scalars(nsig(r), s),
          gathered(nsig(r), s), gathered2(r.b_q.nsig, s), ret(3 * nret, s), ret2(nret, s)
    {
    }
    static size_t nsig(const cuzk_cuda_rider& r) { return r.l.nsig + r.a_q.nsig + r.b_q.nsig; }

    // r's queries uploaded on the copy stream through the pinned slots (returns once the host
    // arrays are read); where they are.
    pass_target upload(cuzk_cuda_workspace& ws, const cuzk_cuda_rider& r)
    {
        pass_target t{};
        const cuzk_cuda_sparse* q[3] = {&r.l, &r.a_q, &r.b_q};
        size_t woff[3], soff[3];
        upload_query_lists(ws, q, bitmaps.get(), sig_idx.get(), sig_scalars.get(), woff, soff);
        for (int f = 0; f < 3; f++) {
            t.q[f] = q[f];
            t.bitmap[f] = bitmaps.get() + woff[f];
            t.sig_idx[f] = sig_idx.get() + soff[f];
            t.sig_scalars[f] = sig_scalars.get() + soff[f];
            t.gathered[f] = gathered.get() + soff[f];
        }
        t.gathered2 = gathered2.get();
        t.ret = ret.get();
        t.ret2 = ret2.get();
        return t;
    }
};

// The riders' queries against the SRS, and of the proof's own shape (a pass walks one query's
// bases for all of them).
inline void check_riders(const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in)
{
    if (in.nriders != 0 && in.riders == nullptr)
        throw invalid(std::to_string(in.nriders) + " riders at NULL");
    if (in.nriders > 64)
        throw invalid(std::to_string(in.nriders) + " riders: at most 64");
    const cuzk_cuda_sparse* own[3] = {&in.l, &in.a_q, &in.b_q};
    if (in.nriders != 0 && (is_dense(in.l) || is_dense(in.a_q) || is_dense(in.b_q)))
        throw invalid("a proof with a dense query carries no riders");
    for (size_t k = 0; k < in.nriders; k++) {
        const cuzk_cuda_rider& r = in.riders[k];
        const std::string w = "rider " + std::to_string(k);
        if (r.out == nullptr)
            throw invalid(w + ": output is NULL");
        const cuzk_cuda_sparse* q[3] = {&r.l, &r.a_q, &r.b_q};
        check_queries(w + " ", srs, q);
        if (is_dense(r.l) || is_dense(r.a_q) || is_dense(r.b_q))
            throw invalid(w + ": a dense query rides no pass (its Pippenger reads the bases itself)");
        const char* names[3] = {"l", "a", "b"};
        for (int f = 0; f < 3; f++) {
            if (q[f]->npoints != own[f]->npoints || q[f]->ones_words != own[f]->ones_words)
                throw invalid(w + " " + names[f] + ": " + std::to_string(q[f]->npoints) + " points, not the proof's " +
                              std::to_string(own[f]->npoints));
            check_ascending((w + " " + names[f]).c_str(), *q[f]);
        }
    }
}

// Where a streamed proof's sparse stage finds its bases and the partitions it serves.
struct streamed_view {
    section_t<affine_t> g1[3];  // L, A, B_G1
    section_t<affine2_t> g2;
    std::vector<pass_target> targets;  // the proof's own first, then its riders'
    size_t tile;
    bool any_host;  // some section is streamed from host memory (the passes need tile slots)
};

// Points per piece of a dense query's sum in the streamed mode: the piece's scalars go up, then
// sppark's Pippenger sums the piece's bases, so what the device holds for it follows the piece,
// not the query (at 2^24 G2 points sppark's double-buffered batches of host points take 1.6 GB,
// at 32 GiB WindowPoSt's 92 M 4.4 GB; the scalars 0.5 GB, not 4 GB). src/prover/vram.rs plans
// with the same size (`DENSE_PIECE`).
constexpr size_t DENSE_PIECE = (size_t)1 << 24;

// A dense query's sum (q->dense: its scalars in host memory), piece by piece: each piece's
// scalars uploaded through the pinned slots, then sppark's Pippenger over the piece's bases of
// section `sec`, read where they are (sppark copies host bases itself, in double-buffered
// batches: they cross PCIe once, as a pass's tiles would). On the thread that owns the slots.
template<class bucket, class point, class affine>
point dense_msm(cuzk_cuda_workspace& ws, stream_t& s, const section_t<affine>& sec, const cuzk_cuda_sparse* q)
{
    const size_t n = q->npoints;
    point sum;
    sum.inf();
    if (n == 0)
        return sum;
    pool_buffer<fr_t> scalars(std::min(n, DENSE_PIECE), s);
    s.sync();
    for (size_t first = 0; first < n; first += DENSE_PIECE) {
        const size_t len = std::min(DENSE_PIECE, n - first);
        upload_staged(ws, scalars.get(), static_cast<const char*>(q->dense) + first * sizeof(fr_t), len * sizeof(fr_t));
        ws.copy.sync();
        point part;
        if (sec.dev != nullptr) {
            part = pippenger<bucket, point, affine>(ws.gpu, sec.dev + first, scalars.get(), len);
        } else {
            ws.pcie.counted(len * sizeof(affine));
            part = pippenger_host_points<bucket, point, affine>(ws.gpu, sec.host + first, scalars.get(), len);
        }
        sum.add(part);
    }
    return sum;
}

// G1 query f's pass (0 L, 1 A, 2 B_G1) for every target on `s`, between events SIG + 4f and + 1.
inline void g1_pass(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, int f, affine_t* slots)
{
    timing_event* e = ws.ev + 8 + sparse_ev::SIG + 4 * f;
    std::vector<query_at<affine_t, bucket_t>> parts;
    for (const pass_target& t : v.targets)
        if (!is_dense(*t.q[f]))
            parts.push_back({t.q[f], t.bitmap[f], t.sig_idx[f], t.gathered[f], t.ret + f * ws.nret()});
    e[0].record(s);
    pass_query<6, bucket_t, affine_t, affine_h, bucket_h>(ws, s, v.g1[f], slots, v.tile, parts);
    e[1].record(s);
}

// The G1 passes' per-warp sums (nret per query) of every target copied into its `partial`;
// waits for them.
inline void download_ones_g1(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, std::vector<target_sums>& sums)
{
    for (size_t i = 0; i < v.targets.size(); i++) {
        sums[i].partial.resize(3 * ws.nret());
        CUDA_OK(cudaMemcpyAsync(sums[i].partial.data(), v.targets[i].ret, sums[i].partial.size() * sizeof(bucket_t),
                                cudaMemcpyDeviceToHost, s));
    }
    s.sync();
}

// The G2 pass over B (ones, gathers) for every target on `s` and their significant scalars'
// Pippengers, between B2_START and B2_END; the per-warp sums copied into each `partial2`.
inline void g2_pass(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, affine2_t* slots,
                    std::vector<target_sums>& sums)
{
    timing_event* ev = ws.ev + 8;
    std::vector<query_at<affine2_t, bucket2_t>> parts;
    for (const pass_target& t : v.targets)
        if (!is_dense(*t.q[2]))
            parts.push_back({t.q[2], t.bitmap[2], t.sig_idx[2], t.gathered2, t.ret2});
    ev[sparse_ev::B2_START].record(s);
    pass_query<12, bucket2_t, affine2_t, affine2_h, bucket2_h>(ws, s, v.g2, slots, v.tile, parts);
    s.sync();
    for (size_t i = 0; i < v.targets.size(); i++) {
        const pass_target& t = v.targets[i];
        sums[i].b2_sig = is_dense(*t.q[2])
                             ? dense_msm<bucket2_t, point2_t>(ws, s, v.g2, t.q[2])
                             : pippenger<bucket2_t, point2_t, affine2_t>(ws.gpu, t.gathered2, t.sig_scalars[2], t.q[2]->nsig);
    }
    ev[sparse_ev::B2_END].record(s);
    for (size_t i = 0; i < v.targets.size(); i++) {
        sums[i].partial2.resize(ws.nret());
        CUDA_OK(cudaMemcpyAsync(sums[i].partial2.data(), v.targets[i].ret2, ws.nret() * sizeof(bucket2_t),
                                cudaMemcpyDeviceToHost, s));
    }
    s.sync();
}

// ΣH's tile: twice the plan's tile of SRS bases, at most 2^23 bases (src/prover/vram.rs,
// `sigma_h_tile`, sizes the plan from the same rule).
constexpr size_t SIGMA_H_TILE_MAX = (size_t)1 << 23;
inline size_t sigma_h_tile(size_t tile_points)
{
    return std::min(SIGMA_H_TILE_MAX, 2 * tile_points);
}

// ΣH over the H coefficients in the workspace's first domain slot (spent by it), by size as the
// resident mode sums it (sparse.cuh, `msm_dense_h`): up to MSM_BIG_MIN_POINTS sppark's Pippenger,
// over the kept h bases or copying the host bases itself in double-buffered batches (at 2 KiB's
// 2^22 points the tiled big-MSM's 8 tiles of 16 windows took 0.33 s against sppark's 0.08 s
// resident: BENCHMARKS.md 2026-12-06 15:26); above, the tiled big-MSM, over the resident h bases
// or tiles of them copied from host memory (sppark's Pippenger streaming the host bases took 1.1 s
// at 2^27 against the one-pass big-MSM's 0.6 s, which the whole h needs 13 GB more to run).
inline point_t sigma_h_streamed(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, size_t nh, size_t tile)
{
    ws.stream.sync();  // stage H wrote the coefficients on it
    const bool dev = (srs.resident & CUZK_CUDA_SEC_H) != 0;
    if (nh <= MSM_BIG_MIN_POINTS) {
        if (dev)
            return pippenger<bucket_t, point_t, affine_t>(ws.gpu, srs.h.get(), ws.abc.get(), nh);
        ws.pcie.counted(nh * sizeof(affine_t));
        return pippenger_host_points<bucket_t, point_t, affine_t>(ws.gpu, srs.host_h, ws.abc.get(), nh);
    }
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)ws.gpu);
    return msm_big::msm_tiled(ws.gpu, dev ? srs.h.get() : nullptr, srs.host_h, ws.abc.get(), nh, sigma_h_tile(tile), ws.pcie);
}

// The significant part of target t's G1 query f: sppark's Pippenger over its gathered bases, or
// a dense query's over the section (for the proof's own, between events SIG + 4f + 2 and + 3).
inline point_t g1_significant(cuzk_cuda_workspace& ws, stream_t& s, const streamed_view& v, const pass_target& t, int f,
                              bool own)
{
    timing_event* e = ws.ev + 8 + sparse_ev::SIG + 4 * f;
    if (own)
        e[2].record(s);
    s.sync();
    point_t r = is_dense(*t.q[f])
                    ? dense_msm<bucket_t, point_t>(ws, s, v.g1[f], t.q[f])
                    : pippenger<bucket_t, point_t, affine_t>(ws.gpu, t.gathered[f], t.sig_scalars[f], t.q[f]->nsig);
    if (own)
        e[3].record(s);
    return r;
}

// One after the other on the main stream: the G1 passes (the proof's own significant parts
// right after each pass, over one shared gathered buffer; its riders' after the three), the G2
// pass, then ΣH once the tiles' memory is back with the driver. Device memory: the larger of two
// tiles and ΣH's batches.
inline point_t sparse_in_turn(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const streamed_view& v, bool g2,
                              size_t nh, std::vector<target_sums>& sums)
{
    using namespace sparse_ev;
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;
    {
        pool_buffer<affine_t> slots(v.any_host ? 2 * v.tile : 0, s);
        s.sync();
        for (int f = 0; f < 3; f++) {
            g1_pass(ws, s, v, f, slots.get());
            sums[0].sig[f] = g1_significant(ws, s, v, v.targets[0], f, true);
        }
        for (size_t i = 1; i < v.targets.size(); i++)
            for (int f = 0; f < 3; f++)
                sums[i].sig[f] = g1_significant(ws, s, v, v.targets[i], f, false);
        download_ones_g1(ws, s, v, sums);
    }
    release_pool(ws.gpu, s);
    ev[BATCH_G1].record(s);
    if (g2) {
        pool_buffer<affine2_t> slots(v.g2.dev == nullptr && !is_dense(*v.targets[0].q[2]) ? 2 * v.tile : 0, s);
        s.sync();
        g2_pass(ws, s, v, slots.get(), sums);
    }
    ev[BATCH_G2].record(s);
    release_pool(ws.gpu, s);
    ev[H_START].record(s);
    point_t h = sigma_h_streamed(ws, srs, nh, v.tile);
    ev[H_END].record(s);
    return h;
}

// ΣH on this thread while a second thread walks every query's tiles on the workspace's `rest`
// stream (its copies on `copy`): ΣH is bound by arithmetic and crosses PCIe lightly (its tiles
// copy under its own work), the passes over the tiles are bound by PCIe, so each hides under the
// other. Once both ΣH and the G1 passes are done, the G1 significant parts from one gathered
// buffer per query, on this thread, while the second one goes on with B_G2's pass and Pippengers
// (sppark's G1 and G2 Pippengers are distinct instantiations: their device counters are their
// own). Device memory: ΣH's buffers, two tiles (of G2's size) and the queries' gathered bases
// at once (the plan counts them: src/prover/vram.rs, `Streamed::h_beside_tiles`).
inline point_t sparse_beside(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const streamed_view& v, bool g2, size_t nh,
                             std::vector<target_sums>& sums)
{
    using namespace sparse_ev;
    stream_t& s = ws.stream;
    stream_t& r = ws.rest;
    timing_event* ev = ws.ev + 8;
    std::exception_ptr passes_error;  // B_G2's part (the G1 passes' errors come through g1_done)
    std::promise<void> g1_done;
    std::future<void> g1_ready = g1_done.get_future();
    point_t h;
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
                    g1_pass(ws, r, v, f, reinterpret_cast<affine_t*>(slots.get()));
                download_ones_g1(ws, r, v, sums);
                ev[BATCH_G1].record(r);
                r.sync();  // the gathered bases are in place
                g1 = true;
                g1_done.set_value();
                if (g2)
                    g2_pass(ws, r, v, slots.get(), sums);
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
        h = sigma_h_streamed(ws, srs, nh, v.tile);
        ev[H_END].record(s);
        g1_ready.get();  // rethrows a G1 pass's error (the thread is joined on the way out)
        CUDA_OK(cudaStreamWaitEvent(s, ev[BATCH_G1]));
        for (size_t i = 0; i < v.targets.size(); i++)
            for (int f = 0; f < 3; f++)
                sums[i].sig[f] = g1_significant(ws, s, v, v.targets[i], f, i == 0);
    }
    if (passes_error)
        std::rethrow_exception(passes_error);
    r.sync();  // the slots' free, before the pool is trimmed
    CUDA_OK(cudaStreamWaitEvent(s, ev[BATCH_G2]));
    return h;
}

// The sums of one target written where its proof reads them.
inline void write_sums(cuzk_cuda_prove_out& out, const cuzk_cuda_sparse* const q[3], const target_sums& sums, size_t nret,
                       bool g2)
{
    write_ones(out, q, sums.partial, nret, g2, sums.partial2);
    cuzk_cuda_g1* sig_out[3] = {&out.l_sig, &out.a_sig, &out.b_sig};
    for (int f = 0; f < 3; f++)
        write_point(*sig_out[f], sums.sig[f]);
    write_point(out.b2_sig, sums.b2_sig);
}

// A proof whose sums were given (SUMS_GIVEN: it rode another proof's passes): ΣH alone.
inline void sigma_h_only(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in, size_t nh,
                         cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    if (in.nriders != 0)
        throw invalid("a proof whose sums were given (SUMS_GIVEN) serves no riders");
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;
    ev[BEGIN].record(s);
    ev[H_START].record(s);
    const point_t h = sigma_h_streamed(ws, srs, nh, in.tile_points);
    ev[H_END].record(s);
    release_pool(ws.gpu, s);  // for the next proof's stage H
    ws.h_domain = 0;
    write_point(out.h, h);
    ev[END].record(s);
    s.sync();
    for (int k : {CUZK_CUDA_PH_UPLOAD_SPARSE, CUZK_CUDA_PH_BATCH_ADD, CUZK_CUDA_PH_BATCH_ADD_G2, CUZK_CUDA_PH_GATHER,
                  CUZK_CUDA_PH_MSM_L, CUZK_CUDA_PH_MSM_A, CUZK_CUDA_PH_MSM_B_G1, CUZK_CUDA_PH_MSM_B_G2, CUZK_CUDA_PH_EARLY})
        out.ms[k] = 0.0f;
    out.ms[CUZK_CUDA_PH_MSM_H] = elapsed_ms(ev[H_START], ev[H_END]);
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = elapsed_ms(ev[BEGIN], ev[END]);
}

// The sparse stage of a STREAMED proof (see the head of this file), serving its riders' queries
// from the same passes over the tiles.
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
    if ((in.flags & CUZK_CUDA_SUMS_GIVEN) != 0) {
        sigma_h_only(ws, srs, in, plan.nh, out);
        return;
    }
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;
    const sparse_queries qs = take_queries(ws, srs, in);
    check_ascending("l", in.l);
    check_ascending("a", in.a_q);
    check_ascending("b", in.b_q);
    check_riders(srs, in);
    // upload_queries sized the gathered bases for it (one buffer per query); a reused upload
    // too, for the same input.
    const bool beside = h_beside_tiles(in);
    if (beside)  // nothing in it yet: reserving keeps nothing
        ws.gathered.reserve(in.l.nsig + in.a_q.nsig + in.b_q.nsig);
    const bool g2 = in.b_q.npoints != 0;
    streamed_view v{{{(srs.resident & CUZK_CUDA_SEC_L) ? srs.l.get() : nullptr, srs.host_l, srs.nl},
                     {(srs.resident & CUZK_CUDA_SEC_A) ? srs.a.get() : nullptr, srs.host_a, srs.na},
                     {(srs.resident & CUZK_CUDA_SEC_B_G1) ? srs.b_g1.get() : nullptr, srs.host_b_g1, srs.nb}},
                    {(srs.resident & CUZK_CUDA_SEC_B_G2) ? srs.b_g2.get() : nullptr, srs.host_b_g2, srs.nb2},
                    {},
                    tile,
                    false};
    v.any_host = v.g1[0].dev == nullptr || v.g1[1].dev == nullptr || v.g1[2].dev == nullptr || (g2 && v.g2.dev == nullptr);
    {
        pass_target own{};
        for (int f = 0; f < 3; f++) {
            own.q[f] = qs.q[f];
            own.bitmap[f] = ws.bitmaps.get() + qs.woff[f];
            own.sig_idx[f] = ws.sig_idx.get() + qs.soff[f];
            own.sig_scalars[f] = ws.sig_scalars.get() + qs.soff[f];
            // Beside ΣH every query keeps its gathered bases until ΣH is done; in turn each
            // query's Pippenger follows its pass, so they share one buffer.
            own.gathered[f] = ws.gathered.get() + (beside ? qs.soff[f] : 0);
        }
        own.gathered2 = ws.gathered2.get();
        own.ret = ws.ret.get();
        own.ret2 = ws.ret2.get();
        v.targets.push_back(own);
    }
    std::vector<target_sums> sums(1 + in.nriders);
    point_t h;
    {
        // The riders' buffers, freed on the main stream once the passes are done with them.
        std::vector<std::unique_ptr<rider_buffers>> riders;
        for (size_t k = 0; k < in.nriders; k++)
            riders.emplace_back(new rider_buffers(in.riders[k], ws.nret(), s));
        if (!riders.empty()) {
            s.sync();  // allocated, before the copy stream writes them
            for (size_t k = 0; k < in.nriders; k++)
                v.targets.push_back(riders[k]->upload(ws, in.riders[k]));
            ev[UPLOADED].record(ws.copy);  // the riders' uploads too
        }
        CUDA_OK(cudaStreamWaitEvent(s, ev[UPLOADED]));
        ev[BEGIN].record(s);
        s.sync();  // stage H's coefficients and the queries are on the device
        h = beside ? sparse_beside(ws, srs, v, g2, plan.nh, sums) : sparse_in_turn(ws, srs, v, g2, plan.nh, sums);
        s.sync();
    }
    release_pool(ws.gpu, s);  // for the next proof's stage H
    ws.h_domain = 0;
    write_point(out.h, h);
    write_sums(out, qs.q, sums[0], ws.nret(), g2);
    for (size_t k = 0; k < in.nriders; k++) {
        const cuzk_cuda_rider& r = in.riders[k];
        const cuzk_cuda_sparse* q[3] = {&r.l, &r.a_q, &r.b_q};
        write_sums(*r.out, q, sums[k + 1], ws.nret(), g2);
    }
    ev[END].record(s);
    s.sync();

    out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] = elapsed_ms(ev[START], ev[UPLOADED]);
    // The G1 passes over the bases (ones and gathers; in turn, their Pippengers too) and the G2
    // pass with its Pippengers, for the proof and its riders; beside ΣH, these spans overlap
    // PH_MSM_H.
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
