"""The same prediction function, profiling only when PROFILE=1 is set."""

import contextlib
import os

import torch

PROFILE = os.environ.get("PROFILE") == "1"


def predict(model, batch):
    with torch.profiler.profile(record_shapes=True) if PROFILE else contextlib.nullcontext():
        with torch.inference_mode():
            return model(batch)
