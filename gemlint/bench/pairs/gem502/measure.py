"""Calls each variant's handler directly (FastAPI's decorator returns the function itself)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import onnx
import onnxruntime

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._onnx import build_model
from gemlint.bench.timing import compare_latency


def sessions_created(variant, features, requests: int) -> int:
    """InferenceSession objects the handler creates while serving ``requests`` requests after a first one."""
    variant.score(features)
    real = onnxruntime.InferenceSession
    created = []

    def counting(*args, **kwargs):
        created.append(1)
        return real(*args, **kwargs)

    with mock.patch.object(onnxruntime, "InferenceSession", counting):
        for _ in range(requests):
            variant.score(features)
    return len(created)


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    model_path = ctx.workdir / "model.onnx"
    onnx.save(build_model(), str(model_path))
    for variant in (bad, good):
        variant.MODEL_PATH = str(model_path)  # what the MODEL_PATH variable of the deployment would say
    features = np.random.default_rng(1).standard_normal((8, 256)).astype(np.float32).tolist()
    requests = ctx.scale(10, 100)
    created = sessions_created(bad, features, requests), sessions_created(good, features, requests)
    bad_ms, good_ms = compare_latency(lambda: bad.score(features), lambda: good.score(features), quick=ctx.quick)
    return [
        Measurement(f"model sessions created over {requests} requests", "sessions", *created, deterministic=True),
        Measurement("latency per request (batch of 8)", "ms", bad_ms, good_ms),
    ]
