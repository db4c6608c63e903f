"""Generations handed to inference engines (gemlint.analysis.engines), asked as GEM601/GEM602 ask them."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from gemlint.analysis.engines import engine_submission
from gemlint.analysis.forward_families import ENGINE
from gemlint.analysis.forward import forward_calls
from gemlint.config import default_config
from gemlint.discovery import SourceFile
from gemlint.python_lint import PythonFileContext
from gemlint.languages import Language


def analyse(source: str):
    module = cst.parse_module(source)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    config = default_config(Path("/nonexistent-gemlint-root"))
    context = PythonFileContext(SourceFile(Path("svc.py"), Language.PYTHON, "svc.py", "svc.py"), source, module, wrapper, config)
    return context.analysis


def submissions(source: str) -> dict[str, str | None]:
    """Callee text of each call that is a generation request -> the token-budget key it carries."""
    analysis = analyse(source)
    found = {}
    for call in analysis.nodes_of(cst.Call):
        submission = engine_submission(analysis, call)
        if submission is not None:
            found[analysis.module.code_for_node(call.func)] = submission.budget
    return found


@pytest.mark.parametrize(
    "source, budget",
    [
        ("def f(engine):\n    engine.generate('hi', max_new_tokens=1)\n", "max_new_tokens"),
        ("def f(engine):\n    engine.generate('hi', SamplingParams(max_tokens=1), 'rid')\n", "max_tokens"),
        ("def f(engine):\n    params = SamplingParams(max_tokens=1)\n    engine.add_request('rid', 'hi', params)\n", "max_tokens"),
        ("def f(engine):\n    engine.generate_request({'text': 'hi', 'sampling_params': {'max_new_tokens': 1}})\n", "max_new_tokens"),
        ("def f(engine):\n    p = {'max_completion_tokens': 1}\n    r = Req(params=p)\n    engine.generate_request(r)\n", "max_completion_tokens"),
        ("def f(engine):\n    p = SamplingParams()\n    p.max_new_tokens = 1\n    engine.generate('hi', p)\n", "max_new_tokens"),
        ("def f(engine):\n    p = {}\n    p['max_tokens'] = 1\n    engine.generate('hi', p)\n", "max_tokens"),
        ("def f(engine):\n    p = Params()\n    p.update(max_tokens=1)\n    engine.generate('hi', p)\n", "max_tokens"),
        ("def f(engine, d):\n    p = Params()\n    p.init(**{'max_new_tokens': 2})\n    engine.generate('hi', p)\n", "max_new_tokens"),
        ("def f(engine):\n    p = {'max_new_tokens': 1}\n    async def g():\n        await engine.generate_request(p)\n", "max_new_tokens"),
        ("def f(engine, flag):\n    p = A(max_tokens=1) if flag else B()\n    engine.generate('hi', p)\n", "max_tokens"),
        ("class S:\n    def __init__(self):\n        self.params = SamplingParams(max_tokens=1)\n    def h(self):\n        self.engine.generate('hi', self.params)\n", "max_tokens"),
    ],
)
def test_a_generation_with_a_token_budget_is_a_submission(source, budget):
    found = submissions(source)
    assert len(found) == 1 and next(iter(found.values())) == budget, found


@pytest.mark.parametrize(
    "source",
    [
        # Status calls and flags.
        "async def f(engine):\n    await engine.check_health()\n    engine.is_ready()\n    engine.get_health_status()\n    return engine.errored\n",
        # max_length bounds a tokenizer's output; it is no generation budget.
        "def f(tokenizer):\n    return tokenizer.encode('hi', max_length=8)\n",
        # A budget that is read or logged, never handed over.
        "def f(settings, log):\n    limits = {'max_tokens': settings.max_tokens}\n    log.info('limits', limits)\n    return limits\n",
        # A submission method without a budget on an object never asked for a generation.
        "def f(metrics, tokenizer):\n    metrics.add_request('health')\n    tokenizer.encode('hi')\n",
        # The engine is the object, not the request: a budget sent through it does not make it a request.
        "def f(engine, other):\n    engine.generate('hi', max_tokens=1)\n    other.encode(engine)\n",
    ],
)
def test_status_calls_flags_and_plain_calls_are_not_submissions(source):
    found = submissions(source)
    assert set(found) <= {"engine.generate"}, found


def test_an_object_handed_a_budgeted_generation_is_an_engine_for_its_other_submissions():
    source = """\
worker = None


async def generate(prompt, n):
    return await worker.generate_request({"prompt": prompt, "max_new_tokens": n})


async def health():
    await worker.generate_request(make_request())
    await worker.encode(["ping"])


def other(worker):
    # Another variable of the same name, never asked for a generation.
    worker.encode(["ping"])


class Service:
    def handle(self, prompt):
        return self.engine.generate(prompt, max_tokens=16)

    def health(self):
        return self.engine.encode("ping")

    def tokens(self):
        return self.tokenizer.encode("ping")
"""
    analysis = analyse(source)
    found = [
        (analysis.module.code_for_node(call.func), analysis.enclosing_function(call).name.value)
        for call in analysis.nodes_of(cst.Call)
        if engine_submission(analysis, call) is not None
    ]
    assert found == [
        ("worker.generate_request", "generate"),
        ("worker.generate_request", "health"),
        ("worker.encode", "health"),
        ("self.engine.generate", "handle"),
        ("self.engine.encode", "health"),
    ]


def test_known_engines_need_no_budget_and_are_forward_calls_of_the_engine_family():
    source = """\
import sglang
from vllm import AsyncEngineArgs, AsyncLLMEngine

engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model="m"))
embedder = sglang.Engine(model_path="e", is_embedding=True)


async def health():
    await engine.check_health()
    embedder.encode(["ping"])
    async for _ in engine.generate("hi", params, "rid"):
        break
"""
    analysis = analyse(source)
    function = next(f for f in analysis.nodes_of(cst.FunctionDef) if f.name.value == "health")
    found = [(call.text, call.family) for call in forward_calls(analysis, function)]
    assert found == [("`embedder.encode(...)`", ENGINE), ("`engine.generate(...)`", ENGINE)]


def test_the_budget_is_named_in_the_forward_text():
    analysis = analyse("def health(manager):\n    manager.add_request(Request(prompt_ids=[0], max_new_tokens=1))\n")
    function = next(iter(analysis.nodes_of(cst.FunctionDef)))
    [call] = forward_calls(analysis, function)
    assert (call.text, call.family) == ("`manager.add_request(...)` with `max_new_tokens`", ENGINE)
