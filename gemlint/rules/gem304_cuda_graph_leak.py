from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rules.native_base import PairingRule


class CudaGraphLeak(PairingRule):
    code = "GEM304"
    name = "cuda-graph-leak"
    severity = Severity.WARNING
    example_language = Language.NATIVE
    summary = "A CUDA graph (`cudaGraphCreate`, or the graph `cudaStreamEndCapture` returns) or an executable graph (`cudaGraphInstantiate*`) is not destroyed on some path out of the function."
    rationale = (
        "Graph capture is how inference servers cut kernel-launch overhead, and it is often done per shape or per "
        "request batch. A captured `cudaGraph_t` keeps its nodes and parameters in host memory, and an instantiated "
        "`cudaGraphExec_t` additionally holds device-side resources for every node; re-capturing without "
        "`cudaGraphDestroy`/`cudaGraphExecDestroy` grows both with every capture. Driver-API graphs (`cuGraphCreate`, "
        "`cuGraphInstantiate`, `cuStreamEndCapture`) and cuda-python/CuPy graph calls are checked the same way."
    )
    not_flagged = (
        "Graphs stored into a member, a cache or an out-parameter (a graph cache keyed by shape), returned, or "
        "handed to an owner.",
        "Paths on which the capture or instantiation failed; graphs destroyed through a cleanup macro, as for GEM301. The failure exits of a function that runs once per process, and what such a function of a test or benchmark program forgets, as for GEM301.",
        "Graphs destroyed by a local lambda the function calls, and graphs handed back through an optional "
        "out-parameter (`if (graph != nullptr) *graph = captured;`), as for GEM301.",
        "A graph destroyed right after instantiation while the executable graph is kept.",
    )
    bad = """\
void replay_once(cudaStream_t stream, float* buf) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  step_kernel<<<64, 256, 0, stream>>>(buf);
  cudaStreamEndCapture(stream, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  cudaGraphLaunch(exec, stream);
  cudaStreamSynchronize(stream);
}
"""
    good = """\
void replay_once(cudaStream_t stream, float* buf) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  step_kernel<<<64, 256, 0, stream>>>(buf);
  cudaStreamEndCapture(stream, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  cudaGraphLaunch(exec, stream);
  cudaStreamSynchronize(stream);
  cudaGraphExecDestroy(exec);
}
"""
    benchmark = (
        "A decode step captured, instantiated and replayed as a graph per request, N requests: executable graphs never "
        "destroyed (counted by the host stand-in of the CUDA runtime on machines without a GPU); on CUDA machines, "
        "built with nvcc, the device memory (`cudaMemGetInfo`) and host memory (RSS) the requests leave behind."
    )
    tags = ("correctness", "memory", "cuda", "cuda-graphs")
    precision = "high"
