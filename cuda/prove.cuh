// The GPU half of a Groth16 partition proof: H = (A·B − C)/Z through sppark's NTTs, and the G1
// multi-scalar multiplications over device-resident SRS bases. Scalars equal to one are summed
// by sppark's bitmap-driven batch addition; the remaining ("significant") scalars go through
// sppark's Pippenger over bases gathered by index. Everything runs on the workspace's stream or
// on sppark's per-device streams (never the legacy default stream). Called only from
// groth16.cu, which turns exceptions into status codes.
#ifndef CUZK_CUDA_PROVE_CUH
#define CUZK_CUDA_PROVE_CUH

#include <algorithm>
#include <atomic>
#include <exception>
#include <initializer_list>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "cuzk_cuda.h"
#include "faults.cuh"
#include "msm_big.cuh"
#include "raii.cuh"
#include "types.cuh"

struct fr_raw {
    uint32_t v[8];
};

// a[i] = (a[i]·b[i] − c[i]) · z_inv over the coset evaluations.
__launch_bounds__(256) __global__
void cuzk_h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, fr_raw z_inv_raw, size_t n)
{
#ifdef __CUDA_ARCH__
    fr_t z_inv;
    memcpy(&z_inv, &z_inv_raw, sizeof(z_inv));
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n;
         i += (size_t)blockDim.x * gridDim.x) {
        fr_t x = a[i] * b[i];
        x -= c[i];
        a[i] = x * z_inv;
    }
#endif
}

// One term of a recorded matrix (cuzk_cuda_matrix) times its witness value, w = [input | aux];
// an out-of-range variable or coefficient flags *bad and counts as zero.
__device__ __forceinline__ fr_t spmv_term(uint64_t x, const fr_t* coeffs, uint32_t ncoeffs, const fr_t* input,
                                          uint32_t ninput, const fr_t* aux, uint32_t naux, uint32_t* bad)
{
    fr_t v;
#ifdef __CUDA_ARCH__
    v = fr_t::one(1);  // zero
    uint32_t var = (uint32_t)x, c = (uint32_t)(x >> 32), i = var & 0x7fffffffu;
    const bool is_input = (var & 0x80000000u) != 0;
    if (i >= (is_input ? ninput : naux) || c >= ncoeffs) {
        *bad = 1;
        return v;
    }
    const fr_t w = is_input ? input[i] : aux[i];
    if (c == 0)
        v = w;
    else if (c == 1)
        v -= w;
    else
        v = w * coeffs[c];
#endif
    return v;
}

// out[r] = Σ coefficient · value over row r; a malformed row (its end beyond the terms or
// before its start) flags *bad and is left empty.
__device__ __forceinline__ void spmv_row(size_t r, fr_t* out, const uint32_t* end, const uint64_t* terms,
                                         uint64_t nterms, const fr_t* coeffs, uint32_t ncoeffs, const fr_t* input,
                                         uint32_t ninput, const fr_t* aux, uint32_t naux, uint32_t* bad)
{
#ifdef __CUDA_ARCH__
    uint64_t start = r == 0 ? 0 : end[r - 1], stop = end[r];
    if (stop > nterms || start > stop) {
        *bad = 1;
        stop = start;
    }
    fr_t acc = fr_t::one(1);  // zero
    for (uint64_t t = start; t < stop; t++)
        acc += spmv_term(terms[t], coeffs, ncoeffs, input, ninput, aux, naux, bad);
    out[r] = acc;
#endif
}

// a, b or c of a recorded matrix, one row per thread (field sums are exact, so both kernels give
// the same values whatever their order of addition).
__launch_bounds__(256) __global__
void cuzk_spmv(fr_t* out, const uint32_t* end, const uint64_t* terms, uint64_t nterms, const fr_t* coeffs,
               uint32_t ncoeffs, const fr_t* input, uint32_t ninput, const fr_t* aux, uint32_t naux, size_t rows,
               uint32_t* bad)
{
    for (size_t r = threadIdx.x + (size_t)blockIdx.x * blockDim.x; r < rows; r += (size_t)blockDim.x * gridDim.x)
        spmv_row(r, out, end, terms, nterms, coeffs, ncoeffs, input, ninput, aux, naux, bad);
}

// The same by warps (CUZK_CUDA_SPMV_WARP). One row per thread makes a warp wait for its longest
// row while its 32 threads read 32 rows' terms at once (uncoalesced). Here a warp takes 32
// consecutive rows, whose terms are contiguous, and walks them 32 terms at a time: lane l
// evaluates term base + l, a segmented warp scan sums the values row by row, and the last lane
// of each row in the chunk adds the row's sum to the row's accumulator in shared memory. A group
// with a malformed row takes the row-per-lane path (same flags, same values).
constexpr uint32_t SPMV_WARPS = 8;  // warps per 256-thread block

__launch_bounds__(256) __global__
void cuzk_spmv_warp(fr_t* out, const uint32_t* end, const uint64_t* terms, uint64_t nterms, const fr_t* coeffs,
                    uint32_t ncoeffs, const fr_t* input, uint32_t ninput, const fr_t* aux, uint32_t naux,
                    size_t rows, uint32_t* bad)
{
#ifdef __CUDA_ARCH__
    constexpr uint32_t FULL = 0xffffffffu, LIMBS = sizeof(fr_t) / sizeof(uint32_t);
    __shared__ uint32_t sums[SPMV_WARPS][32][LIMBS];  // row j of the group: sums[w][j]
    __shared__ int32_t heads[SPMV_WARPS][32];          // the row that starts at chunk lane l, or -1
    const uint32_t lane = threadIdx.x % 32, w = threadIdx.x / 32;
    const size_t groups = (rows + 31) / 32;
    // g depends on the warp only: every lane of a warp runs the same iterations (shuffles).
    for (size_t g = blockIdx.x * (size_t)SPMV_WARPS + w; g < groups; g += (size_t)gridDim.x * SPMV_WARPS) {
        const size_t r = g * 32 + lane;
        const bool real = r < rows;
        uint64_t start = 0, stop = 0;
        if (real) {
            start = r == 0 ? 0 : end[r - 1];
            stop = end[r];
        }
        if (__any_sync(FULL, real && (stop > nterms || start > stop))) {
            if (real)
                spmv_row(r, out, end, terms, nterms, coeffs, ncoeffs, input, ninput, aux, naux, bad);
            continue;
        }
        // Valid rows chain (row r + 1 starts where row r stops): the group's terms are [from, to).
        const uint32_t last = (uint32_t)min((size_t)31, rows - 1 - g * 32);
        const uint64_t from = __shfl_sync(FULL, start, 0), to = __shfl_sync(FULL, stop, last);
        if (!real)
            start = stop = to;
        const fr_t zero = fr_t::one(1);
        zero.store(sums[w][lane]);
        int32_t row = 0;  // the group row (lane index) of this lane's term
        for (uint64_t base = from; base < to; base += 32) {
            heads[w][lane] = -1;
            __syncwarp();
            if (start < stop && start >= base && start - base < 32)  // non-empty rows start at distinct terms
                heads[w][start - base] = (int32_t)lane;
            __syncwarp();
            // The last row starting at or before this lane's term (prefix max), else the row the
            // previous chunk ended in.
            int32_t h = heads[w][lane];
            for (uint32_t d = 1; d < 32; d <<= 1) {
                const int32_t o = __shfl_up_sync(FULL, h, d);
                if (lane >= d)
                    h = max(h, o);
            }
            const int32_t carried = __shfl_sync(FULL, row, 31);
            row = h >= 0 ? h : carried;
            const uint64_t t = base + lane;
            fr_t v = t < to ? spmv_term(terms[t], coeffs, ncoeffs, input, ninput, aux, naux, bad) : zero;
            // Inclusive scan within rows (rows never decrease along the lanes).
            for (uint32_t d = 1; d < 32; d <<= 1) {
                fr_t o;
                for (uint32_t k = 0; k < LIMBS; k++)
                    o[k] = __shfl_up_sync(FULL, v[k], d);
                const int32_t orow = __shfl_up_sync(FULL, row, d);
                if (lane >= d && orow == row)
                    v += o;
            }
            const int32_t next = __shfl_down_sync(FULL, row, 1);
            if (lane == 31 || next != row) {  // the row's last lane in this chunk: one per row
                fr_t acc;
                for (uint32_t k = 0; k < LIMBS; k++)
                    acc[k] = sums[w][row][k];
                acc += v;
                acc.store(sums[w][row]);
            }
            __syncwarp();
        }
        if (real) {
            fr_t res;
            for (uint32_t k = 0; k < LIMBS; k++)
                res[k] = sums[w][lane][k];
            out[r] = res;
        }
        __syncwarp();
    }
#endif
}

// out[i] = in[i] · k (the significant B scalars times r, folded into the H MSM).
__launch_bounds__(256) __global__
void cuzk_scale(fr_t* out, const fr_t* in, fr_raw k_raw, size_t n)
{
#ifdef __CUDA_ARCH__
    fr_t k;
    memcpy(&k, &k_raw, sizeof(k));
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = in[i] * k;
#endif
}

// out[k] = bases[idx[k]] for affine points of W 16-byte words (G1: 6, G2: 12).
template<int W> __launch_bounds__(256) __global__
void cuzk_gather(uint4* out, const uint4* bases, const uint32_t* idx, uint32_t n)
{
    for (uint32_t k = threadIdx.x + blockIdx.x * blockDim.x; k < n; k += blockDim.x * gridDim.x) {
        const uint4* src = bases + (size_t)idx[k] * W;
        uint4* dst = out + (size_t)k * W;
        uint4 w[W];
        #pragma unroll
        for (int i = 0; i < W; i++)
            w[i] = src[i];
        #pragma unroll
        for (int i = 0; i < W; i++)
            dst[i] = w[i];
    }
}

static_assert(sizeof(affine_t) == 6 * sizeof(uint4), "G1 affine point is six 16-byte words");
static_assert(sizeof(affine2_h) == 12 * sizeof(uint4), "G2 affine point is twelve 16-byte words");

inline sppark_error invalid(const std::string& what)
{
    return sppark_error{CUZK_CUDA_E_INVALID, what};
}

struct cuzk_cuda_workspace {
    const gpu_t& gpu;
    stream_t stream;
    stream_t copy;   // a, b, c uploads, overlapping the NTTs on `stream`
    stream_t side;   // the B_G2 query's gather, on its own host thread
    device_buffer<fr_t> abc;
    size_t h_domain = 0;  // domain whose H coefficients abc holds (0: none)
    // h bases followed by the gathered L and B_G1 bases of a folded H MSM. The h part is copied
    // from the SRS only when the SRS (or the domain) changes.
    device_buffer<affine_t> hcat;
    uint64_t hcat_srs = 0;
    size_t hcat_n = 0;
    device_buffer<uint32_t> bitmaps;
    device_buffer<uint32_t> sig_idx;
    device_buffer<fr_t> sig_scalars;
    device_buffer<affine_t> gathered;
    device_buffer<affine2_t> gathered2;
    device_buffer<bucket_t> ret;
    device_buffer<bucket2_t> ret2;
    device_buffer<fr_t> wit;       // [input | aux] of a recorded circuit's proof
    device_buffer<uint32_t> bad;   // set by cuzk_spmv on an out-of-range term
    // Uploads of a, b, c go through two page-locked slots: the host copies into one while the
    // copy engine reads the other.
    static const size_t SLOT_BYTES = 64 << 20;
    pinned_buffer staging;
    event_t slot_free[2];
    static const int NEVENTS = 32;
    timing_event ev[NEVENTS];

    explicit cuzk_cuda_workspace(int dev) : gpu(select_gpu(dev)), stream(gpu.id()), copy(gpu.id()), side(gpu.id())
    {
        // sppark's MSM allocates its scratch with cudaMallocAsync; keep freed blocks in the
        // device's pool so every proof after the first reuses them instead of re-mapping.
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
        uint64_t keep = UINT64_MAX;
        CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    }
    ~cuzk_cuda_workspace()
    {
        gpu.select();
        (void)cudaStreamSynchronize(stream);
        (void)cudaStreamSynchronize(copy);
        (void)cudaStreamSynchronize(side);
        abc.release();
        hcat.release();
        bitmaps.release();
        sig_idx.release();
        sig_scalars.release();
        gathered.release();
        gathered2.release();
        ret.release();
        ret2.release();
        wit.release();
        bad.release();
        staging.release();
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, gpu.cid()) == cudaSuccess)
            (void)cudaMemPoolTrimTo(pool, 0);
    }
    uint64_t bytes() const
    {
        return abc.bytes() + hcat.bytes() + bitmaps.bytes() + sig_idx.bytes() + sig_scalars.bytes() + gathered.bytes() +
               gathered2.bytes() + ret.bytes() + ret2.bytes() + wit.bytes();
    }
    // Number of per-warp partial sums one batch addition writes (G1 and G2 alike).
    size_t nret() const { return (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ; }
};

struct cuzk_cuda_srs {
    int dev;
    uint64_t id;  // unique per upload: workspaces key their copy of the h bases by it
    device_buffer<affine_t> h, l, a, b_g1;
    device_buffer<affine2_t> b_g2;
    size_t nh = 0, nl = 0, na = 0, nb = 0, nb2 = 0;
    explicit cuzk_cuda_srs(int d) : dev(d)
    {
        static std::atomic<uint64_t> next{1};
        id = next++;
    }
};

struct cuzk_cuda_r1cs {
    int dev;
    device_buffer<uint32_t> end[3];
    device_buffer<uint64_t> terms[3];
    uint64_t nterms[3] = {0, 0, 0};
    device_buffer<fr_t> coeffs;
    size_t rows = 0, ncoeffs = 0, inputs = 0, aux = 0;
    explicit cuzk_cuda_r1cs(int d) : dev(d) {}
};

namespace cuzk {

template<class T>
void upload_bases(stream_t& s, device_buffer<T>& dst, size_t& n_dst, const void* src, size_t n)
{
    if (n != 0 && src == nullptr)
        throw invalid("SRS base array is NULL");
    dst.reserve(n);
    n_dst = n;
    if (n != 0)
        CUDA_OK(cudaMemcpyAsync(dst.get(), src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}

inline cuzk_cuda_srs* srs_new(cuzk_cuda_workspace& ws, const void* h, size_t nh, const void* l, size_t nl,
                              const void* a, size_t na, const void* b_g1, size_t nb, const void* b_g2,
                              size_t nb2, float* upload_ms)
{
    ws.gpu.select();
    std::unique_ptr<cuzk_cuda_srs> srs{new cuzk_cuda_srs(ws.gpu.id())};
    ws.ev[0].record(ws.stream);
    upload_bases(ws.stream, srs->h, srs->nh, h, nh);
    upload_bases(ws.stream, srs->l, srs->nl, l, nl);
    upload_bases(ws.stream, srs->a, srs->na, a, na);
    upload_bases(ws.stream, srs->b_g1, srs->nb, b_g1, nb);
    upload_bases(ws.stream, srs->b_g2, srs->nb2, b_g2, nb2);
    ws.ev[1].record(ws.stream);
    ws.stream.sync();
    if (upload_ms != nullptr)
        *upload_ms = elapsed_ms(ws.ev[0], ws.ev[1]);
    return srs.release();
}

inline cuzk_cuda_r1cs* r1cs_new(cuzk_cuda_workspace& ws, const cuzk_cuda_matrix* abc, size_t rows, const void* coeffs,
                                size_t ncoeffs, size_t inputs, size_t aux, float* upload_ms)
{
    if (rows == 0 || rows >= (1ull << 32) || ncoeffs < 2 || ncoeffs >= (1ull << 32) || coeffs == nullptr)
        throw invalid("recorded circuit: " + std::to_string(rows) + " rows, " + std::to_string(ncoeffs) + " coefficients");
    if (inputs == 0 || inputs >= (1u << 31) || aux >= (1u << 31))
        throw invalid("recorded circuit: " + std::to_string(inputs) + " inputs, " + std::to_string(aux) + " aux");
    for (int q = 0; q < 3; q++)
        if (abc[q].end == nullptr || (abc[q].nterms != 0 && abc[q].terms == nullptr) || abc[q].end[rows - 1] != abc[q].nterms)
            throw invalid("recorded circuit: matrix " + std::to_string(q) + " is NULL or its row ends do not match its terms");
    ws.gpu.select();
    std::unique_ptr<cuzk_cuda_r1cs> r{new cuzk_cuda_r1cs(ws.gpu.id())};
    r->rows = rows;
    r->ncoeffs = ncoeffs;
    r->inputs = inputs;
    r->aux = aux;
    ws.ev[0].record(ws.stream);
    for (int q = 0; q < 3; q++) {
        size_t unused = 0;
        upload_bases(ws.stream, r->end[q], unused, abc[q].end, rows);
        upload_bases(ws.stream, r->terms[q], unused, abc[q].terms, abc[q].nterms);
        r->nterms[q] = abc[q].nterms;
    }
    size_t unused = 0;
    upload_bases(ws.stream, r->coeffs, unused, coeffs, ncoeffs);
    ws.ev[1].record(ws.stream);
    ws.stream.sync();
    if (upload_ms != nullptr)
        *upload_ms = elapsed_ms(ws.ev[0], ws.ev[1]);
    return r.release();
}

// Host → device on the copy stream through the workspace's two pinned slots: the host threads
// fill one slot while the copy engine drains the other. Returns once every byte has left `src`.
inline void upload_staged(cuzk_cuda_workspace& ws, void* dst, const void* src, size_t bytes)
{
    const size_t slot = cuzk_cuda_workspace::SLOT_BYTES;
    ws.staging.reserve(2 * slot);
    const size_t piece = 1 << 20;
    for (size_t off = 0, k = 0; off < bytes; off += slot, k++) {
        size_t len = std::min(slot, bytes - off);
        char* buf = ws.staging.get() + (k & 1) * slot;
        CUDA_OK(cudaEventSynchronize(ws.slot_free[k & 1]));
        const char* from = static_cast<const char*>(src) + off;
        ws.gpu.par_map((len + piece - 1) / piece, 1, [&](size_t i) {
            size_t o = i * piece;
            memcpy(buf + o, from + o, std::min(piece, len - o));
        });
        CUDA_OK(cudaMemcpyAsync(static_cast<char*>(dst) + off, buf, len, cudaMemcpyHostToDevice, ws.copy));
        ws.slot_free[k & 1].record(ws.copy);
    }
}

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
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev;
    ws.abc.reserve(3 * n);
    fr_t* dev_abc[3] = {ws.abc.get(), ws.abc.get() + n, ws.abc.get() + 2 * n};
    const void* host_abc[3] = {in.a, in.b, in.c};

    // ev: 0 start (copy), 1..3 vector uploaded (copy), 4 H ready, 5 H downloaded; with a
    // recorded circuit 1..3 mark the witness uploaded and 6..7 bracket a, b, c's evaluation.
    ev[0].record(ws.copy);
    uint32_t bad = 0;
    if (rec != nullptr) {
        ws.wit.reserve(rec->inputs + rec->aux);
        ws.bad.reserve(1);
        upload_staged(ws, ws.wit.get(), in.input, rec->inputs * sizeof(fr_t));
        upload_staged(ws, ws.wit.get() + rec->inputs, in.aux, rec->aux * sizeof(fr_t));
        fault_point(CUZK_CUDA_SITE_STAGE_H, ws.copy);
        for (int i = 0; i < 3; i++)
            ev[1 + i].record(ws.copy);
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

// The sparse stage's CUDA events (ws.ev from 8 on; stage H uses 0..7). The gather and MSM of
// query f (L, A, B_G1) use SIG + 4f .. SIG + 4f + 3: gather start, gather end, MSM start, MSM end.
namespace sparse_ev {
enum : int { START = 0, UPLOADED = 1, BATCH_G1 = 2, BATCH_G2 = 3, SIG = 4, H_START = 16, H_END = 17,
             B2_START = 18, B2_END = 19, END = 20 };
}

// The three queries of one sparse stage (L, A, B_G1; B reused for B_G2), where each query's
// bitmap words and significant scalars start in the workspace's device buffers.
struct sparse_queries {
    const cuzk_cuda_sparse* q[3];
    const affine_t* bases[3];
    size_t woff[3], soff[3];
};

// Size the workspace's buffers for this stage's queries and upload their bitmaps and
// significant (index, scalar) lists on the main stream.
inline sparse_queries upload_queries(cuzk_cuda_workspace& ws, const cuzk_cuda_srs& srs, const cuzk_cuda_prove_in& in,
                                     bool g2)
{
    sparse_queries qs{{&in.l, &in.a_q, &in.b_q}, {srs.l.get(), srs.a.get(), srs.b_g1.get()}, {}, {}};
    size_t words = 0, nsig = 0, max_sig = 0;
    for (auto* q : qs.q) {
        words += q->ones_words;
        nsig += q->nsig;
        max_sig = std::max<size_t>(max_sig, q->nsig);
    }
    const size_t nret = ws.nret();
    ws.bitmaps.reserve(words);
    ws.sig_idx.reserve(nsig);
    ws.sig_scalars.reserve(nsig);
    ws.gathered.reserve(max_sig);
    ws.ret.reserve(3 * nret);
    if (g2) {
        ws.gathered2.reserve(in.b_q.nsig);
        ws.ret2.reserve(nret);
    }
    stream_t& s = ws.stream;
    size_t w = 0, k = 0;
    for (int f = 0; f < 3; f++) {
        const cuzk_cuda_sparse& q = *qs.q[f];
        qs.woff[f] = w;
        qs.soff[f] = k;
        if (q.ones_words != 0)
            CUDA_OK(cudaMemcpyAsync(ws.bitmaps.get() + w, q.ones, q.ones_words * sizeof(uint32_t),
                                    cudaMemcpyHostToDevice, s));
        if (q.nsig != 0) {
            CUDA_OK(cudaMemcpyAsync(ws.sig_idx.get() + k, q.sig_idx, q.nsig * sizeof(uint32_t),
                                    cudaMemcpyHostToDevice, s));
            CUDA_OK(cudaMemcpyAsync(ws.sig_scalars.get() + k, q.sig_scalars, q.nsig * sizeof(fr_t),
                                    cudaMemcpyHostToDevice, s));
        }
        w += q.ones_words;
        k += q.nsig;
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

// The dense H MSM: the one-pass big-MSM above MSM_BIG_MIN_POINTS (unless the caller asked for
// sppark's), else sppark's Pippenger.
inline point_t msm_dense_h(const gpu_t& gpu, const cuzk_cuda_prove_in& in, const affine_t* d_points,
                           const fr_t* d_scalars, size_t n)
{
    if ((in.flags & CUZK_CUDA_MSM_H_SPPARK) != 0 || n <= MSM_BIG_MIN_POINTS)
        return pippenger<bucket_t, point_t, affine_t>(gpu, d_points, d_scalars, n);
    fault_point(CUZK_CUDA_SITE_MSM, (cudaStream_t)gpu);
    return msm_big::msm(gpu, d_points, d_scalars, n, MSM_BIG_WINDOW);
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
    out.ms[CUZK_CUDA_PH_BATCH_ADD] = elapsed_ms(ev[UPLOADED], ev[BATCH_G1]);
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
    out.ms[CUZK_CUDA_PH_TOTAL_SPARSE] = elapsed_ms(ev[START], ev[END]);
}

// Stage sparse: upload the queries; B_G2's significant scalars start on the side stream; the
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
    check_sparse("l", in.l, srs.nl);
    check_sparse("a", in.a_q, srs.na);
    check_sparse("b_g1", in.b_q, srs.nb);
    if (g2)
        check_sparse("b_g2", in.b_q, srs.nb2);
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

    ev[START].record(s);
    const sparse_queries qs = upload_queries(ws, srs, in, g2);
    ev[UPLOADED].record(s);

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
    if ((stages & ~(uint32_t)(CUZK_CUDA_STAGE_H | CUZK_CUDA_STAGE_SPARSE)) != 0 || stages == 0)
        throw invalid("unknown stages " + std::to_string(stages));
    if (stages & CUZK_CUDA_STAGE_H)
        stage_h(ws, in, out);
    if (stages & CUZK_CUDA_STAGE_SPARSE)
        stage_sparse(ws, srs, in, out);
}

} // namespace cuzk

#endif
