from __future__ import annotations

import re

from functools import cached_property
from pathlib import Path
from typing import Callable

import libcst as cst

from gemlint.analysis.conditions import known_branch
from gemlint.analysis.handlers import runs_per_request
from gemlint.analysis.loads import LOADER_NAMES, load_kind
from gemlint.analysis.module import NOT_LITERAL, bound_names, dotted_name, evidence_precision, keyword_arg, literal_value, positional_arg, terminal_name
from gemlint.analysis.triage import InferenceContext, Spelled
from gemlint.diagnostics import Applicability, Edit, Fix, Severity
from gemlint.discovery import local_top_level_modules
from gemlint.frontends import triton_config
from gemlint.rule import AnalysisRule

#: What a module that runs a model spells somewhere: a model's call methods, a session's run. A script that
#: tokenizes with none of them, and loads nothing but tokenizers, prepares data.
_MODEL_RUN_MARKERS = (".generate(", ".forward(", ".predict(", ".infer(", ".run(", "model(", "Model(")

LARGE_MAX_LENGTH = 1024
_MAX_LENGTH_STRATEGY_SUFFIX = "PaddingStrategy.MAX_LENGTH"
_TENSORRT_PROVIDER = "TensorrtExecutionProvider"
#: Paddle Inference's and FastDeploy's switches to their TensorRT backend, whose engines take the shapes set for them.
_TENSORRT_BACKEND_SWITCHES = (".enable_tensorrt_engine(", ".use_trt_backend(")
# Calls that take example inputs to fix a model's shapes: tracing, ONNX export, TensorRT compilation.
_EXPORTS = frozenset(
    {
        "torch.jit.trace",
        "torch.jit.trace_module",
        "torch.onnx.export",
        "torch.onnx.dynamo_export",
        "torch.export.export",
        "torch_tensorrt.compile",
        "torch_tensorrt.dynamo.compile",
        "torch2trt.torch2trt",
    }
)
#: Calls that only show or measure what they are given, or turn token ids back into text (no model runs on them).
_INSPECTING_CALLS = frozenset(
    {"print", "pprint", "len", "repr", "type", "display", "info", "debug", "warning", "log", "decode", "batch_decode", "convert_ids_to_tokens"}
)
#: Where a value is handed on: returned, iterated, kept in a container or an attribute, given to a lambda.
_PASSING_ON = (cst.Return, cst.Yield, cst.For, cst.CompFor, cst.List, cst.Tuple, cst.Set, cst.Dict, cst.Lambda, cst.With, cst.Await)
_EXPORT_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _EXPORTS)
# Tokenizer methods called on the tokenizer object (``tok.encode_plus(...)``); anything else is the tokenizer itself.
_TOKENIZER_METHODS = frozenset({"__call__", "encode", "encode_plus", "batch_encode_plus", "pad", "prepare_for_model"})
_TEXT_ENCODER_CALLS = frozenset({"encode_text", "get_text_features"})
_CLIP_TOKENIZERS = frozenset({"CLIPTokenizer", "CLIPTokenizerFast", "SiglipTokenizer", "SiglipProcessor", "Siglip2Processor", "CLIPProcessor"})
#: Checkpoints of text encoders trained on fixed-length sequences, by their names: CLIP's and SigLIP's (whose
#: documentation asks for ``padding="max_length"``, what the model was trained with).
_FIXED_LENGTH_CHECKPOINT = re.compile(r"(?i)(?:^|[/_-])(?:clip|siglip2?)(?:[/_-]|$)")
#: A processor's inputs that are no text: called with only these, it pads no token.
_NON_TEXT_INPUTS = frozenset({"images", "videos", "audio", "audios"})
#: CLIP's text encoder reads 77 positions: its tokenizer's ``model_max_length``, spelled as a number.
_CLIP_POSITIONS = 77
_DIFFUSION_PACKAGES = ("diffusers",)
_TRITON_MODEL = "TritonPythonModel"
_TRITON_TENSOR = frozenset({"triton_python_backend_utils.Tensor"})
# Clients of a model server: the tokens go to a model whose input signature is fixed at the server
# (a TF Serving SavedModel, a Triton or OpenVINO Model Server model), not to a model of this process.
_MODEL_SERVER_CLIENTS = ("tensorflow_serving", "tritonclient", "ovmsclient")
_TORCHSCRIPT_LOADS = frozenset({"torch.jit.load"})
# Joining batches along a dimension: every batch's other dimensions, the sequence length among them, must match.
_JOINS = frozenset(
    {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "numpy.concatenate", "numpy.stack", "numpy.vstack"}
)
# Making one array of rows (`torch.tensor([ids_a, ids_b])`): every row must have the same length too.
_ROWS_TO_ARRAY = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor", "numpy.array", "numpy.asarray"})
_JOIN_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _JOINS | _ROWS_TO_ARRAY)


class StaticMaxLengthPadding(AnalysisRule):
    code = "GEM201"
    name = "static-max-length-padding"
    severity = Severity.WARNING
    summary = "A tokenizer pads every request to `max_length` in inference code."
    rationale = (
        "`padding=\"max_length\"` makes every request as long as the longest one the model accepts: a "
        "20-token query padded to 512 or 8192 tokens costs the attention and MLP compute, activation memory "
        "and KV-cache of the full length. Padding to the longest sequence in the batch computes only what "
        "the inputs need. The finding is an error when the literal `max_length` is 1024 or more."
    )
    not_flagged = (
        "Training and dataset preprocessing: `dataset.map(...)` transforms, collators, training functions and "
        "files matched by `training-paths`; a script that tokenizes and runs no model (it builds and loads none but "
        "tokenizers, calls no model, session or pipeline, imports nothing of the project, serves no request): the "
        "fixed-length tokens it writes are data prepared for something else.",
        "Modules that target a static-shape backend that needs fixed shapes: imports of `torch_xla`, `jax`, "
        "`habana_frameworks`, `tensorrt`, AWS Neuron (`torch_neuron`, `torch_neuronx`, `optimum.neuron`), the "
        "on-device compilers `executorch` and `coremltools` (a program exported for a phone takes the shapes it was "
        "exported with), the "
        "ONNX Runtime TensorRT provider, Paddle Inference's or FastDeploy's TensorRT backend "
        "(`config.enable_tensorrt_engine(...)`, `option.use_trt_backend()`), or any module listed in "
        "`static-shape-backends`.",
        "Modules that load a TorchScript model (`torch.jit.load`): a traced graph keeps the sequence length it was "
        "traced with, so the tokens may have to match it.",
        "Clients of a model server (modules importing `tensorflow_serving`, `tritonclient` or `ovmsclient`): the "
        "tokens are sent to a model whose input signature the server fixes, not run here.",
        "Text encoders that need the fixed length by design (CLIP-style tokenizers of diffusion pipelines): the "
        "call pads to the tokenizer's own `model_max_length` (`max_length=tokenizer.model_max_length`, or no "
        "`max_length`), to the model configuration's caption length (`self.config.model_max_length`, with prompt "
        "tokens added or not) or to CLIP's 77 positions (a number, or a parameter's default), and the code feeds a "
        "text encoder: the same function (or, in a method, its class) calls a model named `*text_encoder*`, "
        "`encode_text` or `get_text_features`, or the tokenizer (or processor) is CLIP's or SigLIP's, by its class or "
        "by the name of the checkpoint it is loaded from (`google/siglip-base-patch16-224`). In a "
        "module that imports `diffusers` (a diffusion model's code), any length: its text encoders condition a model "
        "trained on prompts of one length (learned padding, pooled positions, 77-token chunks).",
        "A processor called with images, videos or audio and no text (`processor(images=batch, padding=\"max_length\")`): "
        "no token is padded.",
        "Example inputs for an export: the tokenized output flows (through assignments) into `torch.jit.trace`, "
        "`torch.onnx.export`, `torch.export.export`, `torch_tensorrt.compile` or `torch2trt` in the same function "
        "or script, or the function is an export function (named `*export*`, or calling one of those).",
        "Triton Python models (`class TritonPythonModel` in `<model>/<version>/model.py`) whose `<model>/config.pbtxt` "
        "declares the tensor the tokenized output is put into (`pb_utils.Tensor(\"name\", ...)` in the same method) "
        "with fixed dims (no -1), or hands it, through an ensemble of the same model repository, to a model whose "
        "input has fixed dims (a tokenizer step feeding an ONNX or TensorRT model built for one length); where that "
        "tensor cannot be told, when every output of the configuration has fixed dims.",
        "Batches joined into one tensor: the token ids or attention mask of each call are appended to a list "
        "(or are the elements of a list comprehension) that `torch.cat`/`torch.stack` (or NumPy's "
        "`concatenate`/`stack`) joins or `torch.tensor`/`np.array` makes one array of, which needs every batch "
        "or row to have the same length.",
        "Tokens that reach no model: thrown away, or only printed, measured (`len`, `.shape`), asserted on or decoded back into text, they "
        "and every name bound to them (a script that shows what a tokenizer makes).",
        "`padding=True` and `padding=\"longest\"`.",
    )
    bad = """\
from fastapi import FastAPI
from transformers import AutoTokenizer

app = FastAPI()
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")

@app.post("/embed")
def embed(text: str):
    return tokenizer(text, padding="max_length", truncation=True, max_length=512, return_tensors="pt")
"""
    good = """\
from fastapi import FastAPI
from transformers import AutoTokenizer

app = FastAPI()
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")

@app.post("/embed")
def embed(text: str):
    return tokenizer(text, padding="longest", truncation=True, max_length=512, return_tensors="pt")
"""
    fix = Applicability.UNSAFE
    fix_note = (
        "The fix sets `padding=\"longest\"` (or `PaddingStrategy.LONGEST`; `pad_to_max_length=True` becomes "
        "`padding=\"longest\"`) and keeps `truncation` and `max_length`, so no input is cut differently. It is "
        "unsafe because the tensor shapes change: the sequence length now varies from request to request, so code "
        "that relies on the fixed length (a traced or compiled graph with static shapes, preallocated buffers, "
        "reshapes or concatenations to the full length, a model that ignores the attention mask) must be checked."
    )
    benchmark = "Tokens computed and latency of a small transformer, padding to max_length vs to the longest input."
    tags = ("performance", "tokenization", "transformers")
    notebooks = False
    notebooks_reason = (
        "Padding to `max_length` costs every request of a service; a notebook tokenizes a batch once while "
        "exploring, often with the fixed shapes its training used on purpose."
    )
    prefilter = ('"max_length"', "'max_length'", "MAX_LENGTH", "pad_to_max_length")

    syntax_gate = Spelled("keywords", {"padding", "pad_to_max_length"}) & InferenceContext()

    def visit_Call(self, node: cst.Call) -> None:
        padding = keyword_arg(node, "padding")
        legacy = keyword_arg(node, "pad_to_max_length")
        if padding is not None and self._is_max_length(padding.value):
            offending = padding
        elif padding is None and legacy is not None and literal_value(legacy.value) is True:
            offending = legacy
        else:
            return
        if not node.args or all(arg.keyword is not None for arg in node.args):
            given = {arg.keyword.value for arg in node.args if arg.keyword is not None}
            if given & _NON_TEXT_INPUTS and not given & {"text", "input_ids"}:
                return  # `processor(images=images, padding="max_length")`: no text, so no token is padded
        verdict = self.analysis.reported_context(node)
        if not verdict.is_inference:
            return
        if self.analysis.data_pipeline_reason(node) or self._static_shape_backend() or self._prepares_data_only(node):
            return
        max_length = keyword_arg(node, "max_length")
        if self._text_encoder_input(node, max_length) or self._export_input(node) or self._triton_fixed_shape(node):
            return
        if self._joined_across_batches(node) or self._only_inspected(node):
            return
        length = literal_value(max_length.value) if max_length is not None else NOT_LITERAL
        large = isinstance(length, int) and not isinstance(length, bool) and length >= LARGE_MAX_LENGTH
        shown = f" ({length} tokens)" if isinstance(length, int) and not isinstance(length, bool) else ""
        self.report(
            node,
            f"padding to max_length{shown} in inference code ({verdict.reason}) computes the padding of every "
            'request; use padding="longest"',
            severity=Severity.ERROR if large else None,
            fix=self._fix(offending),
            precision=evidence_precision(verdict),
        )

    def _prepares_data_only(self, node: cst.Call) -> bool:
        """A script that tokenizes and runs no model: it builds no model, loads none, calls nothing a model is run
        with, imports nothing of the project that could, and serves no request. The fixed-length tokens it makes
        are data prepared for something else (input tensors written for a benchmark, a dataset), as the spec's
        preprocessing is."""
        analysis = self.analysis
        if not (analysis.has_main_block or analysis.script_runs) or runs_per_request(analysis, node) is not None:
            return False
        if analysis.models.constructions() or next(iter(analysis.models.uses()), None) is not None:
            return False
        text = self.context.text
        if any(marker in text for marker in _MODEL_RUN_MARKERS):
            return False
        for call in analysis.nodes_of(cst.Call):
            if terminal_name(call.func) in LOADER_NAMES and load_kind(analysis, call) not in (None, "a tokenizer", "a processor"):
                return False  # a model, pipeline, session or engine loaded here
        local = local_top_level_modules(self.context.config.root)
        for statement in analysis.nodes_of(cst.Import, cst.ImportFrom):
            if isinstance(statement, cst.ImportFrom) and statement.relative:
                return False
            names = [statement.module] if isinstance(statement, cst.ImportFrom) else [alias.name for alias in statement.names]
            if any(name is not None and (dotted_name(name) or "").partition(".")[0] in local for name in names):
                return False
        return True

    def _is_max_length(self, expression: cst.BaseExpression) -> bool:
        return self._max_length_value(expression) is not None

    def _max_length_value(self, expression: cst.BaseExpression) -> cst.BaseExpression | None:
        """What pads to max_length in ``expression``: itself, or the branch of a conditional that the code around it
        has decided (``"max_length" if batched else False`` under ``if batched:``)."""
        if isinstance(expression, cst.IfExp):
            branch = known_branch(self.analysis, expression)
            return self._max_length_value(branch) if branch is not None else None
        return expression if self._spells_max_length(expression) else None

    def _spells_max_length(self, expression: cst.BaseExpression) -> bool:
        if literal_value(expression) == "max_length":
            return True
        if terminal_name(expression) != "MAX_LENGTH":
            return False  # resolving names costs several parses: only for candidates
        return any(name.endswith(_MAX_LENGTH_STRATEGY_SUFFIX) for name in self.analysis.qualified_names(expression))

    def _static_shape_backend(self) -> bool:
        """The tokens go to a model whose shapes may be fixed elsewhere: a static-shape backend, a TorchScript
        graph loaded here, or a model server this module is a client of."""
        if self.analysis.imports_any((*self.context.config.static_shape_backends, *_MODEL_SERVER_CLIENTS)):
            return True
        text = self.context.text
        if any(f"{quote}{_TENSORRT_PROVIDER}{quote}" in text for quote in ("'", '"')) or any(switch in text for switch in _TENSORRT_BACKEND_SWITCHES):
            return True
        return "jit.load" in text and any(
            terminal_name(call.func) == "load" and self.analysis.resolves_to(call.func, _TORCHSCRIPT_LOADS)
            for call in self.analysis.nodes_of(cst.Call)
        )

    # -- fixed length by design ---------------------------------------------------------------
    def _text_encoder_input(self, node: cst.Call, max_length: cst.Arg | None) -> bool:
        """CLIP-style text encoders (diffusion pipelines) read every position of a fixed-length sequence:
        padding to the tokenizer's own ``model_max_length`` is what they were trained with."""
        if self.analysis.imports_any(_DIFFUSION_PACKAGES):
            return True
        tokenizer = _tokenizer_of(node)
        if max_length is not None:
            value = max_length.value
            if self._encoder_positions(value) or (isinstance(value, cst.Name) and any(self._encoder_positions(v) for v in self.analysis.assigned_values(value))):
                return True  # the encoder's own number of positions (a fixed-length input), read from its config
            if not any(self._encoder_length(length, tokenizer) for length in self._length_values(value)):
                return False
        if self._is_clip_tokenizer(tokenizer):
            return True
        function = self.analysis.enclosing_function(node)
        owner = self.analysis.method_owner(node)
        scope = owner or function or self.context.module
        return any(
            isinstance(child, cst.Call)
            and ("text_encoder" in (terminal_name(child.func) or "") or terminal_name(child.func) in _TEXT_ENCODER_CALLS)
            for child in self.analysis.subtree(scope, into_scopes=owner is not None)
        )

    def _length_values(self, value: cst.BaseExpression) -> list[cst.BaseExpression]:
        """``value``, and for a name what it is assigned (a parameter's default included)."""
        if not isinstance(value, cst.Name):
            return [value]
        scope = self.analysis.scope_of(value)
        parameters = [getattr(a, "node", None) for a in (scope[value.value] if scope is not None else ())]
        defaults = [node.default for node in parameters if isinstance(node, cst.Param) and node.default is not None]
        return [value, *self.analysis.assigned_values(value), *defaults]

    def _encoder_length(self, value: cst.BaseExpression, tokenizer: cst.BaseExpression) -> bool:
        """A text encoder's own length: the tokenizer's ``model_max_length``, the model configuration's
        (``self.config.model_max_length``, with prompt tokens added or not), or CLIP's 77 positions."""
        if literal_value(value) == _CLIP_POSITIONS:
            return True
        code = self.context.module.code_for_node
        for part in self.analysis.subtree(value) if isinstance(value, cst.BinaryOperation) else [value]:
            if isinstance(part, cst.Attribute) and part.attr.value == "model_max_length":
                owner = part.value
                if code(owner) == code(tokenizer) or (isinstance(owner, cst.Attribute) and owner.attr.value == "config"):
                    return True  # the tokenizer's own length, or the model's configured one (not another tokenizer's)
        return False

    @staticmethod
    def _encoder_positions(value: cst.BaseExpression) -> bool:
        """``encoder.config.max_position_embeddings``, less a number of query tokens or not."""
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract):
            value = value.left
        return isinstance(value, cst.Attribute) and value.attr.value == "max_position_embeddings"

    def _is_clip_tokenizer(self, tokenizer: cst.BaseExpression) -> bool:
        """A CLIP or SigLIP tokenizer or processor: by its class, or by the checkpoint it is loaded from."""
        for value in self.analysis.bound_values(tokenizer):
            target = value.func if isinstance(value, cst.Call) else value
            if isinstance(target, cst.Attribute) and target.attr.value == "from_pretrained":
                checkpoint = literal_value(value.args[0].value) if isinstance(value, cst.Call) and value.args else NOT_LITERAL
                if isinstance(checkpoint, str) and _FIXED_LENGTH_CHECKPOINT.search(checkpoint):
                    return True
                target = target.value
            if terminal_name(target) in _CLIP_TOKENIZERS:
                return True
        return False

    def _export_input(self, node: cst.Call) -> bool:
        """Example inputs built for tracing or export: their fixed shape is baked into the exported graph."""
        function = self.analysis.enclosing_function(node)
        if function is not None and "export" in function.name.value.lower() and not self.analysis.own_verdict(function).is_inference:
            return True  # named for exporting, and not itself a route or serving hook
        scope = function or self.context.module
        exports = [
            child
            for child in self.analysis.subtree(scope)
            if isinstance(child, cst.Call)
            and terminal_name(child.func) in _EXPORT_NAMES
            and self.analysis.resolves_to(child.func, _EXPORTS)
        ]
        if function is not None and exports:
            return True  # a function that exports a model builds its example inputs
        derived = self._derived_names(node, scope)
        return any(self._mentions(arg.value, node, derived) for export in exports for arg in export.args)

    def _triton_fixed_shape(self, node: cst.Call) -> bool:
        """A Triton Python model whose configuration declares the tokenized tensor with fixed dims must pad to them."""
        owner = self.analysis.method_owner(node)
        if owner is None or owner.name.value != _TRITON_MODEL or self._triton_shapes is None:
            return False
        shapes = self._triton_shapes
        scope = self.analysis.enclosing_function(node) or owner
        derived = self._derived_names(node, scope)
        fed: list[str | None] = []
        for child in self.analysis.subtree(scope):
            if isinstance(child, cst.Call) and terminal_name(child.func) == "Tensor" and self.analysis.resolves_to(child.func, _TRITON_TENSOR):
                name, value = positional_arg(child, 0), positional_arg(child, 1)
                if value is not None and self._mentions(value.value, node, derived):
                    literal = literal_value(name.value) if name is not None else None
                    fed.append(literal if isinstance(literal, str) else None)
        if fed and None not in fed:
            return all(shapes.fixed(name) for name in fed)
        return shapes.outputs_fixed  # where the output goes cannot be told: every output must be fixed

    @cached_property
    def _triton_shapes(self) -> triton_config.TensorShapes | None:
        return triton_config.tensor_shapes(Path(self.context.source.path))

    def _joined_across_batches(self, node: cst.Call) -> bool:
        """The token ids or mask of each batch (or text) are collected in a list that is then joined along a
        dimension or made one array (``ids.append(batch.input_ids)`` then ``torch.cat(ids)``;
        ``torch.tensor([tokenizer(t, ...).input_ids for t in texts])``): every row must have the same length."""
        if self._comprehension_joined(node):
            return True
        scope = self.analysis.enclosing_function(node) or self.context.module
        tokens = self._direct_names(node, scope)
        if not tokens:
            return False
        collected = set()
        for child in self.analysis.subtree(scope):
            if isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute) and child.func.attr.value == "append" and len(child.args) == 1:
                value = child.args[0].value
                root = value.value if isinstance(value, (cst.Attribute, cst.Subscript)) else value
                if isinstance(root, cst.Name) and root.value in tokens and isinstance(child.func.value, cst.Name):
                    collected.add(child.func.value.value)
        if not collected:
            return False
        for child in self.analysis.subtree(scope):
            if isinstance(child, cst.Call) and terminal_name(child.func) in _JOIN_NAMES and child.args:
                first = child.args[0].value
                if isinstance(first, cst.Name) and first.value in collected and self._joins(child):
                    return True
        return False

    def _only_inspected(self, node: cst.Call) -> bool:
        """The tokens are thrown away, or only printed, measured or asserted on (a scratch script that shows what a
        tokenizer makes): they reach no model, whose compute is what the padding costs. A use of the result, or of
        a name bound to it, in anything else (a call, a return, a loop, a container) may feed a model."""
        scope = self.analysis.enclosing_function(node) or self.context.module
        derived = self._token_names(node, scope)
        # In source order: a name's last binding before a use says what the use reads (`caption = tokenizer.decode(
        # caption)` rebinds it to text).
        carries: dict[str, bool] = {}
        uses: list[cst.CSTNode] = [node]
        for child in self.analysis.subtree(scope, into_scopes=True):
            if isinstance(child, (cst.Assign, cst.AnnAssign)) and child.value is not None:
                targets = [t.target for t in child.targets] if isinstance(child, cst.Assign) else [child.target]
                holds = self._carries_tokens(child.value, node, {name for name, held in carries.items() if held})
                # A binding on a branch the tokenizer's call is not on (its `else`, a loop that may not run) may
                # not happen: what the name held before may still be what a later use reads.
                optional = not holds and self._on_another_branch(child, node, scope)
                for target in targets:
                    for name in bound_names(target):
                        carries[name] = holds or (optional and carries.get(name, False))
            elif isinstance(child, cst.Name) and child.value in derived and carries.get(child.value, True) and not self._within(child, node):
                uses.append(child)
        return all(self._inspected(use, derived) for use in uses)

    def _token_names(self, node: cst.Call, scope: cst.CSTNode) -> frozenset[str]:
        """Names bound (in ``scope``) to the tokens ``node`` makes or to values computed from them, not through a call
        that only shows them or turns them back into text (``text = tokenizer.decode(ids)`` holds no tokens)."""
        return self._names_bound_to(node, scope, self._carries_tokens)

    def _carries_tokens(self, expression: cst.CSTNode, node: cst.Call, names: set[str]) -> bool:
        """``expression`` holds ``node``'s tokens, or a name bound to them, other than as what an inspecting call is given."""
        for current in (expression, *self.analysis.subtree(expression, into_scopes=True)):
            if current is node or (isinstance(current, cst.Name) and current.value in names):
                if not self._read_by_an_inspecting_call(current, expression):
                    return True
        return False

    def _read_by_an_inspecting_call(self, node: cst.CSTNode, within: cst.CSTNode) -> bool:
        """``node`` is (part of) an argument of an inspecting call inside ``within``: its value is read, not carried."""
        child = node
        for ancestor in self.analysis.ancestors(node):
            if isinstance(ancestor, cst.Call) and child is not ancestor.func and terminal_name(ancestor.func) in _INSPECTING_CALLS:
                return True
            if ancestor is within:
                return False
            child = ancestor
        return False

    def _on_another_branch(self, statement: cst.CSTNode, node: cst.Call, scope: cst.CSTNode) -> bool:
        """``statement`` is in a branch, loop or handler of ``scope`` that does not hold ``node``: it may not run."""
        for ancestor in self.analysis.ancestors(statement):
            if ancestor is scope:
                return False
            if isinstance(ancestor, (cst.If, cst.Else, cst.For, cst.While, cst.ExceptHandler)) and not self._within(node, ancestor):
                return True
        return False

    def _within(self, child: cst.CSTNode, node: cst.CSTNode) -> bool:
        """``child`` is part of ``node`` (the tokenizer's own input, spelled with a name bound to its output later)."""
        return any(ancestor is node for ancestor in self.analysis.ancestors(child))

    def _inspected(self, use: cst.CSTNode, derived: frozenset[str]) -> bool:
        """``use`` (the call, or a name bound to its result) is read only to be shown or checked, or to bind another
        of ``derived``, or it is a binding target itself."""
        child, parent = use, self.analysis.parent(use)
        while parent is not None:
            if isinstance(parent, cst.Expr) and parent.value is child:
                return True  # a statement of its own: the value is dropped
            if isinstance(parent, (cst.AssignTarget, cst.Assert)) or (isinstance(parent, cst.AnnAssign) and parent.target is child):
                return True
            if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is child:
                targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
                return all(isinstance(target, cst.Name) and target.value in derived for target in targets)
            if isinstance(parent, cst.Call) and parent.func is not child:
                if terminal_name(parent.func) in _INSPECTING_CALLS:
                    return True
                return False  # handed to a call: it may run a model
            if isinstance(parent, _PASSING_ON):
                return False
            # else a part of it is read, or a method of it called (`ids.shape`, `mask.sum()`): what it makes is read on
            child, parent = parent, self.analysis.parent(parent)
        return False

    def _comprehension_joined(self, node: cst.Call) -> bool:
        """``node`` (or its ``input_ids``) is the element of a comprehension that a join or an array constructor
        takes whole."""
        element: cst.CSTNode = node
        parent = self.analysis.parent(element)
        while isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is element:
            element, parent = parent, self.analysis.parent(parent)
        if not isinstance(parent, (cst.ListComp, cst.GeneratorExp)) or parent.elt is not element:
            return False
        argument = self.analysis.parent(parent)
        call = self.analysis.parent(argument) if isinstance(argument, cst.Arg) else None
        return isinstance(call, cst.Call) and call.args[0] is argument and terminal_name(call.func) in _JOIN_NAMES and self._joins(call)

    def _joins(self, call: cst.Call) -> bool:
        return self.analysis.resolves_to(call.func, _JOINS | _ROWS_TO_ARRAY)

    def _direct_names(self, node: cst.Call, scope: cst.CSTNode) -> frozenset[str]:
        """Names bound to ``node``'s result itself, perhaps moved (``batch = tokenizer(...).to(device)``)."""
        names = set()
        for child in self.analysis.subtree(scope):
            if isinstance(child, cst.Assign) and len(child.targets) == 1 and isinstance(child.targets[0].target, cst.Name):
                value = child.value
                while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value is not node:
                    value = value.func.value  # `.to(device)`, `.to("cuda")`
                if value is node:
                    names.add(child.targets[0].target.value)
        return frozenset(names)

    # -- data flow within one function ------------------------------------------------------------
    def _derived_names(self, node: cst.Call, scope: cst.CSTNode) -> frozenset[str]:
        """Names bound (in ``scope``, not in nested functions) to ``node``'s result or to values computed from it."""
        return self._names_bound_to(node, scope, self._mentions)

    def _names_bound_to(
        self, node: cst.Call, scope: cst.CSTNode, holds: Callable[[cst.CSTNode, cst.Call, set[str]], bool]
    ) -> frozenset[str]:
        """The names bound in ``scope`` to values that ``holds`` says carry ``node``'s result (given the names found so
        far), until no more are found."""
        assignments = [child for child in self.analysis.subtree(scope) if isinstance(child, (cst.Assign, cst.AnnAssign))]
        names: set[str] = set()
        changed = True
        while changed:
            changed = False
            for assignment in assignments:
                if assignment.value is None or not holds(assignment.value, node, names):
                    continue
                targets = [t.target for t in assignment.targets] if isinstance(assignment, cst.Assign) else [assignment.target]
                for target in targets:
                    for name in bound_names(target):
                        if name not in names:
                            names.add(name)
                            changed = True
        return frozenset(names)

    def _mentions(self, expression: cst.CSTNode, node: cst.Call, names: frozenset[str] | set[str]) -> bool:
        """``expression`` contains ``node`` itself or reads one of ``names``."""
        if expression is node or (isinstance(expression, cst.Name) and expression.value in names):
            return True
        return any(
            child is node or (isinstance(child, cst.Name) and child.value in names)
            for child in self.analysis.subtree(expression, into_scopes=True)
        )

    # -- fix --------------------------------------------------------------------------------------------
    def _fix(self, offending: cst.Arg) -> Fix:
        value = self._max_length_value(offending.value) or offending.value
        unsafe = Applicability.UNSAFE  # the sequence length stops being constant: see fix_note
        if isinstance(value, cst.Attribute):  # PaddingStrategy.MAX_LENGTH -> PaddingStrategy.LONGEST
            return self.replace_fix(value, value.with_changes(attr=cst.Name("LONGEST")), "pad to the longest sequence", unsafe)
        if offending.keyword is not None and offending.keyword.value == "pad_to_max_length":
            # Only `keyword=value` is rewritten: the argument's comma and spacing stay as written.
            start, _ = self.range_of(offending.keyword)
            _, end = self.range_of(value)
            return Fix((Edit(start, end, 'padding="longest"'),), unsafe, 'use padding="longest"')
        if isinstance(value, cst.SimpleString):  # keep the quote style
            return self.replace_fix(value, f"{value.prefix}{value.quote}longest{value.quote}", 'use padding="longest"', unsafe)
        return self.replace_fix(value, '"longest"', 'use padding="longest"', unsafe)


def _tokenizer_of(call: cst.Call) -> cst.BaseExpression:
    """The tokenizer object of a tokenizer call: ``tok`` in ``tok(...)`` and in ``tok.encode_plus(...)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _TOKENIZER_METHODS:
        return func.value
    return func


