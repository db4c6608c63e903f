from __future__ import annotations

import torch

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._autograd import SavedTensors
from gemlint.bench.pairs._models import batch, mlp, prepare


class PeakSavedTensors(SavedTensors):
    """Also records the most bytes saved for backward alive at once, sampled each time autograd saves one."""

    def __init__(self, exclude=()) -> None:
        super().__init__(exclude)
        self.peak = 0

    def _pack(self, tensor: torch.Tensor):
        saved = super()._pack(tensor)
        # Graphs are freed by reference counting as soon as their last reference goes, so no collection is needed.
        storages = {}
        for held in list(self._live):
            storage = held.tensor.untyped_storage()
            if storage.data_ptr() not in self._excluded:
                storages[storage.data_ptr()] = storage.nbytes()
        self.peak = max(self.peak, sum(storages.values()))
        return saved


def peak_bytes(variant, rows: int, steps: int, device: str) -> int:
    """The peak of bytes saved for backward over ``steps`` steps (parameters and inputs excluded): a retained
    graph is still alive while the next step's forward builds its own."""
    model = mlp(device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs = batch(rows, device=device)
    with PeakSavedTensors(exclude=[*model.parameters(), inputs]) as saved:
        variant.fine_tune(model, optimizer, [inputs] * steps)
    return saved.peak


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    steps = ctx.scale(5, 20)
    return [
        Measurement(f"peak bytes saved for backward, {rows} rows", "bytes", peak_bytes(bad, rows, steps, ctx.device), peak_bytes(good, rows, steps, ctx.device), deterministic=True)
        for rows in (16, 32)
    ]
