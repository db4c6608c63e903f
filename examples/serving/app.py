"""A small text-embedding service, written the way many first versions are."""

import os

import onnxruntime as ort
import torch
from fastapi import FastAPI
from transformers import AutoTokenizer

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # left over from chasing an illegal memory access
torch.autograd.set_detect_anomaly(True)

app = FastAPI()
tokenizer = AutoTokenizer.from_pretrained("sentence-transformers/all-MiniLM-L6-v2")

options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession("model.onnx", sess_options=options)


@app.post("/embed")
def embed(texts: list[str]):
    with torch.profiler.profile(record_shapes=True):
        batch = tokenizer(texts, padding="max_length", truncation=True, max_length=8192, return_tensors="np")
        (embeddings,) = session.run(None, {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]})
    return {"embeddings": embeddings.tolist()}
