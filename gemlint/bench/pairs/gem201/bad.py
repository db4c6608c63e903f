"""An embedding service that pads every request to the model's maximum length."""

import torch


def predict(tokenizer, model, texts: list[str]) -> torch.Tensor:
    batch = tokenizer(texts, padding="max_length", truncation=True, max_length=512, return_tensors="pt")
    batch = batch.to(model.device)
    with torch.inference_mode():
        return model(**batch).last_hidden_state
