"""Debugging helpers behind flags are fine: gemlint reports nothing here."""

import contextlib
import os

import torch

PROFILE = os.environ.get("PROFILE") == "1"


def maybe_profile():
    return torch.profiler.profile(record_shapes=True) if PROFILE else contextlib.nullcontext()
