// Copies a request's features to the GPU; the copy overlaps with validation, and invalid requests are rejected.
#include <cuda_runtime.h>

#include "stage.h"

static int valid(const float *features, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (features[i] != features[i])
            return 0;
    return 1;
}

int stage_request(const float *features, size_t n, float *first)
{
    float *device = NULL;
    if (cudaMalloc((void **)&device, n * sizeof(float)) != cudaSuccess)
        return -1;
    cudaMemcpy(device, features, n * sizeof(float), cudaMemcpyHostToDevice);
    if (!valid(features, n))
        return -2; // the rejected request returns without cudaFree
    cudaMemcpy(first, device, sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(device);
    return 0;
}
