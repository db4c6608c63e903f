from __future__ import annotations

import libcst as cst

from gemlint.analysis.module import NOT_LITERAL, keyword_arg, literal_value, terminal_name
from gemlint.analysis.triage import Triage
from gemlint.diagnostics import Applicability, Severity
from gemlint.rule import AnalysisRule

LARGE_MAX_LENGTH = 1024
_MAX_LENGTH_STRATEGY_SUFFIX = "PaddingStrategy.MAX_LENGTH"
_TENSORRT_PROVIDER = "TensorrtExecutionProvider"


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
        "files matched by `training-paths`.",
        "Modules that target a static-shape backend that needs fixed shapes: imports of `torch_xla`, `jax`, "
        "`habana_frameworks` or `tensorrt`, the ONNX Runtime TensorRT provider, or any module listed in "
        "`static-shape-backends`.",
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
    fix = Applicability.SAFE
    fix_note = (
        "The fix sets `padding=\"longest\"` and keeps `truncation` and `max_length`, so no input is cut "
        "differently; outputs keep their meaning with the attention mask the tokenizer returns."
    )
    benchmark = "Tokens computed and latency of a small transformer, padding to max_length vs to the longest input."
    tags = ("performance", "tokenization", "transformers")
    prefilter = ('"max_length"', "'max_length'", "MAX_LENGTH", "pad_to_max_length")

    @classmethod
    def may_match_syntax(cls, triage: Triage) -> bool:
        keywords = triage.facts.keywords
        return ("padding" in keywords or "pad_to_max_length" in keywords) and triage.may_have_inference_context()

    def visit_Call(self, node: cst.Call) -> None:
        padding = keyword_arg(node, "padding")
        legacy = keyword_arg(node, "pad_to_max_length")
        if padding is not None and self._is_max_length(padding.value):
            offending = padding
        elif padding is None and legacy is not None and literal_value(legacy.value) is True:
            offending = legacy
        else:
            return
        if not self.analysis.context_of(node).is_inference:
            return
        if self.analysis.data_pipeline_reason(node) or self._static_shape_backend():
            return
        max_length = keyword_arg(node, "max_length")
        length = literal_value(max_length.value) if max_length is not None else NOT_LITERAL
        large = isinstance(length, int) and not isinstance(length, bool) and length >= LARGE_MAX_LENGTH
        shown = f" ({length} tokens)" if isinstance(length, int) and not isinstance(length, bool) else ""
        self.report(
            node,
            f"padding to max_length{shown} in inference code computes the padding of every request; "
            'use padding="longest"',
            severity=Severity.ERROR if large else None,
            fix=self._fix(offending),
        )

    def _is_max_length(self, expression: cst.BaseExpression) -> bool:
        if literal_value(expression) == "max_length":
            return True
        if terminal_name(expression) != "MAX_LENGTH":
            return False  # resolving names costs several parses: only for candidates
        return any(name.endswith(_MAX_LENGTH_STRATEGY_SUFFIX) for name in self.analysis.qualified_names(expression))

    def _static_shape_backend(self) -> bool:
        if self.analysis.imports_any(self.context.config.static_shape_backends):
            return True
        text = self.context.text
        return any(f"{quote}{_TENSORRT_PROVIDER}{quote}" in text for quote in ("'", '"'))

    def _fix(self, offending: cst.Arg):
        value = offending.value
        if isinstance(value, cst.Attribute):  # PaddingStrategy.MAX_LENGTH -> PaddingStrategy.LONGEST
            return self.replace_fix(value, value.with_changes(attr=cst.Name("LONGEST")), "pad to the longest sequence", Applicability.SAFE)
        if offending.keyword is not None and offending.keyword.value == "pad_to_max_length":
            replacement = offending.with_changes(keyword=cst.Name("padding"), value=cst.SimpleString('"longest"'))
            return self.replace_fix(offending, replacement, 'use padding="longest"', Applicability.SAFE)
        if isinstance(value, cst.SimpleString):  # keep the quote style
            return self.replace_fix(value, f"{value.prefix}{value.quote}longest{value.quote}", 'use padding="longest"', Applicability.SAFE)
        return self.replace_fix(value, '"longest"', 'use padding="longest"', Applicability.SAFE)
