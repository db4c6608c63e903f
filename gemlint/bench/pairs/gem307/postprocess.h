#ifndef POSTPROCESS_H
#define POSTPROCESS_H
#include <cuda_runtime.h>
void postprocess(float *d_logits, float *h_out, int n, int rounds, cudaStream_t stream);
#endif
