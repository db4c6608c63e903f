"""The model-object tracker (gemlint.analysis.models), asked directly as other rules will ask it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from gemlint.analysis.models import Origin
from gemlint.config import default_config
from gemlint.discovery import SourceFile
from gemlint.python_lint import PythonFileContext
from gemlint.languages import Language


def analyse(source: str, root: Path | None = None):
    module = cst.parse_module(source)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    config = default_config(root or Path("/nonexistent-gemlint-root"))
    context = PythonFileContext(SourceFile(Path("svc.py"), Language.PYTHON, "svc.py", "svc.py"), source, module, wrapper, config)
    return context.analysis


def calls(analysis, text: str) -> list[cst.Call]:
    """Calls whose source text is ``text``."""
    return [node for node in analysis.nodes_of(cst.Call) if analysis.module.code_for_node(node) == text]


def call(analysis, text: str) -> cst.Call:
    found = calls(analysis, text)
    assert len(found) == 1, (text, found)
    return found[0]


SERVICE = """\
import torch
import torch.nn as nn
from transformers import AutoModel, AutoTokenizer, pipeline

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)

class Deeper(Net):
    pass

tok = AutoTokenizer.from_pretrained("b")
pre = AutoModel.from_pretrained("b")
pipe = pipeline("fill-mask")
loaded = torch.load("m.pt")
built = Deeper().to("cuda")
compiled = torch.compile(built)

class Service:
    holder = Net()

    def __init__(self, model: nn.Module, other):
        self.model = model
        self.other = other
        self.registry_model = registry.get("m")
        self.registry_model.eval()

    def run(self, x):
        return self.model(x), self.other(x), self.holder(x), self.registry_model(x), Service.holder(x)

def helper(m, x):
    return m(x)

def caller(x):
    return helper(built, x), helper(pre, x)

def uses(x):
    return pre(x), pre.forward(x), pre.generate(x), pipe(x), tok(x), loaded(x), compiled(x), pre.encoder(x)
"""


def test_producers_are_classified_by_origin_kind():
    analysis = analyse(SERVICE)
    models = analysis.models
    assert models.origins(call(analysis, "pre(x)").func)[0].kind is Origin.PRETRAINED
    assert models.origins(call(analysis, "loaded(x)").func)[0].kind is Origin.LOADED
    compiled = models.origins(call(analysis, "compiled(x)").func)
    assert [o.kind for o in compiled] == [Origin.CONSTRUCTED]  # through torch.compile and .to() to Deeper()
    assert "nn.Module subclass defined in this file" in compiled[0].description
    assert models.direct_origins(call(analysis, 'Deeper().to("cuda")')) == compiled


def test_forward_calls_and_what_is_not_one():
    analysis = analyse(SERVICE)
    models = analysis.models
    forwards = {text: models.forward_call(call(analysis, text)) for text in (
        "pre(x)", "pre.forward(x)", "pre.generate(x)", "pipe(x)", "tok(x)", "loaded(x)", "compiled(x)", "pre.encoder(x)",
    )}
    assert forwards == {
        "pre(x)": True, "pre.forward(x)": True, "pre.generate(x)": False, "pipe(x)": False,
        "tok(x)": False, "loaded(x)": True, "compiled(x)": True, "pre.encoder(x)": False,
    }


def test_attributes_parameters_and_callers():
    analysis = analyse(SERVICE)
    models = analysis.models
    assert models.is_model(call(analysis, "self.model(x)").func) == "parameter `model`, annotated as a model"
    assert models.is_model(call(analysis, "self.other(x)").func) is None  # no evidence, no caller
    assert models.is_model(call(analysis, "self.holder(x)").func)  # class attribute
    assert models.is_model(call(analysis, "Service.holder(x)").func)
    assert models.is_model(call(analysis, "self.registry_model(x)").func) == "`self.registry_model`, used as an nn.Module"
    # `m` is given a model by every caller: it holds both.
    kinds = {o.kind for o in models.origins(call(analysis, "m(x)").func)}
    assert kinds == {Origin.EVIDENT, Origin.CONSTRUCTED, Origin.PRETRAINED}


def test_a_parameter_whose_default_is_a_class_holds_a_class_not_a_model():
    source = (
        "from torch import nn\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self, width, linear_cls: nn.Module = nn.Linear):\n"
        "        super().__init__()\n"
        "        self.proj = linear_cls(width, width)\n\n"
        "    def score(self, x, head: nn.Module):\n"
        "        return head(x)\n"
    )
    analysis = analyse(source)
    assert analysis.models.is_model(call(analysis, "linear_cls(width, width)").func) is None
    assert analysis.models.is_model(call(analysis, "head(x)").func) == "parameter `head`, annotated as a model"


def test_a_parameter_not_always_given_a_model_is_not_one():
    analysis = analyse("def helper(m, x):\n    return m(x)\n\nhelper(lambda v: v, 1)\n")
    assert analysis.models.is_model(call(analysis, "m(x)").func) is None


def test_trainer_train_is_no_evidence_but_called_objects_with_train_are():
    analysis = analyse("def a(trainer):\n    trainer.train()\n\ndef b(net, x):\n    net.train()\n    return net(x)\n")
    models = analysis.models
    assert models.origins(call(analysis, "trainer.train()").func.value) == ()
    assert models.origins(call(analysis, "net.train()").func.value)


def test_set_to_eval_follows_aliases_wrappers_helpers_and_the_class():
    source = """\
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)

    def ready(self):
        self.eval()

def prepare(m):
    m.train(False)
    return m

a = Net()
b = torch.compile(a)
b.eval()
c = Net()
prepare(c)
d = Net()
d.ready()
e = Net()
"""
    analysis = analyse(source)
    models = analysis.models
    by_line = {}
    for origin, bindings in models.constructions():
        target = analysis.module.code_for_node(bindings[0].targets[0].target)
        by_line[target] = models.set_to_eval(origin)
    assert by_line == {"a": True, "c": True, "d": True, "e": False}


def test_frozen_parameters():
    source = """\
def f(model, other, partial, x):
    model.eval()
    other.eval()
    partial.eval()
    model.requires_grad_(False)
    for p in other.parameters():
        p.requires_grad = False
    for name, p in partial.named_parameters():
        if name.startswith("head"):
            p.requires_grad_(False)
    return model(x), other(x), partial(x)
"""
    analysis = analyse(source)
    models = analysis.models
    assert "requires_grad_(False)" in models.frozen(call(analysis, "model(x)").func)
    assert "other.parameters()" in models.frozen(call(analysis, "other(x)").func)
    assert models.frozen(call(analysis, "partial(x)").func) is None


def test_project_class_with_module_evidence(tmp_path):
    (tmp_path / "nets.py").write_text("class Net: ...\n")
    source = "import torch\nfrom nets import Net\nfrom somewhere import Thing\n\nnet = Net()\nnet.load_state_dict(torch.load('w'))\nthing = Thing()\nthing.load_state_dict({})\n"
    analysis = analyse(source, tmp_path)
    kinds = {analysis.module.code_for_node(o.node): o.kind for o, _ in analysis.models.constructions()}
    assert kinds == {"Net()": Origin.CONSTRUCTED}


def test_submodules_are_not_constructions():
    source = """\
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)

seq = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))
"""
    analysis = analyse(source)
    constructed = [analysis.module.code_for_node(o.node) for o, _ in analysis.models.constructions()]
    assert constructed == ["nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))"]


@pytest.mark.parametrize(
    "text, mode",
    [("m.eval()", "eval"), ("m.train()", "train"), ("m.train(True)", "train"), ("m.train(False)", "eval"),
     ("m.train(mode=False)", "eval"), ("m.train(flag)", "unknown"), ("m.to(d)", None)],
)
def test_mode_call(text, mode):
    analysis = analyse(f"{text}\n")
    assert analysis.models.mode_call(call(analysis, text)) == mode


def test_guard_modes_follow_aliases():
    source = """\
import torch as T
from torch import no_grad as ng
ctx = T.no_grad()
alias = T.inference_mode
with ctx: pass
with alias(): pass
with ng(): pass
with T.enable_grad(): pass
with T.inference_mode(False): pass
with T.set_grad_enabled(flag): pass
with (T.no_grad() if a else T.enable_grad()): pass
"""
    analysis = analyse(source)
    modes = [analysis.grad_mode(item.item) for node in analysis.nodes_of(cst.With) for item in node.items]
    assert modes == ["off", "off", "off", "on", "on", "switch", "switch"]


def test_a_name_reassigned_many_times_is_judged_once_per_assignment(monkeypatch):
    """LibCST's scopes give every reference of a name to every assignment of it (they do not follow the flow):
    whether an assignment's references use it as a module is asked by each reference, and answered once."""
    from gemlint.analysis.models import ModelTracker

    steps = "".join(f"    x = step_{n}(x)\n    y = x.eval()\n" for n in range(25))
    source = f"import torch\nfrom helpers import load\n\n\ndef run(x):\n    x = load()\n{steps}    return x(y)\n"
    analysis = analyse(source)
    asked: list[int] = []
    judge = ModelTracker._nodes_used_as_module
    monkeypatch.setattr(ModelTracker, "_nodes_used_as_module", lambda self, nodes: asked.append(len(nodes)) or judge(self, nodes))
    models = analysis.models
    for node in analysis.nodes_of(cst.Name):
        if node.value == "x":
            models.origins(node)
    assert models.origins(call(analysis, "x(y)").func)[0].kind is Origin.EVIDENT
    assert len(asked) <= 26  # once per assignment of x, not once per reference and assignment


@pytest.mark.parametrize(
    "init, holds_nothing",
    [
        ("def __init__(self, top_k=64):\n        super().__init__()\n        self.top_k = top_k\n        self.squash = nn.Sigmoid()", True),
        ("def __init__(self, size=3):\n        super().__init__()\n        self.area = -(self.size ** 2) + 2 * size", True),
        # a default naming the parameter itself is the value of an outer name: unknown, and read once
        ("def __init__(self, width=width):\n        super().__init__()\n        self.width = width", False),
        ("def __init__(self, head):\n        super().__init__()\n        self.head = head", False),
        ("def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout(0.1)", False),
    ],
)
def test_a_module_that_keeps_only_settings_and_parameter_free_layers_holds_nothing(init, holds_nothing):
    source = f"import torch.nn as nn\nwidth = 3\n\n\nclass Part(nn.Module):\n    {init}\n\n\npart = Part()\n"
    analysis = analyse(source)
    constructed = call(analysis, "Part()")
    assert (analysis.models.producer(constructed) is None) is holds_nothing


def test_a_long_chain_of_operations_is_read_without_recursion():
    chain = " + ".join(["1"] * 1500)
    source = f"import torch.nn as nn\n\n\nclass Part(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.total = {chain}\n\n\npart = Part()\n"
    analysis = analyse(source)
    assert analysis.models.producer(call(analysis, "Part()")) is None


BLOCKS = """\
from torch import nn


def conv_block(channels):
    return nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))


def norm_block(channels):
    return nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels))


class PlainNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = conv_block(8)

    def forward(self, x):
        return self.body(x)


class NormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = norm_block(8)

    def forward(self, x):
        return self.body(x)
"""

SERVED = """\
import torch
from fastapi import FastAPI

from nets import NormNet, PlainNet

app = FastAPI()
plain = PlainNet()
normed = NormNet()


@app.post("/run")
@torch.inference_mode()
def run(x: list[float]):
    t = torch.tensor(x).view(1, 8, 4, 4)
    return {"plain": plain(t).sum().item(), "normed": normed(t).sum().item()}
"""


def test_a_class_whose_blocks_a_helper_builds_from_layers_without_a_mode_has_none(tmp_path):
    """`self.body = conv_block(8)`, a helper of another module returning `nn.Sequential` of convolutions and
    activations: eval mode changes nothing in the class, so it is not reported for missing it; the same class
    built from a helper whose block holds batch norm is."""
    from gemlint.api import lint_paths

    (tmp_path / "nets.py").write_text(BLOCKS)
    (tmp_path / "service.py").write_text(SERVED)
    found = [(d.path.rsplit("/", 1)[-1], d.line, d.code) for d in lint_paths([tmp_path], config=default_config(tmp_path))]
    assert found == [("service.py", 8, "GEM102")]
