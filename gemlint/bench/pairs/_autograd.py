"""Counts the bytes autograd keeps for backward, through ``torch.autograd.graph.saved_tensors_hooks``."""

from __future__ import annotations

import gc
import weakref
from typing import Iterable

import torch


class _Saved:
    """What autograd stores instead of a saved tensor while the tracker is active; freed with the graph."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


class SavedTensors:
    """Within the ``with`` block, every tensor saved for backward is wrapped; ``live_bytes`` sums those still held.

    Storages of ``exclude`` (parameters, the caller's inputs), alive anyway, are not counted,
    and a storage saved by several operations is counted once.
    """

    def __init__(self, exclude: Iterable[torch.Tensor] = ()) -> None:
        self._excluded = {tensor.untyped_storage().data_ptr() for tensor in exclude}
        self._live: "weakref.WeakSet[_Saved]" = weakref.WeakSet()
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def _pack(self, tensor: torch.Tensor) -> _Saved:
        saved = _Saved(tensor)
        self._live.add(saved)
        return saved

    @staticmethod
    def _unpack(saved: _Saved) -> torch.Tensor:
        return saved.tensor

    def __enter__(self) -> "SavedTensors":
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self._hooks.__exit__(*exc_info)

    def live_bytes(self) -> int:
        gc.collect()
        storages: dict[int, int] = {}
        for saved in list(self._live):
            storage = saved.tensor.untyped_storage()
            if storage.data_ptr() not in self._excluded:
                storages[storage.data_ptr()] = storage.nbytes()
        return sum(storages.values())
