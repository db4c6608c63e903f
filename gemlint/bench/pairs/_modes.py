"""What a model left in training mode does to inference: dropout noise, batch statistics, drifting running stats."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from gemlint.bench.pair import Measurement


def classifier(features: int = 64, hidden: int = 128, classes: int = 10) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(features, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(0.2), nn.Linear(hidden, classes)
    )


def trained_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """Seeded weights, with BatchNorm statistics that differ from a fresh layer's, as after training."""
    torch.manual_seed(0)
    for module in model.modules():
        if module is not model and hasattr(module, "reset_parameters"):
            module.reset_parameters()
        if isinstance(module, nn.BatchNorm1d):
            module.running_mean.normal_(0.0, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return {key: value.clone() for key, value in model.state_dict().items()}


def requests(count: int, rows: int, features: int = 64) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return [torch.randn(rows, features, generator=generator) * 2 + 0.5 for _ in range(count)]


def mode_measurements(
    run: Callable[[torch.Tensor], torch.Tensor], model: nn.Module, reference: Callable[[torch.Tensor], torch.Tensor], count: int
) -> dict[str, float]:
    """Serve ``count`` requests through ``run``; compare with the eval-mode ``reference`` model."""
    batches = requests(count, rows=16)
    running = [module.running_mean.clone() for module in model.modules() if isinstance(module, nn.BatchNorm1d)]
    torch.manual_seed(2)
    first, again = run(batches[0]), run(batches[0])
    changed = total = 0
    for inputs in batches:
        changed += int((run(inputs).argmax(-1) != reference(inputs).argmax(-1)).sum())
        total += inputs.shape[0]
    after = [module.running_mean for module in model.modules() if isinstance(module, nn.BatchNorm1d)]
    return {
        "repeat": float((first - again).abs().max()),
        "labels": 100.0 * changed / total,
        "drift": float(sum((a - b).norm() for a, b in zip(after, running))),
    }


def as_measurements(bad: dict[str, float], good: dict[str, float], count: int) -> list[Measurement]:
    return [
        Measurement("max output difference between two identical requests (dropout)", "", bad["repeat"], good["repeat"], deterministic=True),
        Measurement(f"predicted labels that differ from eval mode, over {count} requests", "%", bad["labels"], good["labels"], deterministic=True),
        Measurement(f"BatchNorm running-mean drift (L2) after {count} requests", "", bad["drift"], good["drift"], deterministic=True),
    ]
