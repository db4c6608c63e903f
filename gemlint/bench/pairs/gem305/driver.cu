// Serves REQUESTS decode steps on one stream, each captured, instantiated, replayed and released; every
// fourth request has temperature 0 and is rejected. Prints how many valid requests failed, and whether
// the stream was still capturing at the end (cudaStreamIsCapturing).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture.h"
#include "gemlint_driver.h"

static cudaError_t serve(cudaStream_t stream, float *logits, int n, float temperature)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaError_t err = capture_decode_step(stream, &graph, logits, n, temperature);
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

int main(int argc, char **argv)
{
    size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    gemlint_start_runtime();
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    float *logits = NULL;
    cudaMalloc((void **)&logits, n * sizeof(float));
    size_t rejected = 0, failed = 0, first_failure = requests;
    for (size_t r = 0; r < requests; r++) {
        int invalid = r % 4 == 3;
        cudaError_t err = serve(stream, logits, n, invalid ? 0.0f : 1.0f);
        if (invalid) {
            rejected += err != cudaSuccess;
        } else if (err != cudaSuccess) {
            if (failed++ == 0) {
                first_failure = r;
                printf("first_error=%s\n", cudaGetErrorString(err));
            }
        }
    }
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    cudaStreamIsCapturing(stream, &status);
    printf("requests=%zu\nrejected=%zu\nvalid_failed=%zu\nfirst_failed_request=%zu\nstream_capturing=%d\n", requests, rejected, failed, first_failure,
           status != cudaStreamCaptureStatusNone);
    if (status == cudaStreamCaptureStatusNone) { // a stream left capturing is left to the process exit
        cudaFree(logits);
        cudaStreamDestroy(stream);
    }
    return 0;
}
