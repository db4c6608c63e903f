"""Gives each compose file's /dev/shm to a tensor exchange between two processes.

A container's /dev/shm is a tmpfs of `shm_size` (64 MiB by default); here a private mount namespace
(`unshare --mount`, root only) mounts a tmpfs of that size over /dev/shm for one child process, so the
host's /dev/shm is never touched. Without root or unshare the pair is skipped.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys

import yaml

from gemlint.bench.pair import Measurement, PairContext, SkipPair
from gemlint.quantities import docker_bytes

DOCKER_DEFAULT_SHM = 64 * 2**20
TENSOR_MIB = 32


def shm_size(compose: str) -> int:
    service = next(iter(yaml.safe_load(compose)["services"].values()))
    return docker_bytes(str(service["shm_size"])) if "shm_size" in service else DOCKER_DEFAULT_SHM


def exchange(size: int, tensors: int) -> dict:
    inner = (
        f"mount -t tmpfs -o size={size} tmpfs /dev/shm && exec {shlex.quote(sys.executable)} "
        f"-m gemlint.bench.pairs.gem605.exchange --tensors {tensors} --mib {TENSOR_MIB}"
    )
    completed = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner], capture_output=True, text=True, timeout=300
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"arrived": 0, "seconds": None, "error": (completed.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def measure(ctx: PairContext) -> list[Measurement]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise SkipPair("needs root and unshare(1) to give a child process a /dev/shm of its own (a private mount namespace)")
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        raise SkipPair("mount namespaces are not available here (unshare --mount failed)")
    tensors = ctx.scale(12, 48)
    sizes = {variant: shm_size(ctx.pair.variant_path(variant).read_text(encoding="utf-8")) for variant in ("bad", "good")}
    trials = [(exchange(sizes["bad"], tensors), exchange(sizes["good"], tensors)) for _ in range(ctx.scale(1, 3))]
    bad, good = trials[0]
    moved = f"{tensors} tensors of {TENSOR_MIB} MiB, up to 4 in flight"
    shm = f"/dev/shm {sizes['bad'] // 2**20} MiB vs {sizes['good'] // 2**20} MiB"
    rate = lambda run: (run["arrived"] * TENSOR_MIB / run["seconds"]) if run["arrived"] and run["seconds"] else None  # noqa: E731
    bad_rates = tuple(r for r in (rate(b) for b, _ in trials) if r)
    good_rates = tuple(r for r in (rate(g) for _, g in trials) if r)
    bad_rate = statistics.median(bad_rates) if len(bad_rates) == len(trials) else None
    good_rate = statistics.median(good_rates) if len(good_rates) == len(trials) else None
    return [
        Measurement(f"transfers that failed ({moved}; {shm})", "transfers", tensors - bad["arrived"], tensors - good["arrived"], deterministic=True),
        Measurement(
            f"throughput of the transfers that arrived ({shm})",
            "MiB/s",
            bad_rate,
            good_rate,
            skipped=None if bad_rate and good_rate else f"no transfer arrived with the small /dev/shm ({bad.get('error')})",
            bad_runs=bad_rates,
            good_runs=good_rates,
        ),
    ]
