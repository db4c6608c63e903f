// Rescales a request's logits on the request's stream and copies them back into the host buffer.
#include <cuda_runtime.h>

#include "postprocess.h"

__global__ void rescale(float *logits, int n, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = logits[i];
    for (int k = 0; k < rounds; k++)
        x = x * 0.5f + 1.0f;
    logits[i] = x;
}

void postprocess(float *d_logits, float *h_out, int n, int rounds, cudaStream_t stream)
{
    rescale<<<(n + 255) / 256, 256, 0, stream>>>(d_logits, n, rounds);
    cudaMemcpyAsync(h_out, d_logits, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
}
