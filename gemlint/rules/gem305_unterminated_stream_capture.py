from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rules.native_base import PairingRule


class UnterminatedStreamCapture(PairingRule):
    code = "GEM305"
    name = "unterminated-stream-capture"
    severity = Severity.ERROR
    example_language = Language.NATIVE
    summary = "`cudaStreamBeginCapture` is not followed by `cudaStreamEndCapture` on the same stream on some path out of the function."
    rationale = (
        "While a stream is capturing, work issued to it is recorded instead of run, and synchronous calls that touch "
        "it fail with `cudaErrorStreamCaptureUnsupported`/`Invalidated`. A function that returns early (an error "
        "branch, a `throw`, a failing check macro) between begin and end leaves the stream in capture mode: every "
        "later request on that stream fails until the capture is ended, and the partial graph is leaked. The same "
        "check covers `cuStreamBeginCapture` and the cuda-python/CuPy capture calls."
    )
    not_flagged = (
        "Paths on which `cudaStreamBeginCapture` itself failed.",
        "A begin/end pair split over two functions of the same file (`capture_begin()`/`capture_end()`), "
        "where the function that begins never ends a capture.",
        "Captures begun over an array in one loop and ended in a sibling loop over the same bound "
        "(`for (i < n) begin(streams[i]); ... for (j < n) end(streams[j]);`). What is reported instead is the "
        "real bug of that shape: an error-check macro (defined in the file or in a project header it includes) "
        "that returns between the begin and the end.",
    )
    bad = """\
cudaError_t capture_decode_step(cudaStream_t stream, cudaGraph_t* graph, const Params& p) {
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) return err;
  if (!p.valid()) return cudaErrorInvalidValue;  // the stream stays in capture mode
  decode_kernel<<<p.grid, p.block, 0, stream>>>(p);
  return cudaStreamEndCapture(stream, graph);
}
"""
    good = """\
cudaError_t capture_decode_step(cudaStream_t stream, cudaGraph_t* graph, const Params& p) {
  if (!p.valid()) return cudaErrorInvalidValue;
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) return err;
  decode_kernel<<<p.grid, p.block, 0, stream>>>(p);
  return cudaStreamEndCapture(stream, graph);
}
"""
    benchmark = (
        "Requests captured on one stream, every fourth one rejected: the valid requests that fail after a rejection "
        "left the capture open, and whether the stream is still capturing at the end (`cudaStreamIsCapturing`); "
        "with the real runtime on CUDA machines, and with the host stand-in of the runtime (which refuses a "
        "second capture and a synchronization on a capturing stream, as CUDA does) elsewhere."
    )
    tags = ("correctness", "cuda", "cuda-graphs")
    precision = "high"
