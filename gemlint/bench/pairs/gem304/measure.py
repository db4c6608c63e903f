"""On the CPU the pair is built with g++ against the host stand-in of the CUDA runtime (``pairs/_cuda_host``),
whose bookkeeping counts the graphs and executable graphs the code created and never destroyed; on a CUDA
machine with nvcc against the real runtime, where the device memory (``cudaMemGetInfo``) and host memory
(RSS) that outlive the requests are measured."""

from __future__ import annotations

from gemlint.bench.native import check_clean, run_cuda_variants
from gemlint.bench.pair import Measurement, PairContext

NO_GPU = "needs a CUDA device: the host stand-in has no driver whose memory graphs could hold"


def measure(ctx: PairContext) -> list[Measurement]:
    requests, logits = ctx.scale(20, 2000), ctx.scale(1024, 4096)
    runs = run_cuda_variants(ctx, [str(requests), str(logits)])
    check_clean(runs, "failed", "wrong_outputs")
    bad, good = runs["bad"], runs["good"]
    device_metric = f"device memory kept after {requests} captured requests (cudaMemGetInfo)"
    host_metric = f"host memory grown after {requests} captured requests (RSS)"
    if ctx.device == "cuda":
        return [
            Measurement(device_metric, "bytes", bad.value("device_bytes_lost"), good.value("device_bytes_lost"), deterministic=True),
            Measurement(host_metric, "bytes", bad.value("host_bytes_grown"), good.value("host_bytes_grown"), deterministic=True),
        ]
    for run in runs.values():
        if run.value("graphs_left"):
            raise RuntimeError(f"a variant left graphs behind, not only executable graphs: {run.stdout[-300:]}")
    return [
        Measurement(
            f"executable graphs never destroyed after {requests} captured requests (count kept by the host stand-in runtime)",
            "graphs",
            bad.value("graph_execs_left"),
            good.value("graph_execs_left"),
            deterministic=True,
        ),
        Measurement(device_metric, "bytes", None, None, skipped=NO_GPU),
        Measurement(host_metric, "bytes", None, None, skipped=NO_GPU),
    ]
