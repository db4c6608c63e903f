"""An embedding service that pads each batch to its longest request."""

import torch


def predict(tokenizer, model, texts: list[str]) -> torch.Tensor:
    batch = tokenizer(texts, padding="longest", truncation=True, max_length=512, return_tensors="pt")
    batch = batch.to(model.device)
    with torch.inference_mode():
        return model(**batch).last_hidden_state
