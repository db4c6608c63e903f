"""On the CPU the pair is built with g++ against the host stand-in of the CUDA runtime (``pairs/_cuda_host``),
whose bookkeeping counts the streams and events the code created and never destroyed; on a CUDA machine with
nvcc against the real runtime, where the device memory (``cudaMemGetInfo``) and host memory (RSS) that outlive
the requests are measured."""

from __future__ import annotations

from gemlint.bench.native import check_clean, run_cuda_variants
from gemlint.bench.pair import Measurement, PairContext

NO_GPU = "needs a CUDA device: the host stand-in has no driver whose memory streams and events could hold"


def measure(ctx: PairContext) -> list[Measurement]:
    requests = ctx.scale(20, 4000)
    runs = run_cuda_variants(ctx, [str(requests), "8", str(ctx.scale(64, 256))])
    check_clean(runs, "wrong_outputs")
    bad, good = runs["bad"], runs["good"]
    empty = bad.value("empty")
    device_metric = f"device memory kept after {requests} requests, {empty} empty (cudaMemGetInfo)"
    host_metric = f"host memory grown after {requests} requests, {empty} empty (RSS)"
    if ctx.device == "cuda":
        return [
            Measurement(device_metric, "bytes", bad.value("device_bytes_lost"), good.value("device_bytes_lost"), deterministic=True),
            Measurement(host_metric, "bytes", bad.value("host_bytes_grown"), good.value("host_bytes_grown"), deterministic=True),
        ]
    return [
        Measurement(
            f"streams never destroyed after {requests} requests, {empty} empty (count kept by the host stand-in runtime)",
            "streams",
            bad.value("streams_left"),
            good.value("streams_left"),
            deterministic=True,
        ),
        Measurement(
            f"events never destroyed after {requests} requests, {empty} empty (count kept by the host stand-in runtime)",
            "events",
            bad.value("events_left"),
            good.value("events_left"),
            deterministic=True,
        ),
        Measurement(device_metric, "bytes", None, None, skipped=NO_GPU),
        Measurement(host_metric, "bytes", None, None, skipped=NO_GPU),
    ]
