// A stand-in for a smaller GPU (issue 36's method): measures the device's page-locked host→device
// copy rate, then takes all of the device's free memory but `leave` MiB and holds it until it is
// killed, so a process beside it that goes over `leave` MiB fails for real. Not part of the
// library: built by scripts/gpu-prepare.sh for the GPU machine's budget runs.
//   ballast LEAVE_MIB      prints "h2d GB/s", then "holding N MiB, free M MiB", then sleeps
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e = (x);                                                      \
        if (e != cudaSuccess) {                                                   \
            fprintf(stderr, "ballast: %s: %s\n", #x, cudaGetErrorString(e));    \
            return 1;                                                             \
        }                                                                         \
    } while (0)

int main(int argc, char** argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ballast LEAVE_MIB\n");
        return 2;
    }
    const size_t leave = strtoull(argv[1], nullptr, 10) << 20;
    {
        const size_t bytes = (size_t)2 << 30;
        void *host = nullptr, *dev = nullptr;
        CHECK(cudaMallocHost(&host, bytes));
        CHECK(cudaMalloc(&dev, bytes));
        cudaEvent_t a, b;
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
        float best = 1e30f;
        for (int i = 0; i < 3; i++) {
            CHECK(cudaEventRecord(a));
            CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice));
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            best = ms < best ? ms : best;
        }
        printf("h2d %.1f GB/s (page-locked, 2 GiB copies)\n", bytes / (best * 1e6));
        CHECK(cudaFree(dev));
        CHECK(cudaFreeHost(host));
    }
    size_t free_b = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_b, &total));
    std::vector<void*> held;
    size_t took = 0;
    // 1 GiB blocks, then smaller ones, until only `leave` is free.
    for (size_t block = (size_t)1 << 30; block >= ((size_t)1 << 20); block >>= 1) {
        for (;;) {
            CHECK(cudaMemGetInfo(&free_b, &total));
            if (free_b < leave + block)
                break;
            void* p = nullptr;
            if (cudaMalloc(&p, block) != cudaSuccess) {
                (void)cudaGetLastError();
                break;
            }
            held.push_back(p);
            took += block;
        }
    }
    CHECK(cudaMemGetInfo(&free_b, &total));
    printf("holding %zu MiB, free %zu MiB of %zu MiB\n", took >> 20, free_b >> 20, total >> 20);
    fflush(stdout);
    for (;;)
        pause();
}
