"""The same start-up, with TorchDynamo logging at WARNING."""

import logging

import torch


def configure_logging():
    torch._logging.set_logs(dynamo=logging.WARNING)


def compile_model(model):
    return torch.compile(model, backend="eager")
