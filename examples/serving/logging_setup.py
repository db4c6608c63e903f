import logging
import os

os.environ["TORCH_LOGS"] = "+dynamo,recompiles"
logging.getLogger("torch._dynamo").setLevel(logging.DEBUG)
