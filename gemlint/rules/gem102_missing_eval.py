from __future__ import annotations


import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.module import evidence_precision, Verdict
from gemlint.analysis.models import ModelOrigin, Origin, shown
from gemlint.analysis.triage import PROJECT_CONTEXT, PROJECT_MODELS, InferenceContext
from gemlint.diagnostics import Applicability, Edit, Fix, Severity
from gemlint.rule import AnalysisRule


# A class's own code that reads or sets its mode.
class MissingEval(AnalysisRule):
    code = "GEM102"
    name = "missing-eval"
    severity = Severity.WARNING
    summary = "A model constructed in code serves predictions without ever being put in eval mode."
    rationale = (
        "Modules start in training mode, and loading weights with `load_state_dict` does not change that. In "
        "training mode dropout zeroes a random share of activations on every call, so the same request gets "
        "different answers, and batch norm normalises with the statistics of the current batch (and keeps "
        "updating its running statistics), so an answer depends on the other requests batched with it. "
        "`model.eval()` switches every submodule to inference behaviour."
    )
    not_flagged = (
        "Models from transformers/diffusers/sentence-transformers `from_pretrained` (returned in eval mode).",
        "Test modules (`tests/`, `conftest.py`, `test_*.py`, `*_test.py`; outside a test folder, a file with a "
        "`__main__` block counts only when it holds tests) and `test*` functions, unless `inference-paths` names the "
        "file: a test runs the code it checks; likewise instances of classes named as test classes (`TestModule`), "
        "the stand-ins a check builds.",
        "Whole modules loaded with `torch.load` / `torch.jit.load` / `torch.hub.load`, whose saved mode is unknown.",
        "Models put in eval mode anywhere reachable in the file: `.eval()` or `.train(False)` on any name, "
        "attribute, wrapper (`.to()`, `torch.compile`, `DataParallel`) or parameter that holds the model (the "
        "attribute of a plain object built with it included: `load_weights(extractor.model)` with `extractor = "
        "Extractor(root, model)` keeping it as `self.model`), or in "
        "the model class's own `__init__` or in one of its methods called on it (in this module or another: a vocoder's `generate` "
        "that calls `self.eval()`), or a wrapper without `forward` "
        "whose methods put what they run in eval mode (and none puts it back in training mode); likewise what a "
        "project factory returns when it builds such a class (`create_metric(...)` returning `InferenceModel(...)`, "
        "whose `__init__` calls `self.net.eval()`).",
        "Submodules: modules built inside an nn.Module subclass or passed to a container (`nn.Sequential(...)`), "
        "whose mode follows their parent's.",
        "Wrappers built around a model already in eval mode (a pretrained model, or one a project factory or "
        "registry of factories put in eval mode, passed to the wrapper's constructor), and wrappers whose parts "
        "come from project loaders that return them in eval mode (`self.generator, self.config = "
        "load_generator(path)`, whose body calls `generator.eval()`): the parts run in eval mode whatever the "
        "wrapper's own flag says.",
        "Models only run as a warm-up or a check on made-up input whose result nothing reads (or only its shape), or "
        "in runs whose values nothing reads, whatever their input (the result dropped, or read for its shape or type "
        "alone, also through another model's run it feeds: a notebook's check of an encoder's output shape, then of "
        "the decoder's), or "
        "in the printing "
        "`__main__` block of a module other modules use, or models that keep the random weights a hub library's "
        "class was built with from a configuration (see GEM101).",
        "Models only used in training code, and torch.nn layers whose output does not depend on the mode "
        "(`nn.Linear`, `nn.Conv2d`, ..., `nn.LSTM`, `nn.GRU`, `nn.RNN` and `nn.MultiheadAttention` left at their "
        "default dropout of 0 or built with one layer, whose dropout falls between stacked layers, also through a local bound to the class: `klass = nn.LSTM`, and instance norms that "
        "keep no running statistics, `track_running_stats` left False), nor project classes "
        "built only of such layers (beside bases that add no state: `class Criterion(nn.Module, ABC)`), however deep they nest (a conditional activation, `nn.GLU(1) if gated else "
        "nn.ReLU()`, being either; a subclass of `nn.Sequential` or `nn.ModuleList` by the parts its `__init__` hands "
        "to `super().__init__`, or a block a project helper returns, `nn.Sequential(nn.Conv2d(...), nn.ReLU())`), "
        "nor what a project factory returns when every class it builds is such a class, numbers, buffers (where no "
        "method reads `self.training`), tensors their own methods compute with torch functions "
        "(`self.magnitude = self.transform(x)`) and TorchScript custom classes "
        "(`self.op = torch.classes.ns.Decoder(...)`, a kernel with no train or eval mode).",
        "The TensorFlow and Flax classes of transformers and diffusers (`TFBertModel`, `FlaxAutoModel`): no torch "
        "modules.",
        "A project class taken for a model by how it is used (`load_state_dict`, called) whose definition the "
        "project index does not reach (re-exported through star imports): what layers it holds, and so whether "
        "`.eval()` changes anything, is unknown.",
        "A project nn.Module whose parts are only data, plain project objects and objects of packages other than "
        "torch and the model libraries (a feature extractor's `Fbank`, a clustering back end), and the options its "
        "constructor was given where their defaults are literal values (`use_gpu=True`, `gpu_ids=[0]`): none of its "
        "layers is seen, so it is not judged as a model (nor by GEM101).",
    )
    bad = """\
import torch
from torch import nn
from fastapi import FastAPI

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 10))

    def forward(self, x):
        return self.body(x)

app = FastAPI()
model = Classifier()
model.load_state_dict(torch.load("classifier.pt"))

@app.post("/classify")
@torch.inference_mode()
def classify(features: list[float]):
    return model(torch.tensor([features])).argmax(-1).item()
"""
    good = """\
import torch
from torch import nn
from fastapi import FastAPI

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 10))

    def forward(self, x):
        return self.body(x)

app = FastAPI()
model = Classifier()
model.load_state_dict(torch.load("classifier.pt"))
model.eval()

@app.post("/classify")
@torch.inference_mode()
def classify(features: list[float]):
    return model(torch.tensor([features])).argmax(-1).item()
"""
    fix = Applicability.UNSAFE
    fix_note = (
        "The fix inserts `<name>.eval()` on the line after the binding, with the same indentation. It is unsafe "
        "because code that trains the same object later (fine-tuning on the fly) would need `.train()` again."
    )
    benchmark = "Output spread over repeated calls (dropout) and batch-norm running-statistics drift, train vs eval mode."
    tags = ("correctness", "performance", "pytorch")
    notebooks = True
    notebooks_reason = (
        "A model left in training mode gives other outputs on every run (dropout) and drifts its batch-norm "
        "statistics, so what the notebook shows is not what the model does."
    )
    prefilter = ("torch", "timm", "transformers", "diffusers", "lightning", "load_state_dict")
    sees_project = (PROJECT_CONTEXT, PROJECT_MODELS)

    syntax_gate = InferenceContext()

    def visit_Module(self, node: cst.Module) -> None:
        if not self.analysis.may_have_inference_context:
            return  # nothing here serves predictions; skip the model tracking (it resolves every call's name)
        models = self.analysis.models
        constructions = models.constructions()
        if not constructions:
            return
        served: dict[cst.CSTNode, Verdict] = {}
        for call, receiver in models.uses():
            origins = models.origins(receiver)
            if not any(origin.node not in served or served[origin.node].name_only for origin in origins):
                continue
            if len(origins) > 1 and any(self._settled(origin) for origin in origins):
                # `model` is a loaded model in eval mode on one path and a fresh build on another (a factory that
                # builds for training when not asked for weights): which one serves here is not known
                continue
            if self._used_as_submodule(call, receiver) or self.analysis.discarded_run_on_made_up_input(call):
                continue  # a warm-up or a check on made-up input serves no prediction
            if self.analysis.values_unread(call):
                continue  # nor does a run whose values nothing reads (a shape check): the mode changes only values
            if models.runs_random_weights(receiver):
                continue  # nor does a model that keeps the random weights it was built with
            verdict = self.analysis.reported_context(call)
            if verdict.is_inference:
                for origin in origins:
                    if origin.node not in served or (served[origin.node].name_only and not verdict.name_only):
                        served[origin.node] = verdict
        for origin, bindings in constructions:
            verdict = served.get(origin.node)
            if verdict is None or models.set_to_eval(origin) or self._submodule(bindings) or self._wraps_evaluated_model(origin):
                continue
            if self._mode_free(origin) or origin.unseen_class:
                continue  # `.eval()` would change nothing, or whether it would is unknown (its layers are not seen)
            self._report(origin, bindings, verdict)

    def _settled(self, origin: ModelOrigin) -> bool:
        """A producer whose model needs no ``.eval()`` here: pretrained, or put in eval mode."""
        return origin.kind is Origin.PRETRAINED or (origin.kind is Origin.CONSTRUCTED and self.analysis.models.set_to_eval(origin))

    def _mode_free(self, origin: ModelOrigin) -> bool:
        """A project class whose train and eval modes are the same (buffers and torch parts without a mode
        only): `.eval()` would change nothing."""
        if not isinstance(origin.node, cst.Call):
            return False
        func = origin.node.func
        local = self.analysis.local_classes.get(func.value) if isinstance(func, cst.Name) else None
        if local is not None and self._reads_mode(local):
            return False  # `if self.training:` in its own code: the index sees calls, not this read
        outside = self.analysis.outside
        if outside is not None and (outside.mode_free_class(self.analysis, func) or outside.sets_own_eval_mode(self.analysis, func)):
            return True
        return local is not None and self.analysis.models.built_from_plain_layers(local)

    def _reads_mode(self, cls: cst.ClassDef) -> bool:
        """The class's code (not its comments) reads ``training``: ``self.training``, ``training=...``."""
        return any(isinstance(node, cst.Name) and node.value == "training" for node in self.analysis.subtree(cls, into_scopes=True))

    def _used_as_submodule(self, call: cst.Call, receiver: cst.BaseExpression) -> bool:
        """``self.resampler(x)`` in a method of an nn.Module: the model runs as a submodule of that module
        (wherever it was built and handed over), in the mode its parent's ``.eval()`` sets."""
        return _on_self(receiver) and self._in_model_method(call)

    def _in_model_method(self, node: cst.CSTNode) -> bool:
        """``node`` is inside a method of an nn.Module subclass (one that defines ``forward`` counts)."""
        function = self.analysis.enclosing_function(node)
        owner = self.analysis.enclosing_class(function) if function is not None else None
        return owner is not None and (self.analysis.models.is_model_class(owner) or _defines_forward(owner))

    def _wraps_evaluated_model(self, origin: ModelOrigin) -> bool:
        """The construction takes a model that is already in eval mode (``Wrapper(model=sam)``): a wrapper around
        it, whose mode the wrapped model's ``.eval()`` settled."""
        if not isinstance(origin.node, cst.Call):
            return False
        models = self.analysis.models
        for argument in origin.node.args:
            held = models.origins(_parts_source(argument.value))
            if held and all(o.kind is Origin.PRETRAINED or (o.kind in (Origin.CONSTRUCTED, Origin.EVIDENT) and models.set_to_eval(o)) for o in held):
                return True
        return False

    def _submodule(self, bindings: list[cst.BaseSmallStatement]) -> bool:
        """``self.x = Net()`` inside an nn.Module: a submodule, whose mode follows its parent's ``.eval()``."""
        return any(_on_self(_target(binding)) and self._in_model_method(binding) for binding in bindings)

    def _report(self, origin: ModelOrigin, bindings: list[cst.BaseSmallStatement], verdict: Verdict) -> None:
        reason = verdict.reason
        binding = bindings[0] if bindings else None
        target = _target(binding) if binding is not None else None
        name = shown(target) if target is not None else None
        what = f"`{name}` ({origin.description})" if name else origin.description[0].upper() + origin.description[1:]
        call = f"`{name}.eval()`" if name else "`.eval()`"
        self.report(
            binding if binding is not None else (self.analysis.enclosing_statement(origin.node) or origin.node),
            f"{what} is never put in eval mode but serves predictions ({reason}): dropout and batch norm keep "
            f"their training behaviour; call {call} after building it",
            fix=self._fix(binding, name) if binding is not None and name else None,
            precision=evidence_precision(verdict),
        )

    def _fix(self, binding: cst.BaseSmallStatement, name: str) -> Fix | None:
        line = self.analysis.parent(binding)
        if not isinstance(line, cst.SimpleStatementLine) or not isinstance(self.analysis.parent(line), (cst.IndentedBlock, cst.Module)):
            return None
        start, end = self.range_of(line)
        at = self.after_line(end.line)
        prefix = "" if at.column == 1 else self.newline
        text = f"{prefix}{self.indentation(start.line)}{name}.eval(){self.newline}"
        return Fix((Edit(at, at, text),), Applicability.UNSAFE, f"call `{name}.eval()` after binding it")


def _target(binding: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    if isinstance(binding, cst.Assign) and len(binding.targets) >= 1:
        target = binding.targets[0].target
    elif isinstance(binding, cst.AnnAssign):
        target = binding.target
    else:
        return None
    return target if isinstance(target, (cst.Name, cst.Attribute)) else None


def _on_self(expression: cst.BaseExpression | None) -> bool:
    """``self.<name>``."""
    return isinstance(expression, cst.Attribute) and isinstance(expression.value, cst.Name) and expression.value.value == "self"


def _defines_forward(cls: cst.ClassDef) -> bool:
    """A derived class with a ``forward`` method: a module even when its base (``ModelMixin`` imported
    relatively, a project base in another file) cannot be resolved here."""
    return bool(cls.bases) and any(
        isinstance(statement, cst.FunctionDef) and statement.name.value == "forward" for statement in cls.body.body
    )


def _parts_source(value: cst.BaseExpression) -> cst.BaseExpression:
    """The model whose layers ``value`` hands over (``*list(vgg.children())[:31]``: ``vgg``), else ``value``: a
    container built from an evaluated model's layers holds them in the mode they are in."""
    current = value.value if isinstance(value, cst.StarredElement) else value
    while True:
        if isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Name) and current.func.value in ("list", "tuple") and current.args:
            current = current.args[0].value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in fw.MODULE_LAYER_METHODS:
            return current.func.value
        else:
            return value
