"""The same prediction function, with the model in eval mode."""

import torch
from torch import nn


@torch.inference_mode()
def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    model.eval()
    return model(batch)
