// The GPU half of a Groth16 partition proof, as two stages on a workspace: stage H (a, b, c
// uploaded or evaluated from the recorded circuit, H = (A·B − C)/Z through sppark's NTTs), then
// the sparse stage: the G1 and G2 multi-scalar multiplications over device-resident SRS bases.
// Scalars equal to one are summed by sppark's bitmap-driven batch addition; the remaining
// ("significant") scalars go through sppark's Pippenger over bases gathered by index, the dense H
// through the one-pass big-MSM (msm_big.cuh). The kernels are in kernels.cuh, what a device keeps
// between proofs in workspace.cuh. Everything runs on the workspace's streams or on sppark's
// per-device streams (never the legacy default stream). Called only from groth16.cu, which turns
// exceptions into status codes.
#ifndef CUZK_CUDA_PROVE_CUH
#define CUZK_CUDA_PROVE_CUH

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "cuzk_cuda.h"
#include "faults.cuh"
#include "kernels.cuh"
#include "msm_big.cuh"
#include "raii.cuh"
#include "types.cuh"
#include "workspace.cuh"

namespace cuzk {

// H coefficients in place in `a` (natural order; the last one is dropped by the caller), the way
// bellperson's EvaluationDomain computes them: per vector iNTT and coset NTT (g = 7), then
// pointwise a·b − c times 1/Z(g), coset iNTT. The orders avoid bit reversals except one inside
// the last transform. `to_coset` runs per vector as soon as that vector is uploaded.
inline void to_coset(stream_t& s, fr_t* x, uint32_t lg)
{
    using IO = NTT::InputOutputOrder;
    NTT::Base_dev_ptr(s, x, lg, IO::NR, NTT::Direction::inverse, NTT::Type::standard);
    NTT::Base_dev_ptr(s, x, lg, IO::RN, NTT::Direction::forward, NTT::Type::coset);
}

// Blocks of 256 threads for an n-element grid-stride kernel: enough to cover n, at most 8 per SM.
inline unsigned grid_for(size_t sm_count, size_t n)
{
    return (unsigned)std::min<size_t>((n + 255) / 256, sm_count * 8);
}

inline void finish_h(stream_t& s, fr_t* a, fr_t* b, fr_t* c, uint32_t lg, const uint64_t z_inv[4])
{
    fr_raw z;
    memcpy(&z, z_inv, sizeof(z));
    size_t n = (size_t)1 << lg;
    cuzk_h_pointwise<<<grid_for(s.sm_count(), n), 256, 0, s>>>(a, b, c, z, n);
    CUDA_OK(cudaGetLastError());
    NTT::Base_dev_ptr(s, a, lg, NTT::InputOutputOrder::NN, NTT::Direction::inverse, NTT::Type::coset);
}

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

// sppark Pippenger over device-resident points and scalars (Montgomery form). Synchronous.
template<class bucket, class point, class affine>
point pippenger(const gpu_t& gpu, const affine* d_points, const fr_t* d_scalars, size_t n)
{
    point out;
    out.inf();
    if (n == 0)
        return out;
    using msm_type = msm_t<bucket, point, affine, scalar_t>;
    msm_owner<msm_type> msm{gpu, new msm_type{nullptr, n, sizeof(affine), gpu.id()}};
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)gpu);
    RustError e = msm.msm->invoke(out, dev_ptr_t<affine>{const_cast<affine*>(d_points), n}, n,
                                  dev_ptr_t<scalar_t>{const_cast<scalar_t*>(d_scalars), n}, true);
    if (e.code != 0) {
        std::string msg = e.message != nullptr ? e.message : "sppark MSM failed";
        free(e.message);
        throw sppark_error{e.code, "MSM of " + std::to_string(n) + " points: " + msg};
    }
    return out;
}

template<class point, class out_t> void write_point(out_t& dst, const point& p)
{
#ifndef __CUDA_ARCH__
    static_assert(sizeof(point) == sizeof(out_t), "point layout");
#endif
    memcpy(&dst, &p, sizeof(dst));
}

// Launch the bitmap-driven batch addition (cooperative) over bases[0..npoints).
template<class bucket, class affine_m, class bucket_m>
void batch_add(stream_t& s, const gpu_t& gpu, bucket* ret, const void* bases, uint32_t npoints,
               const uint32_t* bitmap)
{
    typedef void (*fn_t)(bucket_m*, const affine_m*, uint32_t, const uint32_t*, bool, uint32_t);
    fn_t fn = batch_addition<bucket, affine_m>;
    bucket_m* r = reinterpret_cast<bucket_m*>(ret);
    const affine_m* pts = reinterpret_cast<const affine_m*>(bases);
    bool accumulate = false;
    uint32_t sid = 0;
    s.launch_coop(fn, launch_params_t{dim3(gpu.sm_count()), dim3(BATCH_ADD_BLOCK_SIZE), 0}, r, pts, npoints,
                  bitmap, accumulate, sid);
}

inline void check_sparse(const char* what, const cuzk_cuda_sparse& q, size_t nbases)
{
    std::string w = what;
    if (q.npoints > nbases)
        throw invalid(w + ": " + std::to_string(q.npoints) + " points but the SRS has " + std::to_string(nbases));
    if (q.npoints >= (1ull << 31))
        throw invalid(w + ": too many points");
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

// Stage H: a, b, c uploaded on the copy stream (zero-padded to the domain); each vector's
// iNTT + coset NTT starts on the compute stream as soon as it has arrived; then H. ΣH runs in
// the sparse stage, which may fold more scalars into it.
inline void stage_h(cuzk_cuda_workspace& ws, const cuzk_cuda_prove_in& in, cuzk_cuda_prove_out& out)
{
    const gpu_t& gpu = ws.gpu;
    if (in.lg_domain > MAX_LG_DOMAIN_SIZE)
        throw invalid("domain 2^" + std::to_string(in.lg_domain) + " is larger than supported");
    const size_t n = (size_t)1 << in.lg_domain;
    const size_t m = in.constraints;
    if (m == 0 || m > n)
        throw invalid(std::to_string(m) + " constraints do not fit the domain of " + std::to_string(n));
    const cuzk_cuda_r1cs* rec = in.r1cs;
    if (rec == nullptr && (in.a == nullptr || in.b == nullptr || in.c == nullptr))
        throw invalid("a, b or c is NULL");
    if (rec != nullptr) {
        if (in.a != nullptr || in.b != nullptr || in.c != nullptr)
            throw invalid("a, b and c must be NULL with a recorded circuit");
        if (in.input == nullptr || (rec->aux != 0 && in.aux == nullptr))
            throw invalid("input or aux is NULL");
        if (rec->dev != ws.gpu.id())
            throw invalid("the recorded circuit was uploaded to another device");
        if (rec->rows != m)
            throw invalid("the recorded circuit has " + std::to_string(rec->rows) + " rows, the proof " + std::to_string(m) +
                          " constraints");
    }

    gpu.select();
    ws.h_domain = 0;
    ws.queries.ready = false;  // a new proof: its queries are uploaded after this stage
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev;
    ws.abc.reserve(3 * n);
    fr_t* dev_abc[3] = {ws.abc.get(), ws.abc.get() + n, ws.abc.get() + 2 * n};
    const void* host_abc[3] = {in.a, in.b, in.c};

    // ev: 0 start (copy), 1..3 vector uploaded (copy), 4 H ready, 5 H downloaded; with a
    // recorded circuit 1..3 mark the witness uploaded and 6..7 bracket a, b, c's evaluation.
    uint32_t bad = 0;
    std::unique_lock<std::mutex> turn{upload_turn(gpu.id())};  // the upload times start at our turn
    ev[0].record(ws.copy);
    if (rec != nullptr) {
        ws.wit.reserve(rec->inputs + rec->aux);
        ws.bad.reserve(1);
        upload_staged(ws, ws.wit.get(), in.input, rec->inputs * sizeof(fr_t));
        upload_staged(ws, ws.wit.get() + rec->inputs, in.aux, rec->aux * sizeof(fr_t));
        fault_point(CUZK_CUDA_SITE_STAGE_H, ws.copy);
        for (int i = 0; i < 3; i++)
            ev[1 + i].record(ws.copy);
        turn.unlock();
        CUDA_OK(cudaStreamWaitEvent(s, ev[3]));
        CUDA_OK(cudaMemsetAsync(ws.bad.get(), 0, sizeof(uint32_t), s));
        ev[6].record(s);
        const fr_t* w = ws.wit.get();
        for (int i = 0; i < 3; i++) {
            auto* spmv = (in.flags & CUZK_CUDA_SPMV_WARP) != 0 ? cuzk_spmv_warp : cuzk_spmv;
            spmv<<<grid_for(s.sm_count(), m), 256, 0, s>>>(dev_abc[i], rec->end[i].get(), rec->terms[i].get(),
                                                          rec->nterms[i], rec->coeffs.get(), (uint32_t)rec->ncoeffs, w,
                                                          (uint32_t)rec->inputs, w + rec->inputs, (uint32_t)rec->aux, m,
                                                          ws.bad.get());
            CUDA_OK(cudaGetLastError());
            if (m < n)
                CUDA_OK(cudaMemsetAsync(dev_abc[i] + m, 0, (n - m) * sizeof(fr_t), s));
        }
        ev[7].record(s);
        CUDA_OK(cudaMemcpyAsync(&bad, ws.bad.get(), sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        if (in.lg_domain > 0)
            for (int i = 0; i < 3; i++)
                to_coset(s, dev_abc[i], in.lg_domain);
    }
    for (int i = 0; rec == nullptr && i < 3; i++) {
        upload_staged(ws, dev_abc[i], host_abc[i], m * sizeof(fr_t));
        if (i == 0)
            fault_point(CUZK_CUDA_SITE_STAGE_H, ws.copy);
        if (m < n)
            CUDA_OK(cudaMemsetAsync(dev_abc[i] + m, 0, (n - m) * sizeof(fr_t), ws.copy));
        ev[1 + i].record(ws.copy);
        CUDA_OK(cudaStreamWaitEvent(s, ev[1 + i]));
        if (in.lg_domain > 0)
            to_coset(s, dev_abc[i], in.lg_domain);
    }
    if (turn.owns_lock())
        turn.unlock();
    if (in.lg_domain > 0)
        finish_h(s, dev_abc[0], dev_abc[1], dev_abc[2], in.lg_domain, in.z_inv);
    ev[4].record(s);
    if (in.h_out != nullptr && n > 1)
        CUDA_OK(cudaMemcpyAsync(in.h_out, dev_abc[0], (n - 1) * sizeof(fr_t), cudaMemcpyDeviceToHost, s));
    ev[5].record(s);
    s.sync();
    if (bad != 0)
        throw invalid("the recorded circuit has terms out of range of its witness");
    ws.h_domain = n;

    out.ms[CUZK_CUDA_PH_SPMV] = rec != nullptr ? elapsed_ms(ev[6], ev[7]) : 0.0f;
    out.ms[CUZK_CUDA_PH_UPLOAD] = elapsed_ms(ev[0], ev[3]);
    out.ms[CUZK_CUDA_PH_NTT] = elapsed_ms(ev[3], ev[4]);
    out.ms[CUZK_CUDA_PH_H_DOWNLOAD] = elapsed_ms(ev[4], ev[5]);
    out.ms[CUZK_CUDA_PH_TOTAL_H] = elapsed_ms(ev[0], ev[5]);
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
// bitmap words and significant scalars start in the workspace's device buffers.
struct sparse_queries {
    const cuzk_cuda_sparse* q[3];
    const affine_t* bases[3];
    size_t woff[3], soff[3];
};

inline bool same_arrays(const cuzk_cuda_sparse& x, const cuzk_cuda_sparse& y)
{
    return x.ones == y.ones && x.ones_words == y.ones_words && x.npoints == y.npoints && x.sig_idx == y.sig_idx &&
           x.sig_scalars == y.sig_scalars && x.nsig == y.nsig;
}

// Stage queries: check the L, A, B queries against the SRS, size the workspace's buffers for them
// and upload their bitmaps and significant (index, scalar) lists on the copy stream through the
// pinned slots (between START and UPLOADED). Needs no kernel, so a lane runs it before it takes
// the device's MSM gate, beside the other lane's MSMs. Returns once the host arrays are read.
inline void upload_queries(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in)
{
    const bool g2 = (in.flags & CUZK_CUDA_B_G2) != 0;
    check_sparse("l", in.l, srs.nl);
    check_sparse("a", in.a_q, srs.na);
    check_sparse("b_g1", in.b_q, srs.nb);
    if (g2)
        check_sparse("b_g2", in.b_q, srs.nb2);
    ws.gpu.select();
    uploaded_queries& up = ws.queries;
    up.ready = false;
    const cuzk_cuda_sparse* q[3] = {&in.l, &in.a_q, &in.b_q};
    size_t words = 0, nsig = 0, max_sig = 0;
    for (auto* x : q) {
        words += x->ones_words;
        nsig += x->nsig;
        max_sig = std::max<size_t>(max_sig, x->nsig);
    }
    ws.bitmaps.reserve(words);
    ws.sig_idx.reserve(nsig);
    ws.sig_scalars.reserve(nsig);
    ws.gathered.reserve(max_sig);
    ws.ret.reserve(3 * ws.nret());
    if (g2) {
        ws.gathered2.reserve(in.b_q.nsig);
        ws.ret2.reserve(ws.nret());
    }
    timing_event* ev = ws.ev + 8;
    ev[sparse_ev::START].record(ws.copy);
    size_t w = 0, k = 0;
    for (int f = 0; f < 3; f++) {
        up.q[f] = *q[f];
        up.woff[f] = w;
        up.soff[f] = k;
        upload_staged(ws, ws.bitmaps.get() + w, q[f]->ones, q[f]->ones_words * sizeof(uint32_t));
        upload_staged(ws, ws.sig_idx.get() + k, q[f]->sig_idx, q[f]->nsig * sizeof(uint32_t));
        upload_staged(ws, ws.sig_scalars.get() + k, q[f]->sig_scalars, q[f]->nsig * sizeof(fr_t));
        w += q[f]->ones_words;
        k += q[f]->nsig;
    }
    ev[sparse_ev::UPLOADED].record(ws.copy);
    up.g2 = g2;
    up.ready = true;
}

// The sparse stage's view of the uploaded queries; uploads them first unless the last
// upload_queries on this workspace read the same arrays for this input.
inline sparse_queries take_queries(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in)
{
    const uploaded_queries& up = ws.queries;
    const bool g2 = (in.flags & CUZK_CUDA_B_G2) != 0;
    if (!(up.ready && up.g2 == g2 && same_arrays(up.q[0], in.l) && same_arrays(up.q[1], in.a_q) &&
          same_arrays(up.q[2], in.b_q)))
        upload_queries(ws, srs, in);
    ws.queries.ready = false;  // one sparse stage per upload
    sparse_queries qs{{&in.l, &in.a_q, &in.b_q}, {srs.l.get(), srs.a.get(), srs.b_g1.get()}, {}, {}};
    for (int f = 0; f < 3; f++) {
        qs.woff[f] = up.woff[f];
        qs.soff[f] = up.soff[f];
    }
    return qs;
}

// B_G2's significant scalars on the side stream, from a second host thread (so the host-side
// halves of the G1 and G2 Pippengers overlap; distinct kernel instantiations, so their device
// work counters differ). Starts once the uploads are done; the caller joins `side`.
inline void start_b_g2_sig(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const sparse_queries& qs, size_t nsig_b2,
                           point2_t& b2_sig, std::exception_ptr& side_error, joined_thread& side)
{
    const uint32_t* idx = ws.sig_idx.get() + qs.soff[2];
    const fr_t* sc = ws.sig_scalars.get() + qs.soff[2];
    timing_event* ev = ws.ev + 8;
    side.t = std::thread([&ws, &srs, &b2_sig, &side_error, idx, sc, nsig_b2, ev] {
        try {
            ws.gpu.select();
            CUDA_OK(cudaStreamWaitEvent(ws.side, ev[sparse_ev::UPLOADED]));
            ev[sparse_ev::B2_START].record(ws.side);
            cuzk_gather<12><<<grid_for(ws.gpu.sm_count(), nsig_b2), 256, 0, ws.side>>>(
                reinterpret_cast<uint4*>(ws.gathered2.get()), reinterpret_cast<const uint4*>(srs.b_g2.get()), idx,
                (uint32_t)nsig_b2);
            CUDA_OK(cudaGetLastError());
            ws.side.sync();
            b2_sig = pippenger<bucket2_t, point2_t, affine2_t>(ws.gpu, ws.gathered2.get(), sc, nsig_b2);
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
// Its bucket sums by affine rounds (msm_affine.cuh) unless the caller asks for XYZZ sums.
constexpr uint32_t MSM_BIG_SUMS = msm_big::AFFINE;

// The dense H MSM: the one-pass big-MSM above MSM_BIG_MIN_POINTS (unless the caller asked for
// sppark's), else sppark's Pippenger.
inline point_t msm_dense_h(const gpu_t& gpu, const cuzk_cuda_prove_in& in, const affine_t* d_points,
                           const fr_t* d_scalars, size_t n)
{
    if ((in.flags & CUZK_CUDA_MSM_H_SPPARK) != 0 || n <= MSM_BIG_MIN_POINTS)
        return pippenger<bucket_t, point_t, affine_t>(gpu, d_points, d_scalars, n);
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)gpu);
    const uint32_t sums = (in.flags & CUZK_CUDA_MSM_H_XYZZ) != 0 ? 0 : MSM_BIG_SUMS;
    return msm_big::msm(gpu, d_points, d_scalars, n, MSM_BIG_WINDOW, nullptr, sums);
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
        if (nh != 0) {
            s.sync();
            hsum = msm_dense_h(gpu, in, srs.h.get(), ws.abc.get(), nh);
        }
        return hsum;
    }
    const size_t nl = in.l.nsig, nb = in.b_q.nsig, nfold = nl + nb;
    size_t cap = ws.hcat.capacity();
    if (cap < nh + nfold)  // headroom: the significant count moves a little from proof to proof
        ws.hcat.reserve(nh + nfold + nfold / 4);
    if (ws.hcat.capacity() != cap || ws.hcat_srs != srs.id || ws.hcat_n != nh) {
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
    return msm_dense_h(gpu, in, ws.hcat.get(), ws.abc.get(), nh + nfold);
}

// Pippenger over query f's gathered significant bases (events SIG + 4f ..).
inline point_t msm_significant(cuzk_cuda_workspace& ws, const sparse_queries& qs, int f, size_t nsig)
{
    const gpu_t& gpu = ws.gpu;
    stream_t& s = ws.stream;
    timing_event* e = ws.ev + 8 + sparse_ev::SIG + 4 * f;
    e[0].record(s);
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

// The sparse stage's phase times from its events.
inline void sparse_timings(cuzk_cuda_workspace& ws, bool b2_on_side, cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    timing_event* ev = ws.ev + 8;
    out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] = elapsed_ms(ev[START], ev[UPLOADED]);
    out.ms[CUZK_CUDA_PH_BATCH_ADD] = elapsed_ms(ev[BEGIN], ev[BATCH_G1]);
    out.ms[CUZK_CUDA_PH_BATCH_ADD_G2] = elapsed_ms(ev[BATCH_G1], ev[BATCH_G2]);
    out.ms[CUZK_CUDA_PH_MSM_H] = elapsed_ms(ev[H_START], ev[H_END]);
    float gather = 0;
    for (int f = 0; f < 3; f++)
        gather += elapsed_ms(ev[SIG + 4 * f], ev[SIG + 4 * f + 1]);
    out.ms[CUZK_CUDA_PH_GATHER] = gather;
    out.ms[CUZK_CUDA_PH_MSM_L] = elapsed_ms(ev[SIG + 2], ev[SIG + 3]);
    out.ms[CUZK_CUDA_PH_MSM_A] = elapsed_ms(ev[SIG + 6], ev[SIG + 7]);
    out.ms[CUZK_CUDA_PH_MSM_B_G1] = elapsed_ms(ev[SIG + 10], ev[SIG + 11]);
    out.ms[CUZK_CUDA_PH_MSM_B_G2] = b2_on_side ? elapsed_ms(ev[B2_START], ev[B2_END]) : 0.0f;
    // The upload and the stage's own span, without any wait between them (the MSM gate).
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = out.ms[CUZK_CUDA_PH_UPLOAD_SPARSE] + elapsed_ms(ev[BEGIN], ev[END]);
}

// Stage sparse: the queries uploaded (by stage queries, or here); B_G2's significant scalars start on the side stream; the
// one-scalar bases of L, A, B_G1 (and B_G2) summed by batch addition; ΣH (optionally with the
// significant L and r·B_G1 scalars folded in); the other significant scalars by Pippenger;
// the batch additions' per-warp partial sums added up on the host.
inline void stage_sparse(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                         cuzk_cuda_prove_out& out)
{
    using namespace sparse_ev;
    const gpu_t& gpu = ws.gpu;
    const bool g2 = (in.flags & CUZK_CUDA_B_G2) != 0;
    const bool want_h = (in.flags & CUZK_CUDA_SKIP_MSM_H) == 0;
    const size_t n = ws.h_domain;
    if (want_h && n == 0)
        throw invalid("the sparse stage needs the H stage's result first");
    if (want_h && srs.nh < n - 1)
        throw invalid("SRS has " + std::to_string(srs.nh) + " h points, the domain needs " + std::to_string(n - 1));
    // Folding needs room for the extra scalars behind the H coefficients (the b and c
    // evaluations are spent by now: 3n slots in all).
    const size_t nh = want_h ? n - 1 : 0;
    const size_t nfold = in.l.nsig + in.b_q.nsig;
    const bool fold = want_h && (in.flags & CUZK_CUDA_FOLD) != 0 && nh + nfold <= 3 * n;

    gpu.select();
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev + 8;

    const sparse_queries qs = take_queries(ws, srs, in);
    CUDA_OK(cudaStreamWaitEvent(s, ev[UPLOADED]));
    ev[BEGIN].record(s);

    point2_t b2_sig;
    b2_sig.inf();
    std::exception_ptr side_error;
    joined_thread side;
    const size_t nsig_b2 = g2 ? in.b_q.nsig : 0;
    if (nsig_b2 != 0)
        start_b_g2_sig(ws, srs, qs, nsig_b2, b2_sig, side_error, side);

    // Σ of the bases whose scalar is one: one cooperative batch addition per query.
    const size_t nret = ws.nret();
    for (int f = 0; f < 3; f++)
        if (qs.q[f]->npoints != 0)
            batch_add<bucket_t, affine_h, bucket_h>(s, gpu, ws.ret.get() + f * nret, qs.bases[f],
                                                    (uint32_t)qs.q[f]->npoints, ws.bitmaps.get() + qs.woff[f]);
    std::vector<bucket_t> partial(3 * nret);
    CUDA_OK(cudaMemcpyAsync(partial.data(), ws.ret.get(), 3 * nret * sizeof(bucket_t), cudaMemcpyDeviceToHost, s));
    ev[BATCH_G1].record(s);
    std::vector<bucket2_t> partial2(g2 ? nret : 0);
    if (g2 && in.b_q.npoints != 0) {
        batch_add<bucket2_t, affine2_h, bucket2_h>(s, gpu, ws.ret2.get(), srs.b_g2.get(), (uint32_t)in.b_q.npoints,
                                                   ws.bitmaps.get() + qs.woff[2]);
        CUDA_OK(cudaMemcpyAsync(partial2.data(), ws.ret2.get(), nret * sizeof(bucket2_t), cudaMemcpyDeviceToHost, s));
    }
    ev[BATCH_G2].record(s);

    ev[H_START].record(s);
    write_point(out.h, msm_h(ws, srs, in, qs, nh, fold));
    ev[H_END].record(s);

    // The significant scalars of L, A, B_G1 (L and B_G1 only when not folded into ΣH).
    cuzk_cuda_g1* sig_out[3] = {&out.l_sig, &out.a_sig, &out.b_sig};
    for (int f = 0; f < 3; f++)
        write_point(*sig_out[f], msm_significant(ws, qs, f, (fold && f != 1) ? 0 : qs.q[f]->nsig));

    s.sync();
    cuzk_cuda_g1* ones_out[3] = {&out.l_ones, &out.a_ones, &out.b_ones};
    for (int f = 0; f < 3; f++) {
        point_t sum;
        sum.inf();
        if (qs.q[f]->npoints != 0)
            sum = sum_up(&partial[f * nret], nret);
        write_point(*ones_out[f], sum);
    }
    {
        point2_t sum;
        sum.inf();
        if (g2 && in.b_q.npoints != 0)
            sum = sum_up(partial2);
        write_point(out.b2_ones, sum);
    }

    if (side.t.joinable())
        side.t.join();
    if (side_error)
        std::rethrow_exception(side_error);
    ws.side.sync();
    write_point(out.b2_sig, b2_sig);
    ev[END].record(s);
    s.sync();
    ws.h_domain = 0;  // the H coefficients are spent (the folded scalars overwrote their tail)
    sparse_timings(ws, nsig_b2 != 0, out);
}

inline void prove(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                  cuzk_cuda_prove_out& out, uint32_t stages)
{
    if (srs.dev != ws.gpu.id())
        throw invalid("SRS was uploaded to another device");
    if ((stages & ~(uint32_t)(CUZK_CUDA_STAGE_H | CUZK_CUDA_STAGE_QUERIES | CUZK_CUDA_STAGE_SPARSE)) != 0 || stages == 0)
        throw invalid("unknown stages " + std::to_string(stages));
    if (stages & CUZK_CUDA_STAGE_H)
        stage_h(ws, in, out);
    if (stages & CUZK_CUDA_STAGE_QUERIES)
        upload_queries(ws, srs, in);
    if (stages & CUZK_CUDA_STAGE_SPARSE)
        stage_sparse(ws, srs, in, out);
}

} // namespace cuzk

#endif
