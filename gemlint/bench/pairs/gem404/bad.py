"""A service entry point that ships a debugging setting: every kernel launch waits for the GPU."""

import os

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
