// Captures a request's decode step as a CUDA graph; a request with a temperature that is not positive is rejected.
#include <cuda_runtime.h>

#include "capture.h"

__global__ void decode_step(float *logits, int n, float temperature)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        logits[i] = logits[i] / temperature;
}

cudaError_t capture_decode_step(cudaStream_t stream, cudaGraph_t *graph, float *logits, int n, float temperature)
{
    cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess)
        return err;
    if (!(temperature > 0.0f))
        return cudaErrorInvalidValue; // the stream stays in capture mode
    decode_step<<<(n + 255) / 256, 256, 0, stream>>>(logits, n, temperature);
    return cudaStreamEndCapture(stream, graph);
}
