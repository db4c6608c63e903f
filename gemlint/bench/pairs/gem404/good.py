"""The same entry point, blocking launches only when DEBUG_CUDA is set."""

import os

if os.environ.get("DEBUG_CUDA"):
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
