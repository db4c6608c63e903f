"""A server start-up that leaves TorchDynamo's debug logging on."""

import logging

import torch


def configure_logging():
    torch._logging.set_logs(dynamo=logging.DEBUG)


def compile_model(model):
    return torch.compile(model, backend="eager")
