"""The families of forward passes the health-check rules follow, and how their messages name each: a model called
directly, or an inference engine asked to generate (:mod:`gemlint.analysis.engines`)."""

from __future__ import annotations

ENGINE = "engine"  # the family of forward passes that an engine runs for a submitted request


def runs_phrase(family: str) -> str:
    """What a message says code that runs a forward of ``family`` does."""
    return "runs a model forward pass by requesting a generation" if family == ENGINE else "runs a model forward pass"


def forward_label(family: str) -> str:
    """What a message calls the call that runs a forward of ``family``."""
    return "the generation request" if family == ENGINE else "the forward pass"
