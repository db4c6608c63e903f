"""On the CPU the pair is built with g++ against the host stand-in of the CUDA runtime (``pairs/_cuda_host``),
which keeps track of open captures and, as the CUDA runtime does, refuses to begin a capture on a stream that
is still capturing and to synchronize one; on a CUDA machine with nvcc against the real runtime."""

from __future__ import annotations

from gemlint.bench.native import run_cuda_variants
from gemlint.bench.pair import Measurement, PairContext


def measure(ctx: PairContext) -> list[Measurement]:
    requests = ctx.scale(20, 400)
    runs = run_cuda_variants(ctx, [str(requests), str(ctx.scale(1024, 4096))])
    bad, good = runs["bad"], runs["good"]
    rejected = requests // 4
    for variant, run in runs.items():
        if run.value("rejected") != rejected:
            raise RuntimeError(f"the {variant} variant accepted a request it must reject: {run.stdout[-300:]}")
    runtime = "host stand-in runtime" if ctx.device == "cpu" else "CUDA runtime"
    return [
        Measurement(
            f"valid requests that failed, of {requests - rejected}, after {rejected} rejected ones ({runtime})",
            "requests",
            bad.value("valid_failed"),
            good.value("valid_failed"),
            deterministic=True,
        ),
        Measurement(
            f"streams still in capture mode after {requests} requests (cudaStreamIsCapturing, {runtime})",
            "streams",
            bad.value("stream_capturing"),
            good.value("stream_capturing"),
            deterministic=True,
        ),
    ]
