// Stage H of a partition proof: a, b, c uploaded (or evaluated on the device from a recorded
// circuit and its witness: the circuit on the device, or streamed from host memory in tiles of
// rows), then H = (A·B − C)/Z through sppark's NTTs, left on the device for ΣH. A streamed proof
// whose budget cannot hold the witness beside two domain slots parks C and A's coset values in
// host memory (`spill`) and holds one slot while the witness is on the device.
#ifndef CUZK_CUDA_STAGE_H_CUH
#define CUZK_CUDA_STAGE_H_CUH

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "cuzk_cuda.h"
#include "faults.cuh"
#include "kernels.cuh"
#include "ntt_split.cuh"
#include "raii.cuh"
#include "types.cuh"
#include "workspace.cuh"

namespace cuzk {

// H's coefficients, as bellperson's EvaluationDomain defines them (g = 7): A, B, C's coefficients
// by iNTT, A·B − C on the coset g·ω^i, divided by Z(g) = g^n − 1, back by coset iNTT. C is never
// taken to the coset: the coset iNTT is linear and returns any polynomial of degree < n as it
// was, so H = (cosetiNTT(A_coset·B_coset) − C) / Z(g) — the same values with one NTT fewer (C's
// coset NTT), and the coset work waits for A and B only, so C's upload hides it. The orders avoid
// bit reversals but one, of H at the end. The passes are split evenly where sppark's are not
// (ntt_split.cuh).
using IO = NTT::InputOutputOrder;

// A vector's evaluations on the domain (natural order) → on the coset (natural order).
inline void to_coset(stream_t& s, fr_t* x, uint32_t lg)
{
    stage_ntt::run(s, x, lg, IO::NR, NTT::Direction::inverse, NTT::Type::standard);
    stage_ntt::run(s, x, lg, IO::RN, NTT::Direction::forward, NTT::Type::coset);
}

// a ← the coefficients of A·B mod (X^n − g^n), bit-reversed order, from A's and B's coset
// evaluations (natural order).
inline void product_coefficients(stream_t& s, fr_t* a, const fr_t* b, uint32_t lg)
{
    size_t n = (size_t)1 << lg;
    cuzk_h_product<<<grid_for(s.sm_count(), n), 256, 0, s>>>(a, b, n);
    CUDA_OK(cudaGetLastError());
    stage_ntt::run(s, a, lg, IO::NR, NTT::Direction::inverse, NTT::Type::coset);
}

// a ← H's coefficients in natural order, from product_coefficients' a and C's evaluations on the
// domain (natural order; c comes back as C's coefficients, bit-reversed).
inline void finish_h(stream_t& s, fr_t* a, fr_t* c, uint32_t lg, const uint64_t z_inv[4])
{
    fr_raw z;
    memcpy(&z, z_inv, sizeof(z));
    size_t n = (size_t)1 << lg;
    stage_ntt::run(s, c, lg, IO::NR, NTT::Direction::inverse, NTT::Type::standard);
    cuzk_h_minus_c<<<grid_for(s.sm_count(), n), 256, 0, s>>>(a, c, z, n);
    CUDA_OK(cudaGetLastError());
    stage_ntt::bit_reverse(s, a, lg);
}

// Queues a copy of n scalars on the copy stream behind everything `s` has queued so far (the
// writer of `from`, or the last reader of `to`); ws.park_done marks its end, which `s` waits on
// (`wait_parked`) before it reads or overwrites either side.
inline void copy_behind(cuzk_cuda_workspace& ws, stream_t& s, void* to, const void* from, size_t n, cudaMemcpyKind kind)
{
    ws.park_from.record(s);
    CUDA_OK(cudaStreamWaitEvent(ws.copy, ws.park_from));
    ws.pcie.copy(to, from, n * sizeof(fr_t), kind, ws.copy);
    ws.park_done.record(ws.copy);
}

inline void wait_parked(cuzk_cuda_workspace& ws, stream_t& s)
{
    CUDA_OK(cudaStreamWaitEvent(s, ws.park_done));
}

// The lean order of a streamed stage H (the witness on the device, the circuit in tiles): with
// the witness beside ONE domain slot, C is evaluated and parked in host memory (in.spill's upper
// half), then A, taken to the coset and parked (lower half), then B, which stays. The witness
// and the circuit's tiles go back to the driver, the second slot takes their memory, A returns
// to it while B goes to the coset; the product, then C returns to the second slot (under the
// product's iNTT). Device memory: max(witness + slot + tiles, two slots), against witness + two
// slots in the plain streamed order; the price is 4 domain vectors over PCIe (two each way).
// On return `ws.abc` holds the A·B product's coefficients and `slot1` C's evaluations.
template<class Spmv>
void stage_h_lean(cuzk_cuda_workspace& ws, const cuzk_cuda_prove_in& in, Spmv& spmv_into,
                  std::unique_ptr<pool_buffer<fr_t>>& wit, std::unique_ptr<pool_buffer<uint32_t>>& tile_end,
                  std::unique_ptr<pool_buffer<uint64_t>>& tile_terms, std::unique_ptr<pool_buffer<fr_t>>& slot1)
{
    stream_t& s = ws.stream;
    const uint32_t lg = in.lg_domain;
    const size_t n = (size_t)1 << lg;
    fr_t* slot0 = ws.abc.get();
    char* host = static_cast<char*>(in.spill);
    void* host_a = host;
    void* host_c = host + n * sizeof(fr_t);
    spmv_into(2, slot0);
    copy_behind(ws, s, host_c, slot0, n, cudaMemcpyDeviceToHost);
    wait_parked(ws, s);  // A overwrites the slot
    spmv_into(0, slot0);
    if (lg > 0)
        to_coset(s, slot0, lg);
    copy_behind(ws, s, host_a, slot0, n, cudaMemcpyDeviceToHost);
    wait_parked(ws, s);  // B overwrites the slot
    spmv_into(1, slot0);
    // The witness and the tiles back to the driver before the second slot is taken (a pool
    // block of the witness's size cannot hold a slot: trimmed, its memory serves the slot).
    wit.reset();
    tile_end.reset();
    tile_terms.reset();
    release_pool(ws.gpu, s);
    slot1.reset(new pool_buffer<fr_t>(n, s));
    fr_t* a = slot1->get();
    copy_behind(ws, s, a, host_a, n, cudaMemcpyHostToDevice);  // under B's coset NTT
    if (lg > 0) {
        to_coset(s, slot0, lg);
        wait_parked(ws, s);
        cuzk_h_product<<<grid_for(s.sm_count(), n), 256, 0, s>>>(slot0, a, n);
        CUDA_OK(cudaGetLastError());
        copy_behind(ws, s, a, host_c, n, cudaMemcpyHostToDevice);  // under the product's iNTT
        stage_ntt::run(s, slot0, lg, IO::NR, NTT::Direction::inverse, NTT::Type::coset);
    } else {
        copy_behind(ws, s, a, host_c, n, cudaMemcpyHostToDevice);
    }
    wait_parked(ws, s);  // finish_h reads C
}

// Stage H: a, b, c uploaded on the copy stream (zero-padded to the domain); A's and B's coset
// work starts on the compute stream as soon as each has arrived, C's iNTT after its upload. ΣH
// runs in the sparse stage, which may fold more scalars into it.
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
        if (rec->streamed() && (in.flags & CUZK_CUDA_STREAMED) == 0)
            throw invalid("a recorded circuit kept in host memory serves streamed proofs only");
    }
    if (in.spill != nullptr && (rec == nullptr || (in.flags & CUZK_CUDA_STREAMED) == 0))
        throw invalid("spill serves streamed proofs from a recorded circuit only");

    gpu.select();
    ws.h_domain = 0;
    ws.queries.ready = false;  // a new proof: its queries are uploaded after this stage
    ws.early.ready = false;    // (or before it, by prove_beside_h, which marks them once this stage is done)
    stream_t& s = ws.stream;
    timing_event* ev = ws.ev;
    const bool streamed = (in.flags & CUZK_CUDA_STREAMED) != 0;
    // One domain slot while the witness is on the device; the second once it has gone.
    const bool lean = in.spill != nullptr;
    if (streamed) {
        // Only H's slot stays between the stages: what a resident-mode proof left on this
        // workspace goes back to the driver first.
        if (ws.abc.capacity() > n)
            ws.abc.release();
        ws.hcat.release();
        ws.wit.release();
        ws.abc.reserve(n);
    } else {
        ws.abc.fit(3 * n);  // a larger circuit's vectors: not in this proof's plan
    }
    // STREAMED: the second slot (B, then C) and the witness come from the pool and go back to it
    // when this stage returns, for the sparse stage's tiles and MSM scratch.
    // A circuit in host memory: two tiles of its rows and their terms, from the pool too.
    std::unique_ptr<pool_buffer<fr_t>> slot1, wit;
    std::unique_ptr<pool_buffer<uint32_t>> tile_end;
    std::unique_ptr<pool_buffer<uint64_t>> tile_terms;
    if (streamed) {
        if (!lean)
            slot1.reset(new pool_buffer<fr_t>(n, s));
        if (rec != nullptr)
            wit.reset(new pool_buffer<fr_t>(rec->inputs + rec->aux, s));
        if (rec != nullptr && rec->streamed()) {
            tile_end.reset(new pool_buffer<uint32_t>(2 * rec->tile_rows, s));
            tile_terms.reset(new pool_buffer<uint64_t>(2 * std::max<size_t>(rec->tile_terms, 1), s));
        }
        s.sync();  // the copy stream writes them
    }
    fr_t* dev_abc[3] = {ws.abc.get(), lean ? nullptr : streamed ? slot1->get() : ws.abc.get() + n,
                        lean ? nullptr : streamed ? slot1->get() : ws.abc.get() + 2 * n};
    const void* host_abc[3] = {in.a, in.b, in.c};

    // ev: 0 start (copy), 1..3 vector uploaded (copy), 4 H ready, 5 H downloaded; with a
    // recorded circuit 1..3 mark the witness uploaded and 6..7 bracket a, b, c's evaluation.
    uint32_t bad = 0;
    std::unique_lock<std::mutex> turn{upload_turn(gpu.id())};  // the upload times start at our turn
    ev[0].record(ws.copy);
    if (rec != nullptr) {
        fr_t* w = streamed ? wit->get() : nullptr;
        if (!streamed) {
            ws.wit.fit(rec->inputs + rec->aux);
            w = ws.wit.get();
        }
        ws.bad.reserve(1);
        upload_staged(ws, w, in.input, rec->inputs * sizeof(fr_t));
        upload_staged(ws, w + rec->inputs, in.aux, rec->aux * sizeof(fr_t));
        fault_point(CUZK_CUDA_SITE_STAGE_H, ws.copy);
        for (int i = 0; i < 3; i++)
            ev[1 + i].record(ws.copy);
        turn.unlock();
        CUDA_OK(cudaStreamWaitEvent(s, ev[3]));
        CUDA_OK(cudaMemsetAsync(ws.bad.get(), 0, sizeof(uint32_t), s));
        ev[6].record(s);
        // a, b or c (matrix i) into its slot: in one launch from a circuit on the device, else
        // tile by tile from host memory, tile k + 1's copy (copy stream) overlapping tile k's rows.
        auto spmv = [&](fr_t* into, const uint32_t* end, const uint64_t* terms, uint64_t term0, uint64_t nterms, size_t rows) {
            cuzk_spmv_warp<<<grid_for(s.sm_count(), rows), 256, 0, s>>>(into, end, terms, term0, nterms, rec->coeffs.get(),
                                                                        (uint32_t)rec->ncoeffs, w, (uint32_t)rec->inputs,
                                                                        w + rec->inputs, (uint32_t)rec->aux, rows, ws.bad.get());
            CUDA_OK(cudaGetLastError());
        };
        size_t tiles = 0;
        auto spmv_into = [&](int i, fr_t* into) {
            if (!rec->streamed()) {
                spmv(into, rec->end[i].get(), rec->terms[i].get(), 0, rec->nterms[i], m);
            } else {
                const size_t tr = rec->tile_rows, tt = rec->tile_terms;
                for (size_t r0 = 0; r0 < m; r0 += tr, tiles++) {
                    const size_t len = std::min(tr, m - r0), j = tiles & 1;
                    const uint64_t t0 = r0 == 0 ? 0 : rec->host_end[i][r0 - 1], t1 = rec->host_end[i][r0 + len - 1];
                    uint32_t* end = tile_end->get() + j * tr;
                    uint64_t* terms = tile_terms->get() + j * tt;
                    CUDA_OK(cudaStreamWaitEvent(ws.copy, ws.tile_free[j]));
                    ws.pcie.copy(end, rec->host_end[i] + r0, len * sizeof(uint32_t), cudaMemcpyHostToDevice, ws.copy);
                    if (t1 > t0)
                        ws.pcie.copy(terms, rec->host_terms[i] + t0, (t1 - t0) * sizeof(uint64_t), cudaMemcpyHostToDevice, ws.copy);
                    ws.tile_ready[j].record(ws.copy);
                    CUDA_OK(cudaStreamWaitEvent(s, ws.tile_ready[j]));
                    spmv(into + r0, end, terms, t0, t1, len);
                    ws.tile_free[j].record(s);
                }
            }
            if (m < n)
                CUDA_OK(cudaMemsetAsync(into + m, 0, (n - m) * sizeof(fr_t), s));
        };
        if (lean) {
            stage_h_lean(ws, in, spmv_into, wit, tile_end, tile_terms, slot1);
            dev_abc[0] = ws.abc.get();
            dev_abc[2] = slot1->get();
        } else {
            // Two slots: C is evaluated into B's once the A·B product has consumed it.
            for (int i = 0; i < (streamed ? 2 : 3); i++)
                spmv_into(i, dev_abc[i]);
            if (in.lg_domain > 0) {
                to_coset(s, dev_abc[0], in.lg_domain);
                to_coset(s, dev_abc[1], in.lg_domain);
                product_coefficients(s, dev_abc[0], dev_abc[1], in.lg_domain);
            }
            if (streamed)
                spmv_into(2, dev_abc[2]);
        }
        ev[7].record(s);
        CUDA_OK(cudaMemcpyAsync(&bad, ws.bad.get(), sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    }
    for (int i = 0; rec == nullptr && i < 3; i++) {
        if (streamed && i == 2) {
            // C goes into B's slot: its upload waits for the A·B product queued below.
            ev[7].record(s);
            CUDA_OK(cudaStreamWaitEvent(ws.copy, ev[7]));
        }
        upload_staged(ws, dev_abc[i], host_abc[i], m * sizeof(fr_t));
        if (i == 0)
            fault_point(CUZK_CUDA_SITE_STAGE_H, ws.copy);
        if (m < n)
            CUDA_OK(cudaMemsetAsync(dev_abc[i] + m, 0, (n - m) * sizeof(fr_t), ws.copy));
        ev[1 + i].record(ws.copy);
        if (i == 2 || in.lg_domain == 0)
            continue;  // C waits for its upload below; A·B's work is queued before it is staged
        CUDA_OK(cudaStreamWaitEvent(s, ev[1 + i]));
        to_coset(s, dev_abc[i], in.lg_domain);
        if (i == 1)
            product_coefficients(s, dev_abc[0], dev_abc[1], in.lg_domain);
    }
    if (turn.owns_lock())
        turn.unlock();
    CUDA_OK(cudaStreamWaitEvent(s, ev[3]));
    if (in.lg_domain > 0)
        finish_h(s, dev_abc[0], dev_abc[2], in.lg_domain, in.z_inv);
    ev[4].record(s);
    if (in.h_out != nullptr && n > 1)
        ws.pcie.copy(in.h_out, dev_abc[0], (n - 1) * sizeof(fr_t), cudaMemcpyDeviceToHost, s);
    ev[5].record(s);
    s.sync();
    if (streamed) {
        slot1.reset();
        wit.reset();
        tile_end.reset();
        tile_terms.reset();
        release_pool(gpu, s);
    }
    if (bad != 0)
        throw invalid("the recorded circuit has terms out of range of its witness");
    ws.h_domain = n;

    out.ms[CUZK_CUDA_PH_SPMV] = rec != nullptr && !streamed ? elapsed_ms(ev[6], ev[7]) : 0.0f;
    out.ms[CUZK_CUDA_PH_UPLOAD] = elapsed_ms(ev[0], ev[3]);
    out.ms[CUZK_CUDA_PH_NTT] = elapsed_ms(ev[3], ev[4]);
    out.ms[CUZK_CUDA_PH_H_DOWNLOAD] = elapsed_ms(ev[4], ev[5]);
    out.ms[CUZK_CUDA_PH_TOTAL_H] = elapsed_ms(ev[0], ev[5]);
}

} // namespace cuzk

#endif
