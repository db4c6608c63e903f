"""On the CPU the pair is built with g++ against a host emulation of the CUDA runtime (see
``pairs/_cuda_host``) and run under valgrind; on a CUDA machine with nvcc and the real runtime,
under compute-sanitizer when it is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

from gemlint.bench.native import checked_run
from gemlint.bench.pair import Measurement, PairContext, SkipPair

_SANITIZER_LEAKS = re.compile(r"LEAK SUMMARY: (\d+) bytes leaked in (\d+) allocations")


def measure(ctx: PairContext) -> list[Measurement]:
    requests, features = ctx.scale(20, 400), ctx.scale(16384, 65536)
    args = [str(requests), str(features)]
    if ctx.device == "cuda":
        return _on_cuda(ctx, args, requests)
    host = ctx.pair.folder.parent / "_cuda_host"
    runs = {
        variant: checked_run(ctx, variant, [ctx.pair.variant_path(variant), ctx.path("driver.cu")], args, includes=[host, ctx.pair.folder])
        for variant in ("bad", "good")
    }
    rejected = runs["bad"].value("rejected")
    return [
        Measurement(
            f"device bytes lost after {requests} requests, {rejected} rejected (cudaMemGetInfo, host-emulated runtime)",
            "bytes",
            runs["bad"].value("device_bytes_lost"),
            runs["good"].value("device_bytes_lost"),
            deterministic=True,
        ),
        Measurement(
            f"bytes leaked after {requests} requests ({runs['bad'].checker}, host-emulated runtime)",
            "bytes",
            runs["bad"].leaked_bytes,
            runs["good"].leaked_bytes,
            deterministic=True,
        ),
    ]


def _on_cuda(ctx: PairContext, args: list[str], requests: int) -> list[Measurement]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise SkipPair("needs nvcc to build the CUDA variant")
    sanitizer = shutil.which("compute-sanitizer")
    lost: dict[str, int] = {}
    leaked: dict[str, int] = {}
    for variant in ("bad", "good"):
        binary = ctx.workdir / variant
        built = subprocess.run(
            [nvcc, "-O1", f"-I{ctx.pair.folder}", str(ctx.pair.variant_path(variant)), str(ctx.path("driver.cu")), "-o", str(binary)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if built.returncode != 0:
            raise RuntimeError(f"nvcc failed: {built.stderr.strip()[-500:]}")
        command = [sanitizer, "--leak-check", "full", str(binary), *args] if sanitizer else [str(binary), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        match = re.search(r"^device_bytes_lost=(\d+)$", done.stdout, re.MULTILINE)
        if match is None:
            raise RuntimeError(f"{variant} printed no result (exit {done.returncode}): {done.stdout[-300:]} {done.stderr[-300:]}")
        rejected = re.search(r"^rejected=(\d+)$", done.stdout, re.MULTILINE)
        if rejected is None or int(rejected.group(1)) != (requests + 3) // 4:
            # Every request fails when cudaMalloc does: the runtime is not usable here.
            raise SkipPair(f"the CUDA runtime failed in the {variant} variant: {done.stdout.strip()[-200:]} {done.stderr.strip()[-200:]}")
        lost[variant] = int(match.group(1))
        if sanitizer:  # it prints a LEAK SUMMARY only when something leaked
            found = _SANITIZER_LEAKS.search(done.stdout + done.stderr)
            leaked[variant] = int(found.group(1)) if found else 0
    results = [Measurement(f"device bytes lost after {requests} requests (cudaMemGetInfo)", "bytes", lost["bad"], lost["good"], deterministic=True)]
    if sanitizer:
        results.append(Measurement(f"bytes leaked after {requests} requests (compute-sanitizer)", "bytes", leaked["bad"], leaked["good"], deterministic=True))
    else:
        results.append(Measurement(f"bytes leaked after {requests} requests (compute-sanitizer)", "bytes", None, None, skipped="compute-sanitizer is not installed"))
    return results
