"""An image classifier behind FastAPI: the model runs on every request and on every liveness probe."""

import torch
from fastapi import FastAPI
from torch import nn
from transformers import AutoModelForSequenceClassification


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 10))

    def forward(self, x):
        return self.backbone(x)


app = FastAPI()
model = Classifier()
model.load_state_dict(torch.load("classifier.pt", weights_only=True))


@app.post("/classify")
def classify(features: list[float]):
    logits = model(torch.tensor([features]))
    return {"label": int(logits.argmax())}


@app.get("/healthz")
def healthz():
    model(torch.zeros(1, 512))  # "make sure the model still works"
    return {"ok": True}


@app.post("/rerank")
def rerank(texts: list[str]):
    reranker = AutoModelForSequenceClassification.from_pretrained("cross-encoder/ms-marco-MiniLM-L-6-v2")
    return {"count": len(texts), "labels": reranker.config.num_labels}
