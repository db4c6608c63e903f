"""A fine-tuning step that always runs autograd in anomaly-detection mode."""

import torch


def update(model, optimizer, batch):
    with torch.autograd.set_detect_anomaly(True):
        optimizer.zero_grad()
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
    return loss
