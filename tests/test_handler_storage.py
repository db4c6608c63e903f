"""Where a load is stored, read by the handler analysis: an assignment outlives its call when it sets an
attribute or a name the function declares ``global`` or ``nonlocal`` itself (not a nested function or class)."""

from __future__ import annotations

import libcst as cst

from gemlint.analysis.handlers import _stored_beyond_the_call
from test_models import analyse, call

SOURCE = """\
import torch

MODEL = None
CACHE = {}


def load_global():
    global MODEL
    MODEL = torch.load("a.pt")


def load_local():
    MODEL = torch.load("b.pt")

    def forget():
        global MODEL
        MODEL = None

    class Holder:
        global MODEL

    return MODEL


def load_enclosing():
    model = None

    def inner():
        nonlocal model
        model = torch.load("c.pt")

    inner()
    return model


def load_into_cache():
    CACHE["m"] = torch.load("d.pt")
"""


def _stored(text: str):
    analysis = analyse(SOURCE)
    found = _stored_beyond_the_call(analysis, call(analysis, text))
    return (type(found[0]), found[1]) if found is not None else None


def test_a_global_the_function_declares_outlives_the_call():
    assert _stored('torch.load("a.pt")') == (cst.Assign, {"MODEL"})


def test_a_global_declared_only_by_a_nested_function_or_class_leaves_the_name_local():
    assert _stored('torch.load("b.pt")') is None


def test_a_nonlocal_outlives_the_inner_call():
    assert _stored('torch.load("c.pt")') == (cst.Assign, {"model"})


def test_an_item_of_a_module_level_container_outlives_the_call():
    assert _stored('torch.load("d.pt")') == (cst.Assign, {"CACHE"})
