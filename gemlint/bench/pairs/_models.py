"""Small torch workloads shared by the pairs' measurements (built in code, seeded)."""

from __future__ import annotations

import torch
from torch import nn


def prepare(device: str) -> None:
    """One intra-op thread on the CPU: on a shared machine more threads mostly measure contention."""
    if device == "cpu":
        torch.set_num_threads(1)


def mlp(features: int = 256, hidden: int = 512, layers: int = 4, device: str = "cpu") -> nn.Module:
    torch.manual_seed(0)
    blocks: list[nn.Module] = []
    width = features
    for _ in range(layers):
        blocks += [nn.Linear(width, hidden), nn.GELU()]
        width = hidden
    blocks.append(nn.Linear(width, features))
    return nn.Sequential(*blocks).to(device)


def batch(rows: int, features: int = 256, device: str = "cpu") -> torch.Tensor:
    generator = torch.Generator().manual_seed(1)
    return torch.randn(rows, features, generator=generator).to(device)


def synchronizer(device: str):
    return torch.cuda.synchronize if device == "cuda" else (lambda: None)
