"""Linting frees what it built by reference counts: a module's trees (LibCST's, its metadata, the ``ast`` tree the
index walks) hold hundreds of thousands of objects, and a cycle through any of them leaves them all to the cyclic
collector, which walks them before it frees them (a tenth of a large project's cold run)."""

from __future__ import annotations

import ast
import gc
from collections import Counter

import pytest

from gemlint.api import lint_source
from gemlint.project.summary import summarise

SERVICE = """\
import torch
from fastapi import FastAPI
from transformers import AutoModel, AutoTokenizer

app = FastAPI()
tokenizer = AutoTokenizer.from_pretrained("org/encoder")
model = AutoModel.from_pretrained("org/encoder")


class Scorer:
    def __init__(self, net):
        self.net = net

    def score(self, batch):
        return self.net(**batch).logits


@app.post("/embed")
def embed(text: str):
    batch = tokenizer(text, padding="max_length", max_length=512, return_tensors="pt")
    return model(**batch).last_hidden_state.tolist()
"""


@pytest.fixture
def collector_off():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _garbage() -> Counter:
    """The objects only the cyclic collector would free, by type (found, then let go)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


def test_summarising_a_module_leaves_no_cycle_behind(collector_off):
    assert not _garbage()
    summary = summarise(ast.parse(SERVICE), "service", False)
    assert summary.functions  # the walk ran
    assert not _garbage()


def test_linting_a_file_frees_its_trees_and_analysis_without_the_cyclic_collector(collector_off):
    lint_source(SERVICE, "service.py")  # warm: imports and caches of the first lint stay for the process
    assert not _garbage().keys() & {"Module", "ModuleAnalysis", "PythonFileContext"}
    found = lint_source(SERVICE, "service.py")
    assert {d.code for d in found} >= {"GEM101", "GEM201"}
    # LibCST's scopes are a graph of their own (a scope and its assignments refer to each other), and keep the
    # definitions they record; the module, its metadata and the analysis must not be part of it.
    garbage = _garbage()
    assert not garbage.keys() & {"Module", "MetadataWrapper", "ModuleAnalysis", "PythonFileContext", "ModuleIndex"}, garbage.most_common(5)
