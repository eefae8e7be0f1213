// The sparse stage of a partition proof: the G1 and G2 multi-scalar multiplications over
// device-resident SRS bases. Scalars equal to one are summed by affine rounds in G1 (sum_ones.cuh)
// and by sppark's bitmap-driven batch addition in G2; the remaining ("significant") scalars go
// through sppark's Pippenger over bases gathered by index, the dense H through the one-pass
// big-MSM (msm_big.cuh). A dense query (most scalars significant: a PoSt witness) is one
// Pippenger over its bases with all its scalars instead: gathering nearly every base would copy
// the section once more.
#ifndef CUZK_CUDA_SPARSE_CUH
#define CUZK_CUDA_SPARSE_CUH

#include <algorithm>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "cuzk_cuda.h"
#include "faults.cuh"
#include "kernels.cuh"
#include "msm_big.cuh"
#include "pippenger.cuh"
#include "raii.cuh"
#include "sum_ones.cuh"
#include "types.cuh"
#include "workspace.cuh"

namespace cuzk {

inline void check_sparse(const char* what, const cuzk_cuda_sparse& q, size_t nbases)
{
    std::string w = what;
    if (q.npoints > nbases)
        throw invalid(w + ": " + std::to_string(q.npoints) + " points but the SRS has " + std::to_string(nbases));
    if (q.npoints >= (1ull << 31))
        throw invalid(w + ": too many points");
    if (q.dense != nullptr) {
        if (q.ones_words != 0 || q.nsig != 0)
            throw invalid(w + ": a dense query carries no ones bitmap and no significant list");
        return;
    }
    if (q.ones_words % 32 != 0 || q.ones_words * 32 < q.npoints)
        throw invalid(w + ": ones bitmap of " + std::to_string(q.ones_words) + " words does not cover " +
                      std::to_string(q.npoints) + " points in whole 1024-bit chunks");
    if (q.npoints != 0 && q.ones == nullptr)
        throw invalid(w + ": ones bitmap is NULL");
    if (q.nsig != 0 && (q.sig_idx == nullptr || q.sig_scalars == nullptr))
        throw invalid(w + ": significant scalars are NULL");
    if (q.nsig > q.npoints)
        throw invalid(w + ": more significant scalars than points");
    for (size_t k = 0; k < q.nsig; k++)
        if (q.sig_idx[k] >= q.npoints)
            throw invalid(w + ": significant index " + std::to_string(q.sig_idx[k]) + " out of range");
}

// Joins a helper thread however the scope is left (an exception must not meet a joinable thread).
struct joined_thread {
    std::thread t;
    ~joined_thread()
    {
        if (t.joinable())
            t.join();
    }
};

// The sparse stage's CUDA events (ws.ev from 8 on; stage H uses 0..7). START and UPLOADED bracket
// the queries' upload on the copy stream; BEGIN marks the sparse stage's start on the main stream.
// The gather and MSM of query f (L, A, B_G1) use SIG + 4f .. SIG + 4f + 3: gather start, gather
// end, MSM start, MSM end.
namespace sparse_ev {
enum : int { START = 0, UPLOADED = 1, BATCH_G1 = 2, BATCH_G2 = 3, SIG = 4, H_START = 16, H_END = 17,
             B2_START = 18, B2_END = 19, BEGIN = 20, END = 21 };
}

// The three queries of one sparse stage (L, A, B_G1; B reused for B_G2), where each query's
// bitmap words and significant scalars start in the workspace's device buffers, and a dense
// query's scalars (else NULL; also in the streamed mode, which uploads them one at a time).
struct sparse_queries {
    const cuzk_cuda_sparse* q[3];
    const affine_t* bases[3];
    size_t woff[3], soff[3];
    const fr_t* dense[3];
};

inline bool is_dense(const cuzk_cuda_sparse& q)
{
    return q.dense != nullptr;
}

// Whether a streamed proof runs ΣH beside its passes over the tiles (stream.cuh): asked for, and
// no query dense (a dense query uploads its scalars through the pinned slots on the thread that
// walks the passes, so in turn only). Beside, every query keeps its gathered bases until ΣH is
// done; in turn they share one buffer.
inline bool h_beside_tiles(const cuzk_cuda_prove_in& in)
{
    return (in.flags & CUZK_CUDA_STREAMED) != 0 && (in.flags & CUZK_CUDA_H_BESIDE_TILES) != 0 && !is_dense(in.l) &&
           !is_dense(in.a_q) && !is_dense(in.b_q);
}

inline bool same_arrays(const cuzk_cuda_sparse& x, const cuzk_cuda_sparse& y)
{
    return x.ones == y.ones && x.ones_words == y.ones_words && x.npoints == y.npoints && x.sig_idx == y.sig_idx &&
           x.sig_scalars == y.sig_scalars && x.nsig == y.nsig && x.dense == y.dense;
}

// A partition's L, A, B queries against the SRS (B serves B_G1 and B_G2); `who` prefixes the
// messages ("" for the proof's own).
inline void check_queries(const std::string& who, const cuzk_cuda_srs& srs, const cuzk_cuda_sparse* const q[3])
{
    check_sparse((who + "l").c_str(), *q[0], srs.nl);
    check_sparse((who + "a").c_str(), *q[1], srs.na);
    check_sparse((who + "b_g1").c_str(), *q[2], srs.nb);
    check_sparse((who + "b_g2").c_str(), *q[2], srs.nb2);
}

// The bitmaps, significant indices and significant scalars of queries q (L, A, B) uploaded one
// after the other into `bitmaps`, `sig_idx` and `sig_scalars` on the copy stream through the
// pinned slots; woff / soff get where each query's words and significant entries start. Returns
// once the host arrays are read.
inline void upload_query_lists(cuzk_cuda_workspace& ws, const cuzk_cuda_sparse* const q[3], uint32_t* bitmaps,
                               uint32_t* sig_idx, fr_t* sig_scalars, size_t woff[3], size_t soff[3])
{
    size_t w = 0, k = 0;
    for (int f = 0; f < 3; f++) {
        woff[f] = w;
        soff[f] = k;
        upload_staged(ws, bitmaps + w, q[f]->ones, q[f]->ones_words * sizeof(uint32_t));
        upload_staged(ws, sig_idx + k, q[f]->sig_idx, q[f]->nsig * sizeof(uint32_t));
        upload_staged(ws, sig_scalars + k, q[f]->sig_scalars, q[f]->nsig * sizeof(fr_t));
        w += q[f]->ones_words;
        k += q[f]->nsig;
    }
}

// Stage queries: check the L, A, B queries against the SRS, size the workspace's buffers for them
// and upload their bitmaps and significant (index, scalar) lists on the copy stream through the
// pinned slots (between START and UPLOADED). Needs no kernel, so a lane runs it before it takes
// the device's MSM gate, beside the other lane's MSMs. Returns once the host arrays are read.
inline void upload_queries(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in)
{
    const cuzk_cuda_sparse* q[3] = {&in.l, &in.a_q, &in.b_q};
    check_queries("", srs, q);
    ws.gpu.select();
    uploaded_queries& up = ws.queries;
    up.ready = false;
    ws.early.ready = false;  // its significant scalars are overwritten
    // A streamed proof uploads each dense query's scalars just before its Pippenger instead
    // (stream.cuh: one query's at a time).
    const bool dense_now = (in.flags & CUZK_CUDA_STREAMED) == 0;
    size_t words = 0, nsig = 0, max_sig = 0, ndense = 0;
    for (auto* x : q) {
        words += x->ones_words;
        nsig += x->nsig;
        max_sig = std::max<size_t>(max_sig, x->nsig);
        ndense += is_dense(*x) && dense_now ? x->npoints : 0;
    }
    // Fitted, not only grown: after a PoSt (dense) a PoRep proof (sparse) would otherwise find
    // the dense scalars still held, and the other way round, neither counted by its plan. A
    // buffer made smaller costs a cudaFree (it waits for the device), on a change of circuit only.
    ws.bitmaps.fit(words);
    ws.sig_idx.fit(nsig);
    ws.sig_scalars.fit(nsig);
    ws.dense.fit(ndense);
    ws.gathered.fit(h_beside_tiles(in) ? nsig : max_sig);
    ws.ret.reserve(3 * ws.nret());
    ws.gathered2.fit(in.b_q.nsig);
    ws.ret2.reserve(ws.nret());
    timing_event* ev = ws.ev + 8;
    ev[sparse_ev::START].record(ws.copy);
    for (int f = 0; f < 3; f++)
        up.q[f] = *q[f];
    upload_query_lists(ws, q, ws.bitmaps.get(), ws.sig_idx.get(), ws.sig_scalars.get(), up.woff, up.soff);
    for (size_t f = 0, d = 0; f < 3; f++) {
        up.doff[f] = d;
        if (is_dense(*q[f]) && dense_now) {
            upload_staged(ws, ws.dense.get() + d, q[f]->dense, q[f]->npoints * sizeof(fr_t));
            d += q[f]->npoints;
        }
    }
    ev[sparse_ev::UPLOADED].record(ws.copy);
    up.flags = in.flags;
    up.ready = true;
}

// Whether `up` was read from the same query arrays as `in` names.
inline bool same_queries(const uploaded_queries& up, const cuzk_cuda_prove_in& in)
{
    return same_arrays(up.q[0], in.l) && same_arrays(up.q[1], in.a_q) && same_arrays(up.q[2], in.b_q);
}

// `in`'s queries where `up` placed them in ws's buffers.
inline sparse_queries view_of(const cuzk_cuda_workspace& ws, const uploaded_queries& up, const cuzk_cuda_srs& srs,
                              const cuzk_cuda_prove_in& in)
{
    sparse_queries qs{{&in.l, &in.a_q, &in.b_q}, {srs.l.get(), srs.a.get(), srs.b_g1.get()}, {}, {}, {}};
    for (int f = 0; f < 3; f++) {
        qs.woff[f] = up.woff[f];
        qs.soff[f] = up.soff[f];
        qs.dense[f] = is_dense(*qs.q[f]) && (up.flags & CUZK_CUDA_STREAMED) == 0 ? ws.dense.get() + up.doff[f] : nullptr;
    }
    return qs;
}

// The sparse stage's view of the uploaded queries; uploads them first unless the last
// upload_queries on this workspace read the same arrays for this input.
inline sparse_queries take_queries(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in)
{
    const uploaded_queries& up = ws.queries;
    // (A dense query's scalars go up with the others only when not streamed.)
    if (!(up.ready && same_queries(up, in) && ((up.flags ^ in.flags) & CUZK_CUDA_STREAMED) == 0))
        upload_queries(ws, srs, in);
    ws.queries.ready = false;  // one sparse stage per upload
    return view_of(ws, up, srs, in);
}

// B_G2's significant scalars on the side stream, from a second host thread (so the host-side
// halves of the G1 and G2 Pippengers overlap; distinct kernel instantiations, so their device
// work counters differ): their bases gathered, or with `dense` B's scalars over all npoints
// bases. Starts once the uploads are done; the caller joins `side`.
inline void start_b_g2_sig(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const sparse_queries& qs, size_t nsig_b2,
                           const fr_t* dense, size_t npoints, point2_t& b2_sig, std::exception_ptr& side_error,
                           joined_thread& side)
{
    const uint32_t* idx = ws.sig_idx.get() + qs.soff[2];
    const fr_t* sc = ws.sig_scalars.get() + qs.soff[2];
    timing_event* ev = ws.ev + 8;
    side.t = std::thread([&ws, &srs, &b2_sig, &side_error, idx, sc, nsig_b2, dense, npoints, ev] {
        try {
            ws.gpu.select();
            CUDA_OK(cudaStreamWaitEvent(ws.side, ev[sparse_ev::UPLOADED]));
            ev[sparse_ev::B2_START].record(ws.side);
            if (dense != nullptr) {
                ws.side.sync();
                b2_sig = pippenger<bucket2_t, point2_t, affine2_t>(ws.gpu, srs.b_g2.get(), dense, npoints);
            } else {
                cuzk_gather<12><<<grid_for(ws.gpu.sm_count(), nsig_b2), 256, 0, ws.side>>>(
                    reinterpret_cast<uint4*>(ws.gathered2.get()), reinterpret_cast<const uint4*>(srs.b_g2.get()), idx,
                    (uint32_t)nsig_b2);
                CUDA_OK(cudaGetLastError());
                ws.side.sync();
                b2_sig = pippenger<bucket2_t, point2_t, affine2_t>(ws.gpu, ws.gathered2.get(), sc, nsig_b2);
            }
            ev[sparse_ev::B2_END].record(ws.side);
        } catch (...) {
            side_error = std::current_exception();
        }
    });
}

// The H MSM's size from which the one-pass big-MSM beats sppark's Pippenger on the H200 (slower
// at 2^24 before the buckets were balanced). 22-bit windows (12 windows): 0.74x sppark at 2^26,
// 0.72x at 2^27, against 0.77x and 0.76x with 20 bits (BENCHMARKS.md, 2026-12-03).
constexpr size_t MSM_BIG_MIN_POINTS = (size_t)1 << 25;
constexpr uint32_t MSM_BIG_WINDOW = 22;

// The dense H MSM: the one-pass big-MSM above MSM_BIG_MIN_POINTS, else sppark's Pippenger. The
// scalars are spent after it (the big-MSM takes them out of Montgomery form in place; a failed
// proof is proved again from stage H).
inline point_t msm_dense_h(const gpu_t& gpu, const affine_t* d_points, fr_t* d_scalars, size_t n)
{
    if (n <= MSM_BIG_MIN_POINTS)
        return pippenger<bucket_t, point_t, affine_t>(gpu, d_points, d_scalars, n);
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)gpu);
    return msm_big::msm(gpu, d_points, d_scalars, n, MSM_BIG_WINDOW, nullptr, msm_big::AFFINE, true);
}

// ΣH over nh coefficients; with `fold`, one Pippenger over [h bases | gathered L sig bases |
// gathered B_G1 sig bases] and [H coefficients | L sig | r·B_G1 sig] (the extra scalars overwrite
// the spent b and c evaluations behind the H coefficients).
inline point_t msm_h(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                     const sparse_queries& qs, size_t nh, bool fold)
{
    const gpu_t& gpu = ws.gpu;
    stream_t& s = ws.stream;
    point_t hsum;
    hsum.inf();
    if (!fold) {
        ws.hcat.release();  // a folding proof's (e.g. PoRep's before a PoSt): not in this plan
        if (nh != 0) {
            s.sync();
            hsum = msm_dense_h(gpu, srs.h.get(), ws.abc.get(), nh);
        }
        return hsum;
    }
    const size_t nl = in.l.nsig, nb = in.b_q.nsig, nfold = nl + nb;
    // Headroom: the significant count moves a little from proof to proof; a buffer over twice
    // this proof's (a larger circuit's) is made anew.
    const size_t cap = ws.hcat.capacity();
    bool remade = false;
    if (cap < nh + nfold || cap > 2 * (nh + nfold + nfold / 4)) {
        ws.hcat.release();
        ws.hcat.reserve(nh + nfold + nfold / 4);
        remade = true;
    }
    if (remade || ws.hcat_srs != srs.id || ws.hcat_n != nh) {
        CUDA_OK(cudaMemcpyAsync(ws.hcat.get(), srs.h.get(), nh * sizeof(affine_t), cudaMemcpyDeviceToDevice, s));
        ws.hcat_srs = srs.id;
        ws.hcat_n = nh;
    }
    fr_t* sc = ws.abc.get() + nh;
    if (nl != 0) {
        cuzk_gather<6><<<grid_for(gpu.sm_count(), nl), 256, 0, s>>>(
            reinterpret_cast<uint4*>(ws.hcat.get() + nh), reinterpret_cast<const uint4*>(qs.bases[0]),
            ws.sig_idx.get() + qs.soff[0], (uint32_t)nl);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpyAsync(sc, ws.sig_scalars.get() + qs.soff[0], nl * sizeof(fr_t), cudaMemcpyDeviceToDevice, s));
    }
    if (nb != 0) {
        cuzk_gather<6><<<grid_for(gpu.sm_count(), nb), 256, 0, s>>>(
            reinterpret_cast<uint4*>(ws.hcat.get() + nh + nl), reinterpret_cast<const uint4*>(qs.bases[2]),
            ws.sig_idx.get() + qs.soff[2], (uint32_t)nb);
        CUDA_OK(cudaGetLastError());
        fr_raw r;
        memcpy(&r, in.r, sizeof(r));
        cuzk_scale<<<grid_for(gpu.sm_count(), nb), 256, 0, s>>>(sc + nl, ws.sig_scalars.get() + qs.soff[2], r, nb);
        CUDA_OK(cudaGetLastError());
    }
    s.sync();
    return msm_dense_h(gpu, ws.hcat.get(), ws.abc.get(), nh + nfold);
}

// Pippenger over query f's gathered significant bases, gathered on `s` (events SIG + 4f ..); a
// dense query's over all its bases.
inline point_t msm_significant(cuzk_cuda_workspace& ws, stream_t& s, const sparse_queries& qs, int f, size_t nsig)
{
    const gpu_t& gpu = ws.gpu;
    timing_event* e = ws.ev + 8 + sparse_ev::SIG + 4 * f;
    e[0].record(s);
    if (qs.dense[f] != nullptr) {
        e[1].record(s);
        s.sync();
        e[2].record(s);
        point_t r = pippenger<bucket_t, point_t, affine_t>(gpu, qs.bases[f], qs.dense[f], qs.q[f]->npoints);
        e[3].record(s);
        return r;
    }
    if (nsig != 0) {
        cuzk_gather<6><<<grid_for(gpu.sm_count(), nsig), 256, 0, s>>>(
            reinterpret_cast<uint4*>(ws.gathered.get()), reinterpret_cast<const uint4*>(qs.bases[f]),
            ws.sig_idx.get() + qs.soff[f], (uint32_t)nsig);
        CUDA_OK(cudaGetLastError());
    }
    e[1].record(s);
    s.sync();
    e[2].record(s);
    point_t r = pippenger<bucket_t, point_t, affine_t>(gpu, ws.gathered.get(), ws.sig_scalars.get() + qs.soff[f], nsig);
    e[3].record(s);
    return r;
}

// What one sparse stage computes, decided from its input and stage H's domain n (2^lg_domain
// when its H-independent part runs beside stage H, before the domain is on the workspace).
struct sparse_plan {
    bool fold;
    size_t nh;  // H coefficients for ΣH (0: the caller sums H)
};

inline sparse_plan plan_sparse(const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in, size_t n)
{
    const bool want_h = (in.flags & CUZK_CUDA_SKIP_MSM_H) == 0;
    if (want_h && n == 0)
        throw invalid("the sparse stage needs the H stage's result first");
    if (want_h && srs.nh < n - 1)
        throw invalid("SRS has " + std::to_string(srs.nh) + " h points, the domain needs " + std::to_string(n - 1));
    sparse_plan p;
    p.nh = want_h ? n - 1 : 0;
    // Folding needs room for the extra scalars behind the H coefficients (the b and c
    // evaluations are spent by then: 3n slots in all).
    p.fold = want_h && (in.flags & CUZK_CUDA_FOLD) != 0 && (in.flags & CUZK_CUDA_STREAMED) == 0 && !is_dense(in.l) &&
             !is_dense(in.b_q) && p.nh + in.l.nsig + in.b_q.nsig <= 3 * n;
    return p;
}

// The sparse stage's work that needs no H, in flight: B_G2's significant scalars on the side
// thread, the batch additions' per-warp partial sums on their way to the host. Not movable: the
// side thread writes b2_sig and side_error.
struct sparse_rest {
    std::vector<bucket_t> partial;
    std::vector<bucket2_t> partial2;
    point2_t b2_sig;
    std::exception_ptr side_error;
    joined_thread side;
    bool b2_on_side = false;
    sparse_rest() { b2_sig.inf(); }
    sparse_rest(const sparse_rest&) = delete;
    sparse_rest& operator=(const sparse_rest&) = delete;
};

// B_G2's significant scalars (a dense B's all) by Pippenger on the side thread.
inline void start_b_g2(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                       const sparse_queries& qs, sparse_rest& rest)
{
    const size_t nsig_b2 = in.b_q.nsig;
    rest.b2_on_side = nsig_b2 != 0 || (qs.dense[2] != nullptr && in.b_q.npoints != 0);
    if (rest.b2_on_side)
        start_b_g2_sig(ws, srs, qs, nsig_b2, qs.dense[2], in.b_q.npoints, rest.b2_sig, rest.side_error, rest.side);
}

// From how many bases of its largest query the sums of ones run by affine rounds: on the H200 they
// took 0.83x sppark's batch addition's time over 2^26 and 2^27 bases, 0.96x over 2^24 and 5x over
// 2^20 (fixed costs: the lists' counts come back to the host; `cuzk-gpu ones-bench`, BENCHMARKS.md).
constexpr size_t ONES_ROUNDS_MIN_POINTS = (size_t)1 << 24;

// The G1 sums of ones by affine rounds (sum_ones.cuh) into ws.ret; false where the device cannot
// lend the rounds' memory (~4.5 GB at the 32 GiB shape), nothing then written.
inline bool sum_ones_by_rounds(cuzk_cuda_workspace& ws, stream_t& s, const sparse_queries& qs)
{
    const size_t nret = ws.nret();
    const uint32_t* bits[3];
    size_t words[3], npoints[3];
    for (int f = 0; f < 3; f++) {
        bits[f] = ws.bitmaps.get() + qs.woff[f];
        words[f] = qs.q[f]->ones_words;
        npoints[f] = is_dense(*qs.q[f]) ? 0 : qs.q[f]->npoints;  // no bitmap: its ones are in its Pippenger
    }
    try {
        ones::lists_t lists(ws.gpu, s, bits, words, npoints);
        ones::summer_t summer(ws.gpu, s, std::max({lists.count[0], lists.count[1], lists.count[2]}));
        for (int f = 0; f < 3; f++)
            if (npoints[f] != 0)
                summer.sum(qs.bases[f], lists.idx->get() + lists.off(f), lists.count[f],
                           reinterpret_cast<bucket_h*>(ws.ret.get() + f * nret), nret);
        return true;
    } catch (const cuda_error& e) {
        if (e.code() != -(int)cudaErrorMemoryAllocation)
            throw;
        (void)cudaGetLastError();  // not sticky: clear it for the calls that follow
        return false;
    }
}

// The sums of the G1 bases whose scalar is one (L, A, B_G1) as partial sums in ws.ret (nret per
// query): by affine rounds from ONES_ROUNDS_MIN_POINTS up or when the flags ask, else (and where
// the rounds' memory is not there: slower, never a failed proof) by sppark's batch addition.
inline void sum_ones_g1(cuzk_cuda_workspace& ws, stream_t& s, const cuzk_cuda_prove_in& in, const sparse_queries& qs)
{
    size_t largest = 0;
    for (int f = 0; f < 3; f++)
        largest = std::max<size_t>(largest, is_dense(*qs.q[f]) ? 0 : qs.q[f]->npoints);
    const bool rounds = (in.flags & CUZK_CUDA_ONES_ROUNDS) != 0 ||
                        ((in.flags & CUZK_CUDA_ONES_SPPARK) == 0 && largest >= ONES_ROUNDS_MIN_POINTS);
    if (largest == 0)  // every query dense (or empty): no ones to sum
        return;
    if (rounds && sum_ones_by_rounds(ws, s, qs))
        return;
    const size_t nret = ws.nret();
    for (int f = 0; f < 3; f++)
        if (qs.q[f]->npoints != 0 && !is_dense(*qs.q[f]))
            batch_add<bucket_t, affine_h, bucket_h>(s, ws.gpu, ws.ret.get() + f * nret, qs.bases[f],
                                                    (uint32_t)qs.q[f]->npoints, ws.bitmaps.get() + qs.woff[f]);
}

// Queues on `s` the sums of the bases whose scalar is one (L, A, B_G1; B_G2), their partial sums
// copied to the host (the G1 lists are made first: the host waits for their counts).
inline void launch_batch_adds(cuzk_cuda_workspace& ws, stream_t& s, const cuzk_cuda_srs& srs,
                              const cuzk_cuda_prove_in& in, const sparse_queries& qs, sparse_rest& rest)
{
    using namespace sparse_ev;
    const gpu_t& gpu = ws.gpu;
    timing_event* ev = ws.ev + 8;
    const size_t nret = ws.nret();
    sum_ones_g1(ws, s, in, qs);
    rest.partial.resize(3 * nret);
    CUDA_OK(cudaMemcpyAsync(rest.partial.data(), ws.ret.get(), 3 * nret * sizeof(bucket_t), cudaMemcpyDeviceToHost, s));
    ev[BATCH_G1].record(s);
    rest.partial2.resize(nret);
    if (in.b_q.npoints != 0 && !is_dense(in.b_q)) {
        batch_add<bucket2_t, affine2_h, bucket2_h>(s, gpu, ws.ret2.get(), srs.b_g2.get(), (uint32_t)in.b_q.npoints,
                                                   ws.bitmaps.get() + qs.woff[2]);
        CUDA_OK(cudaMemcpyAsync(rest.partial2.data(), ws.ret2.get(), nret * sizeof(bucket2_t), cudaMemcpyDeviceToHost, s));
    }
    ev[BATCH_G2].record(s);
}

// The sums of the bases whose scalar is one, from the batch additions' per-warp partial sums:
// nret per G1 query (a query of no points, or a dense one, sums to infinity), and B_G2's when
// `g2` ran (B not dense).
inline void write_ones(cuzk_cuda_prove_out& out, const cuzk_cuda_sparse* const q[3], const std::vector<bucket_t>& partial,
                       size_t nret, bool g2, const std::vector<bucket2_t>& partial2)
{
    cuzk_cuda_g1* ones_out[3] = {&out.l_ones, &out.a_ones, &out.b_ones};
    for (int f = 0; f < 3; f++) {
        point_t sum;
        sum.inf();
        if (q[f]->npoints != 0 && !is_dense(*q[f]))
            sum = sum_up(&partial[f * nret], nret);
        write_point(*ones_out[f], sum);
    }
    point2_t sum2;
    sum2.inf();
    if (g2 && !is_dense(*q[2]))
        sum2 = sum_up(partial2);
    write_point(out.b2_ones, sum2);
}

// The significant scalars of L, A, B_G1 by Pippenger (L and B_G1 only when not folded into ΣH);
// then the batch additions' partial sums added up on the host, and B_G2's side thread joined.
inline void finish_rest(cuzk_cuda_workspace& ws, stream_t& s, const cuzk_cuda_prove_in& in, const sparse_queries& qs,
                        const sparse_plan& plan, sparse_rest& rest, cuzk_cuda_prove_out& out)
{
    cuzk_cuda_g1* sig_out[3] = {&out.l_sig, &out.a_sig, &out.b_sig};
    for (int f = 0; f < 3; f++)
        write_point(*sig_out[f], msm_significant(ws, s, qs, f, (plan.fold && f != 1) ? 0 : qs.q[f]->nsig));

    s.sync();
    const size_t nret = ws.nret();
    write_ones(out, qs.q, rest.partial, nret, in.b_q.npoints != 0, rest.partial2);

    if (rest.side.t.joinable())
        rest.side.t.join();
    if (rest.side_error)
        std::rethrow_exception(rest.side_error);
    ws.side.sync();
    write_point(out.b2_sig, rest.b2_sig);
}

// The phase times of the work that needs no H (batch additions, gathers, Pippengers), from its
// events.
inline void rest_timings(cuzk_cuda_workspace& ws, bool b2_on_side, cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    timing_event* ev = ws.ev + 8;
    out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] = elapsed_ms(ev[START], ev[UPLOADED]);
    out.ms[CUZK_CUDA_PH_BATCH_ADD] = elapsed_ms(ev[BEGIN], ev[BATCH_G1]);
    out.ms[CUZK_CUDA_PH_BATCH_ADD_G2] = elapsed_ms(ev[BATCH_G1], ev[BATCH_G2]);
    float gather = 0;
    for (int f = 0; f < 3; f++)
        gather += elapsed_ms(ev[SIG + 4 * f], ev[SIG + 4 * f + 1]);
    out.ms[CUZK_CUDA_PH_GATHER] = gather;
    out.ms[CUZK_CUDA_PH_MSM_L] = elapsed_ms(ev[SIG + 2], ev[SIG + 3]);
    out.ms[CUZK_CUDA_PH_MSM_A] = elapsed_ms(ev[SIG + 6], ev[SIG + 7]);
    out.ms[CUZK_CUDA_PH_MSM_B_G1] = elapsed_ms(ev[SIG + 10], ev[SIG + 11]);
    out.ms[CUZK_CUDA_PH_MSM_B_G2] = b2_on_side ? elapsed_ms(ev[B2_START], ev[B2_END]) : 0.0f;
}

// The sparse stage's H-independent work (everything but ΣH) on the workspace's `rest` stream,
// from a second host thread while stage H runs on this one (`prove_beside_h`): the queries are
// uploaded before a, b, c, so the batch additions and the small Pippengers take SMs the upload
// leaves idle instead of following ΣH (stage H stages a, b, c on the workspace's own host threads,
// so the Pippengers' window sums on the device's pool do not delay the upload). Sets PH_EARLY to its span from the queries' upload on.
inline void rest_beside_h(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                          const sparse_queries& qs, const sparse_plan& plan, cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    ws.gpu.select();
    stream_t& s = ws.rest;
    timing_event* ev = ws.ev + 8;
    CUDA_OK(cudaStreamWaitEvent(s, ev[UPLOADED]));
    ev[BEGIN].record(s);
    sparse_rest rest;
    launch_batch_adds(ws, s, srs, in, qs, rest);
    start_b_g2(ws, srs, in, qs, rest);
    finish_rest(ws, s, in, qs, plan, rest, out);
    ev[END].record(s);
    s.sync();
    rest_timings(ws, rest.b2_on_side, out);
    out.ms[CUZK_CUDA_PH_EARLY] = elapsed_ms(ev[START], ev[END]);
}

// ΣH alone, after rest_beside_h did the rest of the sparse stage for the same input.
inline void sigma_h_after_early(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                                cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    uploaded_queries& up = ws.early;
    up.ready = false;  // one sparse stage per early part
    if (!(up.flags == in.flags && same_queries(up, in)))
        throw invalid("the sparse stage's input is not the one whose other MSMs ran beside stage H");
    const sparse_plan plan = plan_sparse(srs, in, ws.h_domain);
    ws.gpu.select();
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;
    const sparse_queries qs = view_of(ws, up, srs, in);
    ev[H_START].record(s);
    write_point(out.h, msm_h(ws, srs, in, qs, plan.nh, plan.fold));
    ev[H_END].record(s);
    s.sync();
    ws.h_domain = 0;  // the H coefficients are spent (the folded scalars overwrote their tail)
    out.ms[CUZK_CUDA_PH_MSM_H] = elapsed_ms(ev[H_START], ev[H_END]);
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = out.ms[CUZK_CUDA_PH_MSM_H];
}

// Stage sparse: the queries uploaded (by stage queries, or here); B_G2's significant scalars start on the side stream; the
// one-scalar bases of L, A, B_G1 (and B_G2) summed by batch addition; ΣH (optionally with the
// significant L and r·B_G1 scalars folded in); the other significant scalars by Pippenger;
// the batch additions' per-warp partial sums added up on the host. After a STAGE_EARLY run
// (everything but ΣH done beside stage H), ΣH alone.
inline void stage_sparse(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                         cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    if (ws.early.ready) {
        sigma_h_after_early(ws, srs, in, out);
        return;
    }
    const sparse_plan plan = plan_sparse(srs, in, ws.h_domain);
    ws.gpu.select();
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;

    const sparse_queries qs = take_queries(ws, srs, in);
    CUDA_OK(cudaStreamWaitEvent(s, ev[UPLOADED]));
    ev[BEGIN].record(s);
    sparse_rest rest;
    start_b_g2(ws, srs, in, qs, rest);
    launch_batch_adds(ws, s, srs, in, qs, rest);
    ev[H_START].record(s);
    write_point(out.h, msm_h(ws, srs, in, qs, plan.nh, plan.fold));
    ev[H_END].record(s);
    finish_rest(ws, s, in, qs, plan, rest, out);
    ev[END].record(s);
    s.sync();
    ws.h_domain = 0;  // the H coefficients are spent (the folded scalars overwrote their tail)
    rest_timings(ws, rest.b2_on_side, out);
    out.ms[CUZK_CUDA_PH_MSM_H] = elapsed_ms(ev[H_START], ev[H_END]);
    // The upload and the stage's own span, without any wait between them (the MSM gate).
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] + elapsed_ms(ev[BEGIN], ev[END]);
    out.ms[CUZK_CUDA_PH_EARLY] = 0.0f;
}

} // namespace cuzk

#endif
