// What a device keeps between proofs: a workspace (streams, reusable buffers, pinned upload
// slots, timing events), the resident SRS and recorded circuits, and the uploads that fill them.
#ifndef CUZK_CUDA_WORKSPACE_CUH
#define CUZK_CUDA_WORKSPACE_CUH

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "cuzk_cuda.h"
#include "raii.cuh"
#include "types.cuh"

inline sppark_error invalid(const std::string& what)
{
    return sppark_error{CUZK_CUDA_E_INVALID, what};
}

// sppark's MSM and msm_big allocate their scratch with cudaMallocAsync; keep freed blocks in the
// device's pool so every proof after the first reuses them instead of re-mapping (the default
// threshold hands them back to the driver at every synchronisation).
inline void keep_freed_memory(const gpu_t& gpu)
{
    cudaMemPool_t pool;
    CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
    uint64_t keep = UINT64_MAX;
    CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

// A streamed proof's phases (stage H's second slot, the tiles, ΣH's batches) take differently
// sized blocks from the device's pool one after the other; the pool keeps freed blocks but cannot
// join them for a larger request, so between the phases its unused memory goes back to the
// driver — else the sum of the phases would stay reserved, over the budget that holds each.
inline void release_pool(const gpu_t& gpu, cudaStream_t s)
{
    CUDA_OK(cudaStreamSynchronize(s));
    gpu.sync();  // sppark's streams free their scratch asynchronously
    cudaMemPool_t pool;
    CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
    CUDA_OK(cudaMemPoolTrimTo(pool, 0));
}

// The sparse queries a STAGE_QUERIES call uploaded for the next STAGE_SPARSE on the workspace:
// which arrays (the sparse stage uploads again unless its input names the same ones) and where
// each query's bitmap words and significant scalars start in bitmaps / sig_idx / sig_scalars.
struct uploaded_queries {
    bool ready = false;
    uint32_t flags = 0;  // the input's flags (B_G2: whether the B bitmap serves G2 too)
    cuzk_cuda_sparse q[3];
    size_t woff[3], soff[3], doff[3];  // doff: a dense query's scalars in `dense`
};

struct cuzk_cuda_workspace {
    const gpu_t& gpu;
    stream_t stream;
    stream_t copy;   // a, b, c and the sparse queries' uploads, overlapping kernels on `stream`
    stream_t side;   // the B_G2 query's gather, on its own host thread
    stream_t rest;   // the sparse stage's work but ΣH, beside stage H (STAGE_EARLY), from a second host thread
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
    device_buffer<fr_t> dense;  // the dense queries' scalars, one after the other
    device_buffer<bucket_t> ret;
    device_buffer<bucket2_t> ret2;
    device_buffer<fr_t> wit;       // [input | aux] of a recorded circuit's proof
    device_buffer<uint32_t> bad;   // set by cuzk_spmv on an out-of-range term
    uploaded_queries queries;
    // The queries whose sparse work but ΣH ran beside stage H (STAGE_EARLY): the next sparse
    // stage, given the same input, runs ΣH only.
    uploaded_queries early;
    // Uploads of a, b, c go through two page-locked slots: the host copies into one while the
    // copy engine reads the other.
    static const size_t SLOT_BYTES = 64 << 20;
    pinned_buffer staging;
    // The current proof's PCIe traffic (its stages' large copies), read after its sparse stage.
    pcie_meter pcie;
    // The host threads that fill the slots: the workspace's own, so that sppark's Pippengers,
    // which add up their windows on the device's pool (gpu_t), never queue ahead of them (a lone
    // proof runs its small Pippengers beside stage H: prove_beside_h).
    thread_pool_t stagers;
    event_t slot_free[2];
    // Streamed SRS tiles (stream.cuh): tile k's bases have arrived in slot k & 1 (copy stream) /
    // its slot has been read (main stream).
    event_t tile_ready[2], tile_free[2];
    // A lean stage H's vectors parked in host memory (stage_h.cuh): the main stream is past the
    // writer (copy stream waits) / the copy is done (main stream waits).
    event_t park_from, park_done;
    static const int NEVENTS = 32;
    timing_event ev[NEVENTS];

    explicit cuzk_cuda_workspace(int dev) : gpu(select_gpu(dev)), stream(gpu.id()), copy(gpu.id()), side(gpu.id()), rest(gpu.id())
    {
        keep_freed_memory(gpu);
    }
    ~cuzk_cuda_workspace()
    {
        gpu.select();
        (void)cudaStreamSynchronize(stream);
        (void)cudaStreamSynchronize(copy);
        (void)cudaStreamSynchronize(side);
        (void)cudaStreamSynchronize(rest);
        abc.release();
        hcat.release();
        bitmaps.release();
        sig_idx.release();
        sig_scalars.release();
        gathered.release();
        gathered2.release();
        dense.release();
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
               gathered2.bytes() + dense.bytes() + ret.bytes() + ret2.bytes() + wit.bytes();
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
    // CUZK_CUDA_SEC_* bits of the sections copied to the device; the others are read from
    // these page-locked host arrays, tile by tile (STREAMED proofs only).
    uint32_t resident = CUZK_CUDA_SEC_ALL;
    const affine_t *host_h = nullptr, *host_l = nullptr, *host_a = nullptr, *host_b_g1 = nullptr;
    const affine2_t* host_b_g2 = nullptr;
    bool all_resident() const { return resident == CUZK_CUDA_SEC_ALL; }
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
    // Streamed (tile_rows > 0): the matrices stay in the caller's (page-locked) host memory and a
    // proof copies them tile by tile; tile_terms is the most terms any tile of any matrix holds.
    const uint32_t* host_end[3] = {nullptr, nullptr, nullptr};
    const uint64_t* host_terms[3] = {nullptr, nullptr, nullptr};
    size_t tile_rows = 0, tile_terms = 0;
    bool streamed() const { return tile_rows != 0; }
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

// One SRS section: copied to the device when `bit` is in `resident`, else left in host memory.
template<class T>
void place_bases(stream_t& s, uint32_t resident, uint32_t bit, device_buffer<T>& dst, const T*& host, size_t& n_dst,
                 const void* src, size_t n)
{
    if (resident & bit) {
        upload_bases(s, dst, n_dst, src, n);
        return;
    }
    if (n != 0 && src == nullptr)
        throw invalid("SRS base array is NULL");
    host = static_cast<const T*>(src);
    n_dst = n;
}

inline cuzk_cuda_srs* srs_new(cuzk_cuda_workspace& ws, const void* h, size_t nh, const void* l, size_t nl,
                              const void* a, size_t na, const void* b_g1, size_t nb, const void* b_g2,
                              size_t nb2, uint32_t resident, float* upload_ms)
{
    if ((resident & ~(uint32_t)CUZK_CUDA_SEC_ALL) != 0)
        throw invalid("unknown SRS sections " + std::to_string(resident));
    ws.gpu.select();
    std::unique_ptr<cuzk_cuda_srs> srs{new cuzk_cuda_srs(ws.gpu.id())};
    srs->resident = resident;
    ws.ev[0].record(ws.stream);
    place_bases(ws.stream, resident, CUZK_CUDA_SEC_H, srs->h, srs->host_h, srs->nh, h, nh);
    place_bases(ws.stream, resident, CUZK_CUDA_SEC_L, srs->l, srs->host_l, srs->nl, l, nl);
    place_bases(ws.stream, resident, CUZK_CUDA_SEC_A, srs->a, srs->host_a, srs->na, a, na);
    place_bases(ws.stream, resident, CUZK_CUDA_SEC_B_G1, srs->b_g1, srs->host_b_g1, srs->nb, b_g1, nb);
    place_bases(ws.stream, resident, CUZK_CUDA_SEC_B_G2, srs->b_g2, srs->host_b_g2, srs->nb2, b_g2, nb2);
    ws.ev[1].record(ws.stream);
    ws.stream.sync();
    if (upload_ms != nullptr)
        *upload_ms = elapsed_ms(ws.ev[0], ws.ev[1]);
    return srs.release();
}

inline cuzk_cuda_r1cs* r1cs_new(cuzk_cuda_workspace& ws, const cuzk_cuda_matrix* abc, size_t rows, const void* coeffs,
                                size_t ncoeffs, size_t inputs, size_t aux, size_t tile_rows, float* upload_ms)
{
    if (rows == 0 || rows >= (1ull << 32) || ncoeffs < 2 || ncoeffs >= (1ull << 32) || coeffs == nullptr)
        throw invalid("recorded circuit: " + std::to_string(rows) + " rows, " + std::to_string(ncoeffs) + " coefficients");
    if (inputs == 0 || inputs >= (1u << 31) || aux >= (1u << 31))
        throw invalid("recorded circuit: " + std::to_string(inputs) + " inputs, " + std::to_string(aux) + " aux");
    if (tile_rows % 32 != 0 || tile_rows >= (1ull << 32))
        throw invalid("recorded circuit: tiles of " + std::to_string(tile_rows) + " rows (a multiple of 32 below 2^32, or 0)");
    for (int q = 0; q < 3; q++)
        if (abc[q].end == nullptr || (abc[q].nterms != 0 && abc[q].terms == nullptr) || abc[q].end[rows - 1] != abc[q].nterms)
            throw invalid("recorded circuit: matrix " + std::to_string(q) + " is NULL or its row ends do not match its terms");
    ws.gpu.select();
    std::unique_ptr<cuzk_cuda_r1cs> r{new cuzk_cuda_r1cs(ws.gpu.id())};
    r->rows = rows;
    r->ncoeffs = ncoeffs;
    r->inputs = inputs;
    r->aux = aux;
    if (tile_rows != 0) {
        // A tile is copied as the terms between its first row's start and its last row's end:
        // those must be in order within the matrix (the rows inside are checked on the device).
        r->tile_rows = tile_rows;
        for (int q = 0; q < 3; q++) {
            uint64_t prev = 0;
            for (size_t r0 = 0; r0 < rows; r0 += tile_rows) {
                const uint64_t stop = abc[q].end[std::min(rows, r0 + tile_rows) - 1];
                if (stop < prev)
                    throw invalid("recorded circuit: matrix " + std::to_string(q) + "'s row ends decrease before row " +
                                  std::to_string(std::min(rows, r0 + tile_rows)));
                r->tile_terms = std::max<size_t>(r->tile_terms, stop - prev);
                prev = stop;
            }
            r->host_end[q] = abc[q].end;
            r->host_terms[q] = abc[q].terms;
            r->nterms[q] = abc[q].nterms;
        }
    }
    ws.ev[0].record(ws.stream);
    for (int q = 0; q < 3 && tile_rows == 0; q++) {
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

// A device's turn to upload a proof's a, b, c (or witness): one workspace at a time. Two lanes
// uploading at once share the PCIe link and the host threads that fill the pinned slots, and both
// finish late (at 2^26 ~0.43 s each, against 0.13 s alone); one after the other, the first
// lane's NTTs start at once. Devices past the table share a turn (slower, never wrong).
inline std::mutex& upload_turn(int dev)
{
    static std::mutex turns[64];
    return turns[(unsigned)dev % 64];
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
        ws.stagers.par_map((len + piece - 1) / piece, 1, [&](size_t i) {
            size_t o = i * piece;
            memcpy(buf + o, from + o, std::min(piece, len - o));
        });
        ws.pcie.copy(static_cast<char*>(dst) + off, buf, len, cudaMemcpyHostToDevice, ws.copy);
        ws.slot_free[k & 1].record(ws.copy);
    }
}

} // namespace cuzk

#endif
