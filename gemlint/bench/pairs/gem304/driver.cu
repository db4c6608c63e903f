// Serves REQUESTS decode steps of N logits, each captured and replayed as a graph on one stream, and
// prints what outlived them: on the host stand-in its count of graphs and executable graphs never
// destroyed; on a GPU the device memory (cudaMemGetInfo) and host memory (RSS) they kept.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode.h"
#include "gemlint_driver.h"

int main(int argc, char **argv)
{
    size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    gemlint_start_runtime();
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    float *logits = NULL;
    cudaMalloc((void **)&logits, n * sizeof(float));
    float *host = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++)
        host[i] = (float)i;
    cudaMemcpy(logits, host, n * sizeof(float), cudaMemcpyHostToDevice);
    // One request before the baseline: the first capture loads the kernel and sets up the graph machinery.
    size_t failed = replay_decode_step(stream, logits, n, 1.0f) != cudaSuccess;
    cudaDeviceSynchronize();
#ifdef GEMLINT_CUDA_HOST_EMULATION_H
    long graphs_before = gemlint_host_live.graphs, execs_before = gemlint_host_live.graph_execs;
#endif
    size_t device_before = gemlint_device_bytes_in_use(), host_before = gemlint_host_rss_bytes();
    for (size_t r = 0; r < requests; r++)
        failed += replay_decode_step(stream, logits, n, 1.0f) != cudaSuccess;
    cudaDeviceSynchronize();
    size_t device_after = gemlint_device_bytes_in_use(), host_after = gemlint_host_rss_bytes();
    cudaMemcpy(host, logits, n * sizeof(float), cudaMemcpyDeviceToHost);
    size_t wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += host[i] != (float)i;
    printf("requests=%zu\nfailed=%zu\nwrong_outputs=%zu\n", requests, failed, wrong);
#ifdef GEMLINT_CUDA_HOST_EMULATION_H
    printf("graphs_left=%ld\ngraph_execs_left=%ld\n", gemlint_host_live.graphs - graphs_before, gemlint_host_live.graph_execs - execs_before);
#else
    printf("device_bytes_lost=%zu\nhost_bytes_grown=%zu\n", gemlint_growth(device_before, device_after), gemlint_growth(host_before, host_after));
#endif
    cudaFree(logits);
    cudaStreamDestroy(stream);
    free(host);
    return 0;
}
