"""A scoring service that loads its TorchScript model at start-up and lets the first request run it cold."""

import torch
from fastapi import FastAPI

app = FastAPI()
MODEL_PATH = "model.pt"
state = {}


@app.on_event("startup")
def load():
    state["model"] = torch.jit.load(MODEL_PATH)


@app.post("/score")
def score(features: list[list[float]]) -> list[list[float]]:
    with torch.inference_mode():
        return state["model"](torch.tensor(features)).tolist()
