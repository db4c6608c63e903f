"""The same endpoint; the session is created once, by a cached loader, and reused."""

import functools
import os

import numpy as np
import onnxruntime as ort
from fastapi import FastAPI

app = FastAPI()
MODEL_PATH = os.environ.get("MODEL_PATH", "model.onnx")


@functools.lru_cache(maxsize=None)
def load_session(path: str) -> ort.InferenceSession:
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


@app.post("/score")
def score(features: list[list[float]]) -> list[list[float]]:
    session = load_session(MODEL_PATH)
    return session.run(None, {"x": np.asarray(features, dtype=np.float32)})[0].tolist()
