from __future__ import annotations

import re

import libcst as cst

from gemlint.analysis.imports import import_anchor, imported_name, module_alias
from gemlint.analysis.module import evidence_precision
from gemlint.analysis.models import shown
from gemlint.analysis.syntax import iterates_at_most_once
from gemlint.analysis.triage import PROJECT_CONTEXT, PROJECT_MODELS, InferenceContext
from gemlint.diagnostics import Applicability, Edit, Fix, Position, RelatedLocation, Severity, Span
from gemlint.languages import NOTEBOOK_SUFFIX
from gemlint.rule import AnalysisRule
from gemlint.suppression import Suppressions


class ForwardWithoutNoGrad(AnalysisRule):
    code = "GEM101"
    name = "forward-without-no-grad"
    severity = Severity.WARNING
    summary = "A model's forward pass runs with autograd enabled in inference code."
    rationale = (
        "With autograd on, every operation of the forward pass records itself in a graph and keeps the tensors "
        "its backward would need (inputs of every linear layer, attention probabilities, activations), until the "
        "output is freed. Serving code never calls backward, so that memory (it grows with batch size, sequence "
        "length and depth) and the bookkeeping time are pure waste, and they limit the batch size a GPU can serve. "
        "`torch.inference_mode()` (or `torch.no_grad()`) turns the recording off."
        " A model is known where it is built or loaded, and in the other modules that import it from there "
        "(`from app.state import model`, `state.model`), as the module that binds it knows it. A model moved or put "
        "in a mode and run in one expression (`net.to(device)(x)`) runs a forward too."
    )
    not_flagged = (
        "Models whose forward computes gradients (`torch.autograd.grad` or `torch.autograd.functional`, in the forward "
        "or in the methods it calls on the model and its parts, any module: an implicit surface's normals): they need "
        "autograd to run. A model whose class is not known (built from a class path, loaded whole, a parameter) "
        "counts as one where a class of its folder or of a sibling folder does so. The other forwards of a function that runs one are "
        "reported without a fix, since a guard on the function would break it.",
        "Training code: functions and loops that call `.backward()`, `torch.autograd.grad`, `optimizer.step()`, "
        "`.zero_grad()` or a `GradScaler`, Lightning `training_step`, files matched by `training-paths`, and scripts "
        "that build an optimizer, make a model's adapters trainable (PEFT's `get_peft_model`) or draw its autograd "
        "graph (torchviz's `make_dot`), and functions that put a model in training mode to recompute its batch-norm "
        "statistics (they set the layers' `momentum` or reset their running statistics, then run it over data: "
        "`swa_utils.update_bn`'s shape, for weight averaging).",
        "Test modules (`tests/`, `conftest.py`, `test_*.py`, `*_test.py`; outside a test folder, a file with a "
        "`__main__` block counts only when it holds tests) and `test*` functions, unless `inference-paths` names the "
        "file: a test runs the code it checks; likewise instances of classes named as test classes (`TestModule`), "
        "the stand-ins a check builds.",
        "Calls under a grad-free guard at any enclosing level: `with torch.no_grad()` / `torch.inference_mode()` / "
        "`torch.set_grad_enabled(False)` (also through aliases such as `import torch as T`, "
        "`from torch import no_grad`, `ctx = torch.no_grad()`), the same as decorators with or without "
        "parentheses, the published grad-free decorator factories (Ultralytics' and the `yolov5` package's "
        "`@smart_inference_mode()`) and a project's own ones, a run-time switch (`torch.set_grad_enabled(train)`, `no_grad() if cond else nullcontext()`), "
        "`torch.set_grad_enabled(False)` earlier in the block or at module level, or as a statement of the "
        "constructor of the class whose method runs the forward, or of a project class that constructor builds (it "
        "turns autograd off for the thread before any method runs; static and class methods aside), and a guard at "
        "every caller in the same file. A switch at module level or in a constructor turns autograd off only in the "
        "thread that ran it, so it does not guard what a Gradio callback runs (Gradio runs its callbacks in its "
        "server's threads) nor what a FastAPI route declared with a plain `def` runs (in FastAPI's thread pool; an "
        "`async def` route runs in the thread that imported the app). Models whose own `forward` runs every part it calls under such a guard or "
        "switch (also through a method of its own it hands over to: `return self.sample(mels)`, whose body is under the guard), or is decorated with one (a project class of any module: `with torch.set_grad_enabled(self.as_loss):` "
        "around the network's call), built here or held by a parameter annotated with that class (`model: KModel`, "
        "`Optional[KModel]`).",
        "Models whose parameters are all frozen (`model.requires_grad_(False)`, or a loop over "
        "`model.parameters()` or `model.named_parameters()` setting `requires_grad = False`, or, in a constructor, "
        "to a parameter whose default is `False`, as pytorch-fid's InceptionV3 does, or a call of a method named for "
        "freezing, such as `model.freeze()`, where every project class that defines it freezes all its parameters), "
        "and project modules that can hold no parameter: "
        "their classes make and register none, build no layer that has one, keep data and buffers (a quantised "
        "kernel's packed weights, a spectrogram's filter bank), and call no part whose value is unknown as a module; "
        "held in a name or in an attribute of the class that builds them (`self.mel = MelFrontEnd(...)`).",
        "`model.generate(...)`, transformers/diffusers pipelines and Ultralytics' model front-ends (`YOLO(...)`, "
        "`RTDETR(...)`, `SAM(...)`: calling one predicts under its own inference mode), and YOLOv5's hub entries "
        "(`torch.hub.load(\"ultralytics/yolov5\", ...)` returns `AutoShape`, whose forward runs under `no_grad`, unless "
        "`autoshape=False`; likewise a local clone, `source=\"local\"`, whose path the settings hold where the "
        "project's clones of the entry are YOLOv5's), which already run without gradients; and a model one of whose "
        "producers is a project wrapper with a grad-free `forward` (a factory that wraps what it builds on one branch), "
        "whether or not its parts are seen.",
        "TensorRT engines behind a module's interface: torch2trt's `TRTModule` and what `torch2trt(...)` returns hold "
        "their weights in the engine, whatever `state_dict` and `load_state_dict` suggest; likewise a TorchScript "
        "file loaded (`torch.jit.load`) in a module that imports an accelerator's compiler (`torch_neuronx`, "
        "`torch_neuron`), whose graph runs compiled for the device.",
        "Framework hooks that run under no_grad: Lightning `predict_step`, `validation_step`, `test_step` and the "
        "evaluation/prediction hooks of LightningModules and Callbacks; transformers "
        "`prepare_inputs_for_generation`, a pipeline's `_forward`, logits processors and stopping criteria.",
        "Calls of objects that are not evidently models (a `torch.nn.Sequential` of transforms and "
        "parameter-free layers is none; nor are the TensorFlow and Flax classes of transformers and diffusers, "
        "`TFBertModel`, `FlaxAutoModel`), methods or submodules of a model whose class is not known "
        "(`model.encoder(x)`, `model.encode(x)`), and calls inside a module's own `forward`, whose grad mode "
        "is decided where the module is called. Methods that run the forward are forwards: a public method of "
        "a model class of the file that its `forward` calls and that runs a submodule (`captioner.encode_pixels(x)`), "
        "and the library methods `forward_features`, `forward_head`, `encode_image`, `encode_text` and "
        "`get_image_features`/`get_text_features`/`get_audio_features`.",
        "A hub library's model class built from a configuration (`GPT2LMHeadModel(config)`, "
        "`AutoModelForCausalLM.from_config(config)`) and kept in a plain name that nothing loads weights into (no "
        "method named for loading called on it, handed to no other call, nothing assigned into it): it computes with "
        "random weights, so it is being made (a tiny model for tests, saved) or checked, not predicting.",
        "Warm-ups and checks on made-up input whose result nothing reads, or only its shape "
        "(`model(torch.ones(1, 3, 224, 224))` as a statement, bound to a name never read, or read as `out[0].shape`, "
        "`out.size()`, `len(out)`, `print(model(x)[1].shape)`; the input made up in place, also joined or laid out anew "
        "(`torch.cat([torch.ones(...), torch.zeros(...)])`, `.repeat(...)`), or keyword arguments all made up: "
        "`model(**dict(x=torch.randn(...), step=0))`), outside request handlers: the graph is dropped as soon as it is "
        "built. So is a run in a script's module-level code, outside any loop, whose result is dropped, whatever its "
        "input (a warm-up before the frames are read), unless the module hangs a forward hook that may keep what it "
        "computes; and, outside request handlers, a dropped run of a layer of torch.nn itself (`norm(images)` to "
        "collect a batch norm's statistics), which keeps nothing of its output. A library module's "
        "`__main__` block that only prints what it computes (its functions called, or its classes built, by other "
        "modules of the project) is its author's check, not inference code; so is one that only calls the module's "
        "functions without arguments (`main()`), each of which only prints in turn.",
        "A grad-free decorator on an `async def` does not count as a guard and is reported: it only covers the "
        "creation of the coroutine, not the body that runs the forward.",
        "A project nn.Module whose parts are only data, plain project objects and objects of packages other than "
        "torch and the model libraries (a feature extractor wrapping another package's `Fbank`, a clustering back "
        "end): no parameter of it is seen, so whether it records a graph is unknown.",
    )
    bad = """\
import torch
from fastapi import FastAPI
from transformers import AutoModelForSequenceClassification

app = FastAPI()
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased-finetuned-sst-2-english")

@app.post("/score")
def score(batch: dict):
    logits = model(**batch).logits
    return logits.softmax(-1).tolist()
"""
    good = """\
import torch
from fastapi import FastAPI
from transformers import AutoModelForSequenceClassification

app = FastAPI()
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased-finetuned-sst-2-english")

@app.post("/score")
@torch.inference_mode()
def score(batch: dict):
    logits = model(**batch).logits
    return logits.softmax(-1).tolist()
"""
    fix = Applicability.UNSAFE
    fix_note = (
        "The fix adds `@torch.inference_mode()` as the innermost decorator of the enclosing function (adding "
        "`import torch` when the module has none), so route decorators register the guarded function. It is "
        "unsafe: tensors created in inference mode cannot later be used in autograd or modified in place outside "
        "it, and a caller that does backpropagate through the function's result would break. In an `async def`, "
        "where a decorator does not cover the body, the fix wraps the statement in `with torch.no_grad():` instead."
    )
    benchmark = "Bytes saved for backward (saved_tensors_hooks), peak memory and latency of a forward pass with and without inference_mode."
    tags = ("performance", "memory", "pytorch", "autograd")
    notebooks = True
    notebooks_reason = (
        "A notebook keeps each output in its globals, and with it the autograd graph and the activations behind "
        "it, until the name is overwritten or the kernel restarts: unguarded forwards in a loop (or in a function "
        "the cells call again and again) are how notebooks run out of GPU memory. A single forward in a cell, "
        "run once by hand on one example, is not reported: the graph it keeps is one example's; so is one in a loop "
        "written to run once (`for path in paths[:1]:`, `range(1)`)."
    )
    prefilter = ("torch", "transformers", "diffusers", "timm", "lightning", ".eval(", ".parameters(", "state_dict", "named_modules", "BaseHandler")
    sees_project = (PROJECT_CONTEXT, PROJECT_MODELS)

    syntax_gate = InferenceContext()

    def visit_Module(self, node: cst.Module) -> None:
        # One finding per function (or module-level statement): its first unguarded forward, the others as related
        # locations (the fix, one guard around it, covers them all).
        self._by_function: dict[cst.CSTNode, list[tuple[cst.Call, str, str, Fix | None, str | None]]] = {}
        self._needs_autograd: set[cst.CSTNode] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, (cst.Name, cst.Attribute, cst.Call)) or not self.analysis.may_have_inference_context:
            return
        # Whether a model runs here is a question about this file; its context may be a question about the
        # callers' files (parsed to answer it), so it is asked second.
        models = self.analysis.models
        receiver = models.forward_receiver(node)
        if receiver is None:
            return
        verdict = self.analysis.context_of(node)
        if not verdict.is_inference:
            return
        if self.analysis.grad_free_guard(node) or models.frozen(receiver) or models.inside_module_forward(node):
            return
        if models.differentiates(receiver):
            # Its forward computes gradients (`torch.autograd.grad`): a guard would break it, and one around the
            # function that runs it too, so the other forwards there are reported without that fix.
            self._needs_autograd.add(self._scope_of(node))
            return
        if self.analysis.discarded_run_on_made_up_input(node):
            return  # a warm-up or a check on made-up input: its graph is dropped at once
        if models.runs_random_weights(receiver):
            return  # a model being made, or an architecture checked: what it computes is no prediction
        if receiver is node.func and self.analysis.converted_to_numpy(node):
            # The model called itself, and its output made a NumPy array as it is, which an output of a graph refuses:
            # the forward records none. (A method's output may be codes or labels, integers that autograd never marks,
            # whatever the forward recorded.)
            return
        if self.context.source.path.suffix == NOTEBOOK_SUFFIX and not self._repeats(node):
            return
        if models.forward_guard(receiver, called_itself=receiver is node.func):
            return
        verdict = self.analysis.reported_context(node, verdict)  # the callers of a named function, asked last
        if not verdict.is_inference:
            return
        model = shown(receiver)
        # `self.net.forward(x)` and `clip.encode_image(x)` are shown as written; `self.net(x)` and `self(x)` by
        # the model that runs
        called = f"{model}.{node.func.attr.value}" if isinstance(node.func, cst.Attribute) and receiver is node.func.value else model
        async_guard = self.analysis.async_decorator_guard(node)
        if async_guard is not None:
            why = (
                f"the grad-free decorator of `async def {async_guard.name.value}` only covers creating the coroutine, "
                "not the body"
            )
        elif (elsewhere := self.analysis.grad_switch_in_another_thread(node)) is not None:
            switch, worker = elsewhere
            why = (
                f"{switch}, but only in the thread that ran it (grad mode is per thread), and {worker}: autograd records "
                "the graph and keeps activations for a backward that never comes"
            )
        else:
            why = "autograd records the graph and keeps activations for a backward that never comes"
        message = (
            f"`{called}(...)` runs a forward pass with autograd enabled in inference code ({verdict.reason}); {why}. "
            "Run it under `torch.inference_mode()`"
        )
        fix = self._fix(node)
        function = self.analysis.enclosing_function(node)
        if function is not None and function.asynchronous is not None:  # the fix there wraps each statement
            self.report(node, message, fix=fix, precision=evidence_precision(verdict))
            return
        self._by_function.setdefault(self._scope_of(node), []).append((node, called, message, fix, evidence_precision(verdict)))

    def _scope_of(self, node: cst.Call) -> cst.CSTNode:
        """What one finding covers: the function, or for a script the module-level statement that runs ``node`` (a
        loop over the inputs, the `__main__` block): one guard around it covers all its forwards."""
        function = self.analysis.enclosing_function(node)
        return function if function is not None else self._top_level_statement(node)

    def _top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        return next((a for a in self.analysis.ancestors(node) if isinstance(self.analysis.parent(a), cst.Module)), node)

    def _repeats(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """``node`` may run many times: in a loop or a comprehension, or in a function that may (one the cells call
        more than once, in a loop, from another function that may, or hand over to be called later)."""
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return self._function_repeats(ancestor, depth)
            if isinstance(ancestor, _REPEATING) and not iterates_at_most_once(ancestor):
                return True  # (a loop over `paths[:1]` runs its body once)
        return False

    def _function_repeats(self, function: cst.FunctionDef, depth: int) -> bool:
        """A notebook's function runs more than once: anything but a function of the cells' top level that they
        name only in one call, itself run once (a helper a later cell calls on one example)."""
        if depth >= _MAX_CALL_DEPTH or self.analysis.parent(function) is not self.analysis.module or function.decorators:
            return True
        name = function.name.value
        if len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", self.context.text)) != 2:
            return True  # called more than once, or handed over (`gr.Interface(fn=segment)`, `map(segment, ...)`)
        callers = self.analysis.callers_of(function)
        return len(callers) != 1 or self._repeats(callers[0], depth + 1)

    def leave_Module(self, original_node: cst.Module) -> None:
        suppressions = Suppressions(self.context.text, self.context.source.language) if self.context.config.respect_noqa else None
        for scope, found in self._by_function.items():
            if suppressions is not None:
                # A forward whose own line says `noqa` is left out of its group, so the next one is the finding.
                found = [entry for entry in found if not suppressions.is_suppressed(self.code, self.range_of(entry[0])[0].line)]
                if not found:
                    continue
            node, _, message, fix, precision = found[0]
            if scope in self._needs_autograd:
                fix = None
            related = []
            for other, called, _, _, _ in found[1:]:
                start, end = self.range_of(other)
                span = Span(self.context.display_path, start.line, start.column, end.line, end.column)
                related.append(RelatedLocation(span, f"`{called}(...)` also runs with autograd enabled"))
            if related:
                more = len(related)
                where = f"in `{scope.name.value}`" if isinstance(scope, cst.FunctionDef) else "in the same module-level statement"
                message += f"; {more} more forward pass{'es' if more > 1 else ''} {where} run the same way"
            self.report(node, message, fix=fix, precision=precision, related=related)

    # -- fix ---------------------------------------------------------------------------------------
    def _fix(self, node: cst.Call) -> Fix | None:
        function = self.analysis.enclosing_function(node)
        if function is None or self.analysis.grad_enabled_within(node, function):
            return None
        if function.asynchronous is not None:
            return self._wrap_statement(node)
        edits = []
        guard = imported_name(self.context.module, "torch.inference_mode")
        if guard is None:
            torch = module_alias(self.context.module, "torch")
            if torch is None:
                torch = "torch"
                edits.append(self._import_torch())
            guard = f"{torch}.inference_mode"
        line = self.range_of(function.name)[0].line
        edits.append(Edit(_start(line), _start(line), f"{self.indentation(line)}@{guard}(){self.newline}"))
        return Fix(tuple(edits), Applicability.UNSAFE, f"decorate `{function.name.value}` with `@{guard}()`")

    def _wrap_statement(self, node: cst.Call) -> Fix | None:
        statement = next((a for a in self.analysis.ancestors(node) if isinstance(a, cst.SimpleStatementLine)), None)
        if statement is None or not isinstance(self.analysis.parent(statement), cst.IndentedBlock):
            return None
        start, end = self.range_of(statement)
        if start.line != end.line:
            return None  # re-indenting a multi-line statement could change the text of strings in it
        edits = []
        torch = module_alias(self.context.module, "torch")
        if torch is None:
            torch = "torch"
            edits.append(self._import_torch())
        indent = self.indentation(start.line)
        text = self.line_text(start.line)
        unit = self.context.module.default_indent
        replacement = f"{indent}with {torch}.no_grad():{self.newline}{indent}{unit}{text[len(indent):]}"
        edits.append(Edit(_start(start.line), Position(start.line, len(text) + 1), replacement))
        return Fix(tuple(edits), Applicability.UNSAFE, f"wrap the statement in `with {torch}.no_grad():`")

    def _import_torch(self) -> Edit:
        anchor = import_anchor(self.context.module)
        if anchor is None:
            at = self.after_line(self.range_of(self.context.module)[1].line)
            prefix = "" if at.column == 1 else self.newline
            return Edit(at, at, f"{prefix}import torch{self.newline}")
        line = self.range_of(anchor)[0].line
        return Edit(_start(line), _start(line), f"import torch{self.newline}")


def _start(line: int) -> Position:
    return Position(line, 1)


_REPEATING = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda)
_MAX_CALL_DEPTH = 4
