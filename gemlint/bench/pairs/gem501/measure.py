"""Runs both variants on the ONNX model of ``pairs/_onnx.py`` (built in code)."""

from __future__ import annotations

import numpy as np
import onnx

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._onnx import build_model
from gemlint.bench.timing import compare_latency


def optimized_nodes(variant, model_path: str, out_path: str) -> int:
    """Nodes left after the variant's optimization level, from the model ORT writes (optimized_model_filepath)."""
    import onnxruntime as ort

    options = variant.session_options()
    options.optimized_model_filepath = out_path
    ort.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
    return len(onnx.load(out_path).graph.node)


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    model_path = str(ctx.workdir / "mlp.onnx")
    onnx.save(build_model(), model_path)
    nodes = (
        optimized_nodes(bad, model_path, str(ctx.workdir / "bad.optimized.onnx")),
        optimized_nodes(good, model_path, str(ctx.workdir / "good.optimized.onnx")),
    )
    features = np.random.default_rng(1).standard_normal((ctx.scale(8, 32), 256)).astype(np.float32)
    bad_session, good_session = bad.create_session(model_path), good.create_session(model_path)
    bad_ms, good_ms = compare_latency(
        lambda: bad.predict(bad_session, features), lambda: good.predict(good_session, features), quick=ctx.quick
    )
    return [
        Measurement("graph nodes after ORT optimization", "nodes", *nodes, deterministic=True),
        Measurement(f"latency per request (batch of {features.shape[0]})", "ms", bad_ms, good_ms),
    ]
