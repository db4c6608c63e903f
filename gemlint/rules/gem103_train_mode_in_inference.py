from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, ClassScope, ComprehensionScope, GlobalScope

from gemlint.analysis import frameworks as fw
from gemlint.analysis.module import evidence_precision
from gemlint.analysis.models import shown
from gemlint.analysis.scopes import references_of
from gemlint.analysis.syntax import bound_names
from gemlint.analysis.triage import PROJECT_CONTEXT, PROJECT_MODELS, InferenceContext, Spelled
from gemlint.diagnostics import Applicability, Severity
from gemlint.frontends.notebook import has_percent_cells
from gemlint.rule import AnalysisRule


class TrainModeInInference(AnalysisRule):
    code = "GEM103"
    name = "train-mode-in-inference"
    severity = Severity.ERROR
    summary = "A model is switched to training mode in inference code."
    rationale = (
        "`.train()` turns dropout on and makes batch norm normalise with (and update its running statistics "
        "from) each batch: predictions become random and depend on whichever requests share the batch, and "
        "the running statistics drift with the traffic until the model's accuracy degrades for everyone."
    )
    not_flagged = (
        "Training functions and loops, Lightning `training_step`, files matched by `training-paths`, and scripts "
        "that build an optimizer, make a model's adapters trainable (PEFT's `get_peft_model`) or draw its autograd "
        "graph (torchviz's `make_dot`).",
        "`.train(False)` (the same as `.eval()`), and `.train(mode)` with a run-time value.",
        "A function that puts one model in training mode and another in eval mode and runs them (a distillation or "
        "EMA loss: `online.train(); target.eval()`): it trains the first beside the frozen second, whatever calls it. "
        "(A `.train()` on the model the function itself put in eval mode restores its mode, as above.)",
        "A `train(...)` with arguments other than `mode`: another library's training job, not a mode switch "
        "(ultralytics' `YOLO.train(data=..., epochs=3)`).",
        "A `.train()` that restores training mode after the same function put the model in eval mode (an "
        "evaluation step inside a training run), a `.train()` that the same function (or script) undoes with a later "
        "`.eval()`, reading no output of the model in between (a window for fine-tuning, or for gathering batch-norm "
        "statistics by running it and dropping what it returns), and a `.train()` under an `if` on a run-time flag.",
        "A model put in training mode and then only handed to a parameter or FLOP counter or a summary (torchsummary, "
        "torchinfo, thop, fvcore), never run: the mode changes nothing the tool prints.",
        "A local (or a script's module-level name) put in training mode and never read again: nothing runs in that "
        "mode (a leftover of a training script copied into a prediction script). Not in a notebook, whose cells "
        "run in any order.",
        "Objects that are not evidently models, such as a transformers `Trainer` (`trainer.train()`), and, in a "
        "file that imports another framework with modules of its own (MLX, JAX, TensorFlow, Paddle, MegEngine, "
        "MNN) and not torch, objects known only by being called and switched.",
    )
    bad = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt")

@app.post("/predict")
@torch.inference_mode()
def predict(x: list[float]):
    model.train()
    return model(torch.tensor([x])).tolist()
"""
    good = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt")

@app.post("/predict")
@torch.inference_mode()
def predict(x: list[float]):
    model.eval()
    return model(torch.tensor([x])).tolist()
"""
    fix = Applicability.SAFE
    fix_note = "The fix replaces `.train()` with `.eval()`; both return the module, so chained calls keep working."
    benchmark = "Output spread over repeated calls (dropout) and batch-norm running-statistics drift, train vs eval mode."
    tags = ("correctness", "pytorch")
    notebooks = True
    notebooks_reason = (
        "Switching a model to training mode and then predicting makes the notebook's results random and updates "
        "batch-norm statistics, as in a service; a notebook that trains (a backward pass, an optimizer step) is "
        "training code and is not reported."
    )
    prefilter = (".train(",)
    sees_project = (PROJECT_CONTEXT, PROJECT_MODELS)

    syntax_gate = Spelled("calls", {"train"}) & InferenceContext()

    def visit_Call(self, node: cst.Call) -> None:
        models = self.analysis.models
        if models.mode_call(node) != "train":
            return
        receiver = node.func.value
        origins = models.origins(receiver)
        if not origins:
            return
        verdict = self.analysis.reported_context(node)
        if not verdict.is_inference or self._restores_mode(node, origins) or self._flag_guarded(node):
            return
        after = self._calls_after(node)
        if self._switched_back(after, origins) or self._only_measured(after, origins) or self._never_read_again(node):
            return
        replacement = node.with_changes(func=node.func.with_changes(attr=cst.Name("eval")), args=())
        self.report(
            node,
            f"`{shown(receiver)}.train()` switches the model to training mode in inference code ({verdict.reason}): "
            "dropout turns on and batch norm uses (and updates) per-batch statistics; use `.eval()`",
            fix=self.replace_fix(node, replacement, "use `.eval()`", Applicability.SAFE),
            precision=evidence_precision(verdict),
        )

    def _restores_mode(self, node: cst.Call, origins) -> bool:
        """An earlier `.eval()` of the same model in the same function: the function evaluates during training."""
        function = self.analysis.enclosing_function(node)
        if function is None:
            return False
        before, _ = self._calls_around(node, function.body)
        return any(self._switches_to_eval(call, origins) for call in before)

    def _calls_after(self, node: cst.Call) -> list[cst.Call]:
        """The calls after ``node`` in the same function (or the script's module-level code)."""
        function = self.analysis.enclosing_function(node)
        return self._calls_around(node, function.body if function is not None else self.context.module)[1]

    def _switched_back(self, after: list[cst.Call], origins) -> bool:
        """A later `.eval()` of the same model in the same function (or script), where nothing in between reads an
        output of the model: the training-mode window is for something else (fine-tuning it hands the model to,
        batch-norm statistics gathered by running it on calibration data and dropping what it returns)."""
        models = self.analysis.models
        for call in after:
            if self._switches_to_eval(call, origins):
                return True
            receiver = models.forward_receiver(call)
            if receiver is not None and self._same_model(receiver, origins) and not isinstance(self.analysis.parent(call), cst.Expr):
                return False  # an output of training mode read before it is switched back: a prediction
        return False

    def _only_measured(self, after: list[cst.Call], origins) -> bool:
        """After ``.train()``, the model is handed only to counters or summaries (thop, torchinfo, torchsummary), and
        never run: the mode changes nothing such a tool prints (an exporter is not one: it would trace dropout)."""
        models = self.analysis.models
        measured = False
        for call in after:
            receiver = models.forward_receiver(call)
            if receiver is not None and self._same_model(receiver, origins):
                return False
            if any(self._same_model(arg.value, origins) for arg in call.args):
                if not self.analysis.counts(call):
                    return False  # handed to code that may run it
                measured = True
        return measured

    def _never_read_again(self, node: cst.Call) -> bool:
        """``name.train()`` where nothing reads ``name`` afterwards: not later in its scope (a read of the name bound
        again since reads another model), not in a scope nested in it (a closure may run at any time), and not in a
        loop that comes back to an earlier read. A module-level name counts only in a script (``__main__`` block or
        top-level code that runs), which no other module imports."""
        receiver = node.func.value
        if not isinstance(receiver, cst.Name) or self._in_cells():
            return False  # a notebook's cells run in any order: a cell run later may read it
        scope = self.analysis.scope_of(receiver)
        if scope is None or isinstance(scope, (ClassScope, ComprehensionScope)):
            return False
        if isinstance(scope, GlobalScope) and not (
            (self.analysis.script_runs or self.analysis.has_main_block) and self.context.source.path.name != "__init__.py"
        ):
            return False
        here = self.range_of(node)[0]
        if any(isinstance(ancestor, (cst.For, cst.While)) for ancestor in self._ancestors_within(node, scope)):
            return False
        for assignment in scope[receiver.value]:
            if not isinstance(assignment, Assignment):
                return False  # an import or a builtin: bound elsewhere, read elsewhere
            for access in references_of(assignment):
                if access.node is receiver:
                    continue
                if access.scope is not scope:
                    return False
                at = self.range_of(access.node)[0]
                if (at.line, at.column) > (here.line, here.column):
                    if isinstance(scope, GlobalScope) and not self._same_model(access.node, self.analysis.models.origins(receiver)):
                        continue  # the name bound again since (`G = Generator(z_dim)`): this reads the new model
                    return False
        return True

    def _in_cells(self) -> bool:
        """The code is a notebook's cells (a ``.ipynb`` file, or a ``.py`` one with ``# %%`` cell markers)."""
        return self.context.source.path.suffix == ".ipynb" or has_percent_cells(self.context.text)

    def _ancestors_within(self, node: cst.CSTNode, scope) -> list[cst.CSTNode]:
        """``node``'s ancestors up to the function (or module) that ``scope`` is."""
        found = []
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.Module)):
                break
            found.append(ancestor)
        return found

    def _calls_around(self, node: cst.Call, scope: cst.CSTNode) -> tuple[list[cst.Call], list[cst.Call]]:
        """The calls of ``scope`` that start before ``node`` and after it, in source order (the walk's order)."""
        start = self.range_of(node)[0]
        here = (start.line, start.column)
        before, after = [], []
        for call in self.analysis.subtree(scope):
            if isinstance(call, cst.Call):
                at = self.range_of(call)[0]
                if (at.line, at.column) < here:
                    before.append(call)
                elif (at.line, at.column) > here:
                    after.append(call)
        return before, after

    def _switches_to_eval(self, call: cst.Call, origins) -> bool:
        if self.analysis.models.mode_call(call) != "eval":
            return False
        return self._same_model(call.func.value, origins) or self._layer_of(call.func.value, origins)

    def _layer_of(self, receiver: cst.BaseExpression, origins) -> bool:
        """``receiver`` is bound by a loop over the model's layers (``for layer in model.modules():``): a layer put
        back in eval mode so, chosen layer by layer, makes the training-mode window a deliberate one (the mode
        flag changes what the model returns, its batch norm kept in eval mode)."""
        if not isinstance(receiver, cst.Name):
            return False
        for ancestor in self.analysis.ancestors(receiver):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return False
            if not isinstance(ancestor, cst.For) or not isinstance(ancestor.iter, cst.Call):
                continue
            layers = ancestor.iter.func
            if (
                isinstance(layers, cst.Attribute)
                and layers.attr.value in fw.MODULE_LAYER_METHODS
                and receiver.value in bound_names(ancestor.target)
                and self._same_model(layers.value, origins)
            ):
                return True
        return False

    def _same_model(self, expression: cst.BaseExpression, origins) -> bool:
        mine = {origin.node for origin in origins}
        return any(origin.node in mine for origin in self.analysis.models.origins(expression))

    def _flag_guarded(self, node: cst.Call) -> bool:
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and not self.analysis.is_constant_test(ancestor.test):
                return True
        return False
