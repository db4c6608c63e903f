#ifndef CAPTURE_H
#define CAPTURE_H
#include <cuda_runtime.h>
cudaError_t capture_decode_step(cudaStream_t stream, cudaGraph_t *graph, float *logits, int n, float temperature);
#endif
