"""Loads the same checkpoint under each manifest's memory limit, scaled to the benchmark's weights.

The manifests serve a model whose half-precision weights fill 14 GiB on its one GPU (7B parameters).
The benchmark's checkpoint is smaller, so each limit is scaled by the same factor (weights / 14 GiB)
and applied to a child process as RLIMIT_DATA over what the interpreter and torch already use: a
load that needs more fails as a container at its limit would be OOM-killed. The peak resident memory
the load adds shows the staging: the model's parameters plus the state dict read from disk.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import torch
import yaml
from torch import nn

from gemlint.bench.pair import Measurement, PairContext
from gemlint.quantities import kubernetes_bytes

SERVED_WEIGHTS = 14 * 2**30  # the model the manifests serve, per GPU


def memory_limit(manifest: str) -> int:
    container = yaml.safe_load(manifest)["spec"]["template"]["spec"]["containers"][0]
    return kubernetes_bytes(str(container["resources"]["limits"]["memory"]))


def load(checkpoint, layers: int, width: int, budget: int) -> dict:
    command = [sys.executable, "-m", "gemlint.bench.pairs.gem604.load", "--checkpoint", str(checkpoint)]
    command += ["--layers", str(layers), "--width", str(width), "--budget", str(budget)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if not lines:  # killed outright: the load did not complete
        return {"loaded": False, "peak_added": None, "error": (completed.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def measure(ctx: PairContext) -> list[Measurement]:
    layers, width = ctx.scale(4, 16), 2048  # 16 MiB per layer in float32
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(width, width, bias=False) for _ in range(layers)])
    checkpoint = ctx.workdir / "model.pt"
    torch.save(model.state_dict(), checkpoint)
    weights = sum(parameter.numel() * parameter.element_size() for parameter in model.parameters())
    del model
    scale = weights / SERVED_WEIGHTS
    limits = {variant: memory_limit(ctx.pair.variant_path(variant).read_text(encoding="utf-8")) for variant in ("bad", "good")}
    runs = {variant: load(checkpoint, layers, width, int(limit * scale)) for variant, limit in limits.items()}
    bad, good = runs["bad"], runs["good"]
    # The peak is read from the allocator's high-water mark, which varies a little from run to run.
    more = [load(checkpoint, layers, width, int(limits["good"] * scale)) for _ in range(ctx.scale(0, 2))]
    peaks = tuple(float(run["peak_added"]) for run in (good, *more) if run["loaded"] and run["peak_added"])
    label = f"{weights // 2**20} MiB of weights, limits {limits['bad'] // 2**30}Gi vs {limits['good'] // 2**30}Gi for 14 GiB scaled alike"
    return [
        Measurement(f"loads that failed at the memory limit ({label})", "loads", int(not bad["loaded"]), int(not good["loaded"]), deterministic=True),
        Measurement(
            f"peak host memory added by loading {weights // 2**20} MiB of weights (no limit reached)",
            "bytes",
            statistics.median(peaks) if peaks else None,
            statistics.median(peaks) if peaks else None,
            skipped=None if peaks else f"the load failed under the larger limit too ({good.get('error')})",
            bad_runs=peaks,
            good_runs=peaks,
        ),
    ]
