// Serves REQUESTS requests of N features (every fourth holds a NaN and is rejected),
// and prints the device memory lost meanwhile, from cudaMemGetInfo.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "stage.h"

int main(int argc, char **argv)
{
    size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 65536;
    float *features = (float *)malloc(n * sizeof(float));
    float first = 0.0f;
    size_t free_before = 0, free_after = 0, total = 0, rejected = 0;
    cudaFree(0); // start the runtime before the first measurement
    cudaDeviceSynchronize();
    cudaMemGetInfo(&free_before, &total);
    for (size_t r = 0; r < requests; r++) {
        for (size_t i = 0; i < n; i++)
            features[i] = (float)(i + r);
        if (r % 4 == 0)
            features[n / 2] = NAN;
        rejected += stage_request(features, n, &first) != 0;
    }
    cudaDeviceSynchronize();
    cudaMemGetInfo(&free_after, &total);
    printf("requests=%zu\nrejected=%zu\ndevice_bytes_lost=%zu\n", requests, rejected, free_before > free_after ? free_before - free_after : (size_t)0);
    free(features);
    return 0;
}
