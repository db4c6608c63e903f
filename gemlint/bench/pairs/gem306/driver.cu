// Serves REQUESTS requests of ROWS x COLS (every fourth is empty) and prints what outlived them: on the
// host stand-in its count of streams and events never destroyed; on a GPU the device memory
// (cudaMemGetInfo) and host memory (RSS) they kept.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemlint_driver.h"
#include "timed.h"

int main(int argc, char **argv)
{
    size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    int rows = argc > 2 ? atoi(argv[2]) : 8, cols = argc > 3 ? atoi(argv[3]) : 256;
    size_t size = (size_t)rows * cols * sizeof(float);
    gemlint_start_runtime();
    float *host = (float *)malloc(size), *in = NULL, *out = NULL;
    for (int i = 0; i < rows * cols; i++)
        host[i] = (float)i;
    cudaMalloc((void **)&in, size);
    cudaMalloc((void **)&out, size);
    cudaMemcpy(in, host, size, cudaMemcpyHostToDevice);
    timed_request(in, out, rows, cols); // loads the kernel before the baseline
    cudaDeviceSynchronize();
#ifdef GEMLINT_CUDA_HOST_EMULATION_H
    long streams_before = gemlint_host_live.streams, events_before = gemlint_host_live.events;
#endif
    size_t device_before = gemlint_device_bytes_in_use(), host_before = gemlint_host_rss_bytes();
    size_t empty = 0;
    for (size_t r = 0; r < requests; r++) {
        int batch = r % 4 == 3 ? 0 : rows;
        empty += batch == 0;
        timed_request(in, out, batch, cols);
    }
    cudaDeviceSynchronize();
    size_t device_after = gemlint_device_bytes_in_use(), host_after = gemlint_host_rss_bytes();
    cudaMemcpy(host, out, size, cudaMemcpyDeviceToHost);
    size_t wrong = 0;
    for (int i = 0; i < rows * cols; i++)
        wrong += host[i] != (float)i * 0.5f;
    printf("requests=%zu\nempty=%zu\nwrong_outputs=%zu\n", requests, empty, wrong);
#ifdef GEMLINT_CUDA_HOST_EMULATION_H
    printf("streams_left=%ld\nevents_left=%ld\n", gemlint_host_live.streams - streams_before, gemlint_host_live.events - events_before);
#else
    printf("device_bytes_lost=%zu\nhost_bytes_grown=%zu\n", gemlint_growth(device_before, device_after), gemlint_growth(host_before, host_after));
#endif
    cudaFree(in);
    cudaFree(out);
    free(host);
    return 0;
}
