from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.native.streams import MARKERS, default_stream_copies
from gemlint.rule import DocumentRule


class DefaultStreamAsyncCopy(DocumentRule):
    code = "GEM307"
    name = "default-stream-async-copy"
    severity = Severity.WARNING
    languages = frozenset({Language.NATIVE})
    summary = "`cudaMemcpyAsync`/`cudaMemsetAsync` runs on the default stream (stream `0` or omitted) in a function whose kernels run on another stream, which is the only one it synchronizes."
    rationale = (
        "The copy and the kernels it feeds are meant to share one stream. On the legacy default stream the copy "
        "serializes with every blocking stream of the device, so the overlap the non-default stream was created for "
        "is lost (and other requests' streams wait for it too); with a non-blocking stream or per-thread default "
        "streams there is no ordering at all, and `cudaStreamSynchronize(stream)` returns before the copy is done, so "
        "the host reads or frees a buffer that is still being written."
    )
    not_flagged = (
        "Copies that pass the kernels' stream (or any non-default stream).",
        "Functions that synchronize the device or the default stream (`cudaDeviceSynchronize`, "
        "`cudaStreamSynchronize(0)`), or that launch no kernel on a non-default stream.",
        "Copies after the last synchronization of the kernels' stream.",
        "Prefetches of managed memory (`cudaMemPrefetchAsync`): a migration hint, whose completion no result "
        "depends on.",
    )
    bad = """\
void postprocess(const float* d_logits, float* h_out, int n, cudaStream_t stream) {
  softmax_kernel<<<(n + 255) / 256, 256, 0, stream>>>(d_logits, n);
  cudaMemcpyAsync(h_out, d_logits, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaStreamSynchronize(stream);
}
"""
    good = """\
void postprocess(const float* d_logits, float* h_out, int n, cudaStream_t stream) {
  softmax_kernel<<<(n + 255) / 256, 256, 0, stream>>>(d_logits, n);
  cudaMemcpyAsync(h_out, d_logits, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
}
"""
    benchmark = (
        "Elements of the pinned host buffer that do not hold the result when `postprocess` returns after "
        "`cudaStreamSynchronize(stream)` on a non-blocking stream (with the host stand-in of the runtime, where a "
        "stream's work runs when that stream is synchronized, on machines without a GPU; a race on CUDA machines), "
        "and on CUDA machines the median latency when the legacy default stream serializes the copy with another "
        "stream's kernels."
    )
    tags = ("correctness", "performance", "cuda", "streams")
    precision = "medium"
    prefilter = MARKERS

    def check(self) -> None:
        document = self.context.document
        for copy in default_stream_copies(document):
            where = "omits the stream" if copy.omitted else "passes the default stream"
            kernels, fix = copy.streams()
            start, end = document.span(copy.call)
            self.report_at(
                start,
                end,
                f"`{copy.name}` {where}, but this function's kernels run on {kernels} synchronized: the copy either "
                f"serializes with every stream or is not waited for; {fix}",
            )
