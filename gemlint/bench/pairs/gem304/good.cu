// Runs a request's decode step as a CUDA graph: captured on the request's stream, instantiated and launched.
#include <cuda_runtime.h>

#include "decode.h"

__global__ void decode_step(float *logits, int n, float temperature)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        logits[i] = logits[i] / temperature;
}

cudaError_t replay_decode_step(cudaStream_t stream, float *logits, int n, float temperature)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess)
        return err;
    decode_step<<<(n + 255) / 256, 256, 0, stream>>>(logits, n, temperature);
    err = cudaStreamEndCapture(stream, &graph);
    if (err != cudaSuccess)
        return err;
    err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess)
        return err;
    err = cudaGraphLaunch(exec, stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    cudaGraphExecDestroy(exec);
    return err;
}
