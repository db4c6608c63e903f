from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rules.native_base import PairingRule


class CudaHandleLeak(PairingRule):
    code = "GEM306"
    name = "cuda-handle-leak"
    severity = Severity.WARNING
    example_language = Language.NATIVE
    summary = "A CUDA stream (`cudaStreamCreate*`) or event (`cudaEventCreate*`) is not destroyed on some path out of the function."
    rationale = (
        "Streams and events are driver objects with host and device bookkeeping; creating them per request (for "
        "timing, or for a private stream) without destroying them grows the driver's tables until creation fails, "
        "and every leaked stream keeps its resources until the context is torn down. The check also covers the "
        "driver API (`cuStreamCreate`, `cuEventCreate`) and cuda-python/CuPy (`cudart.cudaStreamCreate`, "
        "`cupy.cuda.runtime.streamCreate`, `eventCreate`)."
    )
    not_flagged = (
        "Handles stored into a member, a pool or container, or an out-parameter, returned, or handed to an owner.",
        "A fallback for a caller that passes no stream or event: one created into a parameter in the branch taken when "
        "it is null (`if (stream == nullptr) cudaStreamCreate(&stream);`), as for GEM302's buffers.",
        "Paths on which the creation failed; handles destroyed through a cleanup macro, as for GEM301. The failure exits of a function that runs once per process, a throw or raise that nothing catches on its way out of `main`, a function whose call is the last statement of `main`, and what a function that a test or benchmark program runs once forgets, as for GEM301.",
    )
    bad = """\
float time_forward(Model& model, const Batch& batch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, model.stream());
  model.forward(batch);
  cudaEventRecord(stop, model.stream());
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  return ms;
}
"""
    good = """\
float time_forward(Model& model, const Batch& batch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, model.stream());
  model.forward(batch);
  cudaEventRecord(stop, model.stream());
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}
"""
    benchmark = (
        "A timed request handler with a private stream and two events, every fourth batch empty, N requests: streams "
        "and events never destroyed (counted by the host stand-in of the CUDA runtime on machines without a GPU); on "
        "CUDA machines, built with nvcc, the device memory (`cudaMemGetInfo`) and host memory (RSS) left behind."
    )
    tags = ("correctness", "cuda")
    precision = "high"
