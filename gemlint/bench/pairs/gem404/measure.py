"""Each variant runs in its own interpreter: it sets the variable on import, before CUDA starts. The two
variants' interpreters alternate, three of each; each reports the median of its timed repeats."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from gemlint.bench.pair import Measurement, PairContext, SkipPair
from gemlint.bench.timing import Median

# Imports the variant (which sets or leaves the environment), then times many small kernel launches.
PROGRAM = """
import importlib, json, sys, time
importlib.import_module(sys.argv[1])
import torch
kernels, repeats = int(sys.argv[2]), int(sys.argv[3])
x = torch.randn(256, 256, device="cuda")
for _ in range(100):
    x = x * 1.0001 + 0.0001
torch.cuda.synchronize()
samples = []
for _ in range(repeats):
    start = time.perf_counter()
    for _ in range(kernels):
        x = x * 1.0001 + 0.0001
    torch.cuda.synchronize()
    samples.append((time.perf_counter() - start) / kernels * 1e3)
samples.sort()
print(json.dumps({"ms_per_launch": samples[len(samples) // 2], "blocking": __import__("os").environ.get("CUDA_LAUNCH_BLOCKING")}))
"""


def run_variant(ctx: PairContext, variant: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("CUDA_LAUNCH_BLOCKING", "DEBUG_CUDA")}
    module = f"{ctx.pair.package}.{variant}"
    kernels, repeats = ctx.scale(2000, 20000), ctx.scale(3, 7)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, module, str(kernels), str(repeats)], capture_output=True, text=True, env=env, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"{variant} variant failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(ctx: PairContext) -> list[Measurement]:
    if ctx.device != "cuda":
        raise SkipPair("CUDA launch blocking only exists on a CUDA device")
    runs: dict[str, list[float]] = {"bad": [], "good": []}
    for _ in range(ctx.scale(1, 3)):  # alternated interpreters: each run's CUDA start-up reads the environment afresh
        for variant, into in runs.items():
            found = run_variant(ctx, variant)
            if (found["blocking"] == "1") != (variant == "bad"):
                raise RuntimeError("the variants did not set CUDA_LAUNCH_BLOCKING as expected")
            into.append(found["ms_per_launch"])
    return [Measurement("time per small kernel launch (2 kernels per step, 256x256)", "ms", Median(runs["bad"]), Median(runs["good"]))]
