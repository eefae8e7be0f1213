// RAII for device memory and timing events: driver code never calls cudaMalloc/cudaFree or
// cudaEventCreate/Destroy directly. Every CUDA call goes through CUDA_OK (throws on error).
#ifndef CUZK_CUDA_RAII_CUH
#define CUZK_CUDA_RAII_CUH

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>
#include <util/exception.cuh>

// Owned device allocation that only grows; reused across proofs.
template<class T> class device_buffer {
    T* ptr_ = nullptr;
    size_t cap_ = 0;

public:
    device_buffer() = default;
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    ~device_buffer() { release(); }

    // Ensure room for n elements; old contents are not kept.
    void reserve(size_t n)
    {
        if (n <= cap_)
            return;
        release();
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, n * sizeof(T));
        if (e == cudaErrorMemoryAllocation) {
            // The device's stream-ordered pool keeps the MSMs' freed scratch (up to ~20 GB at 2^27:
            // cuzk_cuda_workspace sets no release threshold) and cudaMalloc cannot use it: hand
            // the unused part back once (after the frees in flight complete) and try again.
            (void)cudaGetLastError();
            int dev = 0;
            cudaMemPool_t pool;
            CUDA_OK(cudaGetDevice(&dev));
            CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, dev));
            CUDA_OK(cudaDeviceSynchronize());
            CUDA_OK(cudaMemPoolTrimTo(pool, 0));
            e = cudaMalloc(&p, n * sizeof(T));
        }
        CUDA_OK(e);
        ptr_ = static_cast<T*>(p);
        cap_ = n;
    }
    // Room for n elements and not much more: a buffer over a quarter larger (sized for a larger
    // circuit, or for a form this proof does not use: n = 0) goes back to the driver first, so a
    // workspace holds about what the current proof's plan counts (src/prover/vram.rs), not the
    // most any proof before needed. The quarter absorbs what moves from partition to partition
    // of one circuit (its significant counts).
    void fit(size_t n)
    {
        if (cap_ > n + n / 4)
            release();
        reserve(n);
    }
    void release()
    {
        if (ptr_ != nullptr)
            (void)cudaFree(ptr_);
        ptr_ = nullptr;
        cap_ = 0;
    }
    T* get() const { return ptr_; }
    size_t capacity() const { return cap_; }
    size_t bytes() const { return cap_ * sizeof(T); }
};

// Device memory from the device's stream-ordered pool (freed blocks stay in the pool for the
// next user: see cuzk_cuda_workspace), allocated and released on `stream`, which must outlive it.
template<class T> class pool_buffer {
    T* ptr_ = nullptr;
    cudaStream_t stream_;

public:
    pool_buffer(size_t n, cudaStream_t stream) : stream_(stream)
    {
        void* p = nullptr;
        CUDA_OK(cudaMallocAsync(&p, std::max<size_t>(n, 1) * sizeof(T), stream));
        ptr_ = static_cast<T*>(p);
    }
    pool_buffer(const pool_buffer&) = delete;
    pool_buffer& operator=(const pool_buffer&) = delete;
    ~pool_buffer() { (void)cudaFreeAsync(ptr_, stream_); }
    T* get() const { return ptr_; }
};

// Owned page-locked host memory (staging for uploads); only grows.
class pinned_buffer {
    void* ptr_ = nullptr;
    size_t cap_ = 0;

public:
    pinned_buffer() = default;
    pinned_buffer(const pinned_buffer&) = delete;
    pinned_buffer& operator=(const pinned_buffer&) = delete;
    ~pinned_buffer() { release(); }
    void reserve(size_t bytes)
    {
        if (bytes <= cap_)
            return;
        release();
        CUDA_OK(cudaMallocHost(&ptr_, bytes));
        cap_ = bytes;
    }
    void release()
    {
        if (ptr_ != nullptr)
            (void)cudaFreeHost(ptr_);
        ptr_ = nullptr;
        cap_ = 0;
    }
    char* get() const { return static_cast<char*>(ptr_); }
    size_t bytes() const { return cap_; }
};

// Owned non-blocking stream of the current device at the device's highest priority: when SMs
// free up, the block scheduler starts this stream's pending blocks before those of
// default-priority streams (another lane's stage H), so the work it carries finishes first.
class priority_stream {
    cudaStream_t s_ = nullptr;

public:
    priority_stream()
    {
        int least = 0, greatest = 0;
        CUDA_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        CUDA_OK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
    }
    priority_stream(const priority_stream&) = delete;
    priority_stream& operator=(const priority_stream&) = delete;
    ~priority_stream()
    {
        if (s_ != nullptr)
            (void)cudaStreamDestroy(s_);
    }
    operator cudaStream_t() const { return s_; }
};

class timing_event {
    cudaEvent_t ev_ = nullptr;

public:
    timing_event() { CUDA_OK(cudaEventCreate(&ev_)); }
    timing_event(const timing_event&) = delete;
    timing_event& operator=(const timing_event&) = delete;
    ~timing_event()
    {
        if (ev_ != nullptr)
            (void)cudaEventDestroy(ev_);
    }
    void record(cudaStream_t s) { CUDA_OK(cudaEventRecord(ev_, s)); }
    operator cudaEvent_t() const { return ev_; }
};

inline float elapsed_ms(const timing_event& from, const timing_event& to)
{
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

// One proof's PCIe traffic, measured: the bytes each way of its large copies (SRS and circuit
// tiles, the witness or a, b, c, the queries, parked vectors) and each copy's span between two
// events on its stream. `busy_ms` is the union of the spans: the time at least one copy was
// moving data (copies on different streams overlap, so their sum would count twice). Copies are
// queued from several host threads (the passes' and ΣH's), hence the lock.
class pcie_meter {
    std::mutex m_;
    uint64_t h2d_ = 0, d2h_ = 0;
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> spans_;

public:
    pcie_meter() = default;
    pcie_meter(const pcie_meter&) = delete;
    pcie_meter& operator=(const pcie_meter&) = delete;
    ~pcie_meter() { reset(); }

    // cudaMemcpyAsync, counted and timed.
    void copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
    {
        cudaEvent_t a = nullptr, b = nullptr;
        CUDA_OK(cudaEventCreate(&a));
        const cudaError_t e = cudaEventCreate(&b);
        if (e != cudaSuccess) {
            (void)cudaEventDestroy(a);
            CUDA_OK(e);
        }
        {
            std::lock_guard<std::mutex> g(m_);
            spans_.emplace_back(a, b);
            (kind == cudaMemcpyDeviceToHost ? d2h_ : h2d_) += bytes;
        }
        CUDA_OK(cudaEventRecord(a, s));
        CUDA_OK(cudaMemcpyAsync(dst, src, bytes, kind, s));
        CUDA_OK(cudaEventRecord(b, s));
    }

    // Host → device bytes a library copies on its own streams (sppark's streamed points): counted,
    // not timed (their spans are sppark's).
    void counted(size_t bytes)
    {
        std::lock_guard<std::mutex> g(m_);
        h2d_ += bytes;
    }

    // Once every metered copy is done: the bytes each way and the union of the spans (ms); the
    // meter starts over.
    void take(uint64_t& h2d, uint64_t& d2h, float& busy_ms)
    {
        std::lock_guard<std::mutex> g(m_);
        h2d = h2d_;
        d2h = d2h_;
        std::vector<std::pair<float, float>> t;
        for (auto& [a, b] : spans_) {
            float from = 0, to = 0;
            CUDA_OK(cudaEventElapsedTime(&from, spans_[0].first, a));
            CUDA_OK(cudaEventElapsedTime(&to, spans_[0].first, b));
            t.emplace_back(from, to);
        }
        std::sort(t.begin(), t.end());
        float busy = 0, end = -1e30f;
        for (auto [from, to] : t) {
            from = std::max(from, end);
            if (to > from)
                busy += to - from;
            end = std::max(end, to);
        }
        busy_ms = busy;
        clear();
    }

    // Forget what was metered (a new proof; events of copies still in flight are released by
    // the driver once they complete).
    void reset()
    {
        std::lock_guard<std::mutex> g(m_);
        clear();
    }

private:
    void clear()
    {
        for (auto& [a, b] : spans_) {
            (void)cudaEventDestroy(a);
            (void)cudaEventDestroy(b);
        }
        spans_.clear();
        h2d_ = d2h_ = 0;
    }
};

#endif
