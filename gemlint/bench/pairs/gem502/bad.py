"""A scoring endpoint that opens the ONNX model on every request."""

import os

import numpy as np
import onnxruntime as ort
from fastapi import FastAPI

app = FastAPI()
MODEL_PATH = os.environ.get("MODEL_PATH", "model.onnx")


@app.post("/score")
def score(features: list[list[float]]) -> list[list[float]]:
    session = ort.InferenceSession(MODEL_PATH, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": np.asarray(features, dtype=np.float32)})[0].tolist()
