"""The same service; start-up runs the model on a representative batch before it takes traffic."""

import torch
from fastapi import FastAPI

app = FastAPI()
MODEL_PATH = "model.pt"
state = {}


@app.on_event("startup")
def load():
    state["model"] = torch.jit.load(MODEL_PATH)
    example = torch.zeros(8, 256)
    with torch.inference_mode():
        for _ in range(3):  # TorchScript specialises over its first runs
            state["model"](example)


@app.post("/score")
def score(features: list[list[float]]) -> list[list[float]]:
    with torch.inference_mode():
        return state["model"](torch.tensor(features)).tolist()
