// Two measurements of postprocess(), which rescales logits on the request's stream and copies them back:
//
// 1. Correctness, on a stream created with cudaStreamNonBlocking (as servers create their streams): for
//    REQUESTS requests, the elements of the pinned host buffer that do not hold the request's result when
//    postprocess() returns, after it synchronized the request's stream.
// 2. On a GPU only, serialization: on blocking streams (cudaStreamCreate), requests served back to back
//    while another request's kernels of SPIN_CYCLES clock cycles keep arriving on a second stream; the
//    median latency of postprocess(). A copy on the legacy default stream waits for the other stream's
//    kernels, and the next request's kernel waits for that copy.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemlint_driver.h"
#include "postprocess.h"

#ifdef __CUDACC__
#include <algorithm>
#include <chrono>
#include <vector>

__global__ void other_request(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

static double median_latency_ms(float *d_logits, float *h_out, int n, int rounds, size_t samples, long long spin_cycles)
{
    cudaStream_t mine, other;
    cudaStreamCreate(&mine);
    cudaStreamCreate(&other);
    std::vector<double> latencies;
    postprocess(d_logits, h_out, n, rounds, mine); // loads the kernels
    cudaDeviceSynchronize();
    for (size_t s = 0; s < samples; s++) {
        other_request<<<1, 1, 0, other>>>(spin_cycles);
        auto start = std::chrono::steady_clock::now();
        postprocess(d_logits, h_out, n, rounds, mine);
        latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    cudaDeviceSynchronize();
    cudaStreamDestroy(mine);
    cudaStreamDestroy(other);
    std::sort(latencies.begin(), latencies.end());
    return latencies[latencies.size() / 2];
}
#endif

static float expected(size_t r, int i, int rounds)
{
    float x = (float)(r + (size_t)i);
    for (int k = 0; k < rounds; k++)
        x = x * 0.5f + 1.0f;
    return x;
}

int main(int argc, char **argv)
{
    size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    int n = argc > 2 ? atoi(argv[2]) : 1 << 20;
    int rounds = argc > 3 ? atoi(argv[3]) : 200;
    long long spin_cycles = argc > 4 ? atoll(argv[4]) : 2000000;
    gemlint_start_runtime();
    size_t size = (size_t)n * sizeof(float);
    float *input = (float *)malloc(size), *h_out = NULL, *d_logits = NULL;
    cudaMallocHost((void **)&h_out, size); // pinned: a copy to pageable memory would not be asynchronous
    cudaMalloc((void **)&d_logits, size);
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    size_t stale = 0, stale_requests = 0;
    for (size_t r = 0; r < requests; r++) {
        for (int i = 0; i < n; i++)
            input[i] = (float)(r + (size_t)i);
        cudaMemcpy(d_logits, input, size, cudaMemcpyHostToDevice);
        cudaDeviceSynchronize(); // the upload and any earlier copy are done
        for (int i = 0; i < n; i++)
            h_out[i] = NAN;
        postprocess(d_logits, h_out, n, rounds, stream);
        size_t wrong = 0;
        for (int i = 0; i < n; i++)
            wrong += h_out[i] != expected(r, i, rounds);
        stale += wrong;
        stale_requests += wrong > 0;
    }
    cudaDeviceSynchronize();
    printf("requests=%zu\nelements=%zu\nstale_elements=%zu\nstale_requests=%zu\n", requests, requests * (size_t)n, stale, stale_requests);
#ifdef __CUDACC__
    printf("latency_ms=%.6f\n", median_latency_ms(d_logits, h_out, n, rounds, requests, spin_cycles));
#endif
    cudaStreamDestroy(stream);
    cudaFree(d_logits);
    cudaFreeHost(h_out);
    free(input);
    return 0;
}
