"""The host stand-in of the CUDA runtime that the GEM3xx pairs run on without a GPU: its kernel launches,
stream ordering, captures and object counts, which the pairs' CPU numbers rest on."""

from __future__ import annotations

import subprocess
import textwrap

from availability import require_tools
from gemlint.bench.native import HOST_RUNTIME, host_source
from gemlint.bench.pair import Pair, PairContext

PROGRAM = textwrap.dedent(
    """\
    #include <cuda_runtime.h>
    #include <stdio.h>

    __global__ void fill(int *out, int value)
    {
        out[blockIdx.x * blockDim.x + threadIdx.x] = value;
    }

    #define CHECK(cond) do { if (!(cond)) { printf("failed: %s (line %d)\\n", #cond, __LINE__); return 1; } } while (0)

    int main()
    {
        int *out = NULL;
        cudaMalloc(&out, 8 * sizeof(int));
        cudaStream_t blocking, nonblocking;
        cudaStreamCreate(&blocking);
        cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking);
        CHECK(gemlint_host_live.streams == 2);

        // A launch covers the whole grid, and runs when its stream is synchronized.
        fill<<<2, 4, 0, nonblocking>>>(out, 7);
        CHECK(out[7] != 7);
        cudaStreamSynchronize(nonblocking);
        CHECK(out[0] == 7 && out[7] == 7);

        // Legacy default stream: it waits for a blocking stream's earlier work, not for a non-blocking one's.
        fill<<<2, 4, 0, blocking>>>(out, 1);
        fill<<<2, 4, 0, nonblocking>>>(out, 2);
        int host[8] = {0};
        cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
        CHECK(host[0] == 1);
        cudaStreamSynchronize(nonblocking);
        CHECK(out[0] == 2);

        // A capture records the work instead of running it; the graph replays it.
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
        CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeThreadLocal) == cudaErrorIllegalState);
        fill<<<2, 4, 0, blocking>>>(out, 3);
        CHECK(cudaStreamEndCapture(blocking, &graph) == cudaSuccess);
        cudaStreamSynchronize(blocking);
        CHECK(out[0] == 2);
        cudaGraphInstantiate(&exec, graph, 0);
        CHECK(gemlint_host_live.graphs == 1 && gemlint_host_live.graph_execs == 1);
        cudaGraphLaunch(exec, blocking);
        cudaStreamSynchronize(blocking);
        CHECK(out[0] == 3);
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        CHECK(gemlint_host_live.graphs == 0 && gemlint_host_live.graph_execs == 0);

        // Synchronizing a capturing stream fails and invalidates the capture.
        cudaStreamCaptureStatus status;
        cudaStreamBeginCapture(blocking, cudaStreamCaptureModeThreadLocal);
        CHECK(cudaStreamSynchronize(blocking) == cudaErrorStreamCaptureUnsupported);
        cudaStreamIsCapturing(blocking, &status);
        CHECK(status == cudaStreamCaptureStatusInvalidated && gemlint_host_live.open_captures == 1);
        CHECK(cudaStreamEndCapture(blocking, &graph) == cudaErrorStreamCaptureInvalidated && graph == NULL);
        cudaStreamIsCapturing(blocking, &status);
        CHECK(status == cudaStreamCaptureStatusNone && gemlint_host_live.open_captures == 0);

        // Events complete with their stream's work.
        cudaEvent_t start, stop;
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
        cudaEventRecord(start, nonblocking);
        cudaEventRecord(stop, nonblocking);
        float ms = -1.0f;
        CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaErrorNotReady);
        cudaEventSynchronize(stop);
        CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms >= 0.0f);
        CHECK(gemlint_host_live.events == 2);
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        cudaStreamDestroy(blocking);
        cudaStreamDestroy(nonblocking);
        CHECK(gemlint_host_live.events == 0 && gemlint_host_live.streams == 0);
        cudaFree(out);
        printf("ok\\n");
        return 0;
    }
    """
)


def _context(tmp_path):
    return PairContext(Pair(code="GEM999", bad="bad.cu", good="good.cu"), "cpu", True, tmp_path)


def test_kernel_launches_are_rewritten_for_the_host_compiler(tmp_path):
    source = tmp_path / "k.cu"
    source.write_text("void f(S s) {\n  scale<<<(n + 255) / 256, 256, 0, s>>>(x, n);\n  ns::k<float><<<g, b>>> (y);\n}\n")
    text = host_source(_context(tmp_path), source).read_text()
    assert "gemlint_launch(scale, (n + 255) / 256, 256, 0, s)(x, n);" in text
    assert "gemlint_launch(ns::k<float>, g, b)(y);" in text
    assert text.startswith(f'#line 1 "{source}"\n') and "<<<" not in text
    plain = tmp_path / "plain.cu"
    plain.write_text("int f(void) { return 0; }\n")
    assert host_source(_context(tmp_path), plain) == plain


def test_stand_in_follows_the_runtime_rules_the_pairs_rely_on(tmp_path):
    require_tools("g++")
    from gemlint.bench.native import build

    source = tmp_path / "standin.cu"
    source.write_text(PROGRAM)
    binary = build(_context(tmp_path), "standin", [source], includes=[HOST_RUNTIME])
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
