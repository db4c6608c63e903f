"""On the CPU the pair is built with g++ against the host stand-in of the CUDA runtime (``pairs/_cuda_host``),
where work issued to a stream runs only when that stream is synchronized: the latest completion CUDA's ordering
allows for a non-blocking stream, so what the host reads is what the code waited for and nothing more. On a
CUDA machine with nvcc against the real runtime, five alternated runs of each variant: the same check (whose
outcome is a race there, so it is reported, not asserted) and the latency the copy costs when the legacy
default stream serializes it with another request's stream."""

from __future__ import annotations

from gemlint.bench.native import alternated_gpu_runs, run_cuda_variants
from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.timing import Median

SPIN_CYCLES = 2_000_000  # about 1 ms of another request's kernel at the clocks of current data-center GPUs


def measure(ctx: PairContext) -> list[Measurement]:
    on_gpu = ctx.device == "cuda"
    requests = ctx.scale(10, 50) if on_gpu else ctx.scale(4, 20)
    n = 1 << 20 if on_gpu else ctx.scale(4096, 65536)
    args = [str(requests), str(n), "8", str(SPIN_CYCLES)]
    latency = f"median postprocess latency while another stream keeps receiving kernels of {SPIN_CYCLES // 1_000_000}M cycles (blocking streams)"
    if on_gpu:
        alternated = alternated_gpu_runs(ctx, args, ctx.scale(1, 5))
        bad_runs, good_runs = alternated["bad"], alternated["good"]
        return [
            Measurement(
                f"host-buffer elements stale after cudaStreamSynchronize(stream), non-blocking stream, {requests} requests of {n}",
                "elements",
                Median(run.value("stale_elements") for run in bad_runs),
                Median(run.value("stale_elements") for run in good_runs),
            ),
            Measurement(latency, "ms", Median(run.number("latency_ms") for run in bad_runs), Median(run.number("latency_ms") for run in good_runs)),
        ]
    runs = run_cuda_variants(ctx, args)
    bad, good = runs["bad"], runs["good"]
    return [
        Measurement(
            f"host-buffer elements not yet copied when cudaStreamSynchronize(stream) returned, {requests} requests of {n} "
            "(host stand-in runtime: a stream's work runs when that stream is synchronized)",
            "elements",
            bad.value("stale_elements"),
            good.value("stale_elements"),
            deterministic=True,
        ),
        Measurement(latency, "ms", None, None, skipped="needs a CUDA device: the host stand-in runs one stream at a time, so there is no overlap to lose"),
    ]
