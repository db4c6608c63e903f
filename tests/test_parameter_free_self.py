"""``self`` in a module's own methods holds no parameter when neither its class nor any project subclass of it can
hold one: its own forward (a rotary table filled when it is built) records no autograd graph. A subclass that adds
a layer makes ``self`` in the base's methods a module that may hold parameters."""

from __future__ import annotations

import libcst as cst

from gemlint.analysis.syntax import iter_subtree
from gemlint.config import default_config
from gemlint.project.files import forget_projects, project_for

EMBEDDINGS = """\
import torch
from torch import nn


class Rotary(nn.Module):
    def __init__(self, dim, length):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
        self.table = self.forward(length)

    def forward(self, length):
        return torch.outer(torch.arange(length, dtype=self.inv_freq.dtype), self.inv_freq).cos()


class ScaledRotary(Rotary):
    def forward(self, length):
        return super().forward(length) * 0.5


class Positions(nn.Module):
    def __init__(self, length):
        super().__init__()
        self._setup()
        self.table = self.forward(length)

    def _setup(self):
        self.scale = nn.Identity()

    def forward(self, length):
        return self.scale(torch.arange(length).float()[:, None])
"""
LEARNED = """\
from torch import nn

from tables.embeddings import Positions


class LearnedPositions(Positions):
    def _setup(self):
        self.scale = nn.Linear(1, 64)
"""


def _self_forwards(analysis) -> dict[str, cst.BaseExpression]:
    """The receiver of each class's ``self.forward(...)`` call, by class name."""
    found = {}
    for node in iter_subtree(analysis.module, into_scopes=True):
        func = node.func if isinstance(node, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "forward" and isinstance(func.value, cst.Name) and func.value.value == "self":
            owner = analysis.enclosing_class(analysis.enclosing_function(node))
            found[owner.name.value] = analysis.models.forward_receiver(node)
    return found


def test_self_holds_no_parameter_only_when_no_subclass_can(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'tables'\n")
    package = tmp_path / "tables"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "embeddings.py").write_text(EMBEDDINGS)
    (package / "learned.py").write_text(LEARNED)
    forget_projects()
    try:
        analysis = project_for(default_config(tmp_path)).parsed(package / "embeddings.py").analysis
        receivers = _self_forwards(analysis)
        assert set(receivers) == {"Rotary", "Positions"}
        assert analysis.models.frozen(receivers["Rotary"]) == "it holds no parameters"
        # `nn.Identity` holds none either, but `LearnedPositions` (another module) puts a layer in its place.
        assert analysis.models.frozen(receivers["Positions"]) is None
    finally:
        forget_projects()
