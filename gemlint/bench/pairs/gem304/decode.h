#ifndef DECODE_H
#define DECODE_H
#include <cuda_runtime.h>
cudaError_t replay_decode_step(cudaStream_t stream, float *logits, int n, float temperature);
#endif
