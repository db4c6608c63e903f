"""The project index: each module parsed once per run, its triage facts reused by the engine only while
the file's content is what was indexed, and summaries that survive the on-disk cache."""

from __future__ import annotations

import ast
import dataclasses
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import gemlint.engine as engine
from gemlint.analysis.triage import collect
from gemlint.config import default_config
from gemlint.project.files import forget_projects, project_for
from gemlint.project.index_store import IndexCache, Packed
from gemlint.project.model import summarise_file, summarise_packed
from gemlint.project.summary import FunctionSummary, ModuleSummary, summarise
from gemlint.project.summary_codec import decode_summary, encode
from gemlint.runner import run

SERVICE = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.nn.Linear(4, 2)


@app.post("/predict")
def predict(x):
    return model(torch.tensor(x))
"""
HELPER = "def double(values):\n    return [v * 2 for v in values]\n"


def project(tmp_path):
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "__init__.py").write_text("")
    (tmp_path / "svc" / "app.py").write_text(SERVICE)
    (tmp_path / "svc" / "util.py").write_text(HELPER)
    forget_projects()
    return default_config(tmp_path)


def test_facts_are_served_for_the_indexed_content_only(tmp_path):
    config = project(tmp_path)
    model = project_for(config).model
    path = tmp_path / "svc" / "app.py"
    assert model.syntax_facts(str(path), path.read_bytes()) is None  # nothing indexed yet
    model.build()
    facts = model.syntax_facts(str(path), path.read_bytes())
    assert facts == collect(ast.parse(SERVICE))
    assert model.syntax_facts(str(path), SERVICE.replace("4, 2", "8, 2").encode()) is None


def test_a_file_no_rule_wants_is_parsed_once_per_run(tmp_path, monkeypatch):
    config = project(tmp_path)
    gated: list[str] = []
    gate = engine.python_gate

    def counting_gate(source, text):
        gated.append(source.path.name)
        return gate(source, text)

    monkeypatch.setattr(engine, "python_gate", counting_gate)
    result = run([tmp_path / "svc"], config, jobs=1)
    assert [(d.code, d.line) for d in result.diagnostics] == [("GEM101", 10)]
    # The helper and the empty package file are parsed by the index alone; the service is parsed again
    # only because a rule needs its tree.
    assert gated == ["app.py"]


def test_a_file_changed_after_indexing_is_parsed_afresh(tmp_path, monkeypatch):
    config = project(tmp_path)
    project_for(config).model.build()
    broken = tmp_path / "svc" / "util.py"
    broken.write_text("def double(values:\n")
    monkeypatch.setattr("gemlint.project.files.forget_projects", lambda: None)  # keep the stale index
    result = run([broken], config, jobs=1)
    assert [(d.code, d.line) for d in result.diagnostics] == [("GEM000", 1)]


def test_summaries_with_their_facts_round_trip_through_the_index_cache(tmp_path):
    path = tmp_path / "app.py"
    path.write_text(SERVICE)
    digest, summary, shape = summarise_file(str(path), "app")
    assert summary is not None and summary.syntax is not None and "predict" in summary.functions
    cache = IndexCache(tmp_path / "cache")
    cache.add(("app", digest), summary, shape)
    cache.save({("app", digest)})
    read_back = IndexCache(tmp_path / "cache")
    assert read_back.shapes[("app", digest)] == shape
    stored = read_back.summary(("app", digest))
    assert stored == summary and stored.syntax == summary.syntax


def two_modules(tmp_path, cache: IndexCache, summarise=summarise_file) -> list[tuple[str, str]]:
    """Two modules of the same text, added to ``cache`` as ``summarise`` gives them: their keys."""
    keys = []
    for name in ("one", "two"):
        (tmp_path / f"{name}.py").write_text(SERVICE)
        digest, summary, shape = summarise(str(tmp_path / f"{name}.py"), name)
        cache.add((name, digest), summary, shape)
        keys.append((name, digest))
    return keys


def test_a_summary_is_decoded_only_when_asked_for(tmp_path):
    cache = IndexCache(tmp_path / "cache")
    keys = two_modules(tmp_path, cache)
    cache.save(set(keys))
    read_back = IndexCache(tmp_path / "cache")
    assert all(not isinstance(read_back.entries[key], ModuleSummary) for key in keys)
    assert read_back.summary(keys[0]).name == "one"
    assert isinstance(read_back.entries[keys[0]], ModuleSummary) and not isinstance(read_back.entries[keys[1]], ModuleSummary)
    read_back.release()
    assert not isinstance(read_back.entries[keys[0]], ModuleSummary)


MANY = SERVICE + "\n\nclass Engine:\n    def run(self):\n        return predict([1])\n\n\ndef helper():\n    return Engine().run()\n"


def test_a_summarys_classes_and_functions_are_decoded_as_they_are_asked_for():
    summary = summarise(ast.parse(MANY), "app", False)
    text = json.dumps(encode(summary))
    found: list[str] = []
    read = decode_summary(json.loads(text), lambda: found.append("corrupt"))  # decoding fills the arrays it reads
    assert all(type(value) is list for value in dict.values(read.functions))  # nothing decoded yet
    assert read.functions["helper"] == summary.functions["helper"]
    assert type(dict.__getitem__(read.functions, "predict")) is list  # the others wait to be asked for
    assert read == summary and pickle.loads(pickle.dumps(read)) == summary and found == []
    # A function that fails its check reads as one of which nothing is known, and the index is told.
    stored = json.loads(text)
    stored[[f.name for f in dataclasses.fields(ModuleSummary)].index("functions")]["predict"][1] = "nine"  # its line
    read = decode_summary(stored, lambda: found.append("corrupt"))
    assert read.functions.get("predict") == FunctionSummary("predict", 0, (), ()) and found == ["corrupt"]
    assert read.functions["helper"] == summary.functions["helper"] and found == ["corrupt"]


def test_summaries_read_back_share_one_copy_of_each_string_and_empty_container(tmp_path):
    # Packed summaries (as a process pool hands them over) are read from the file once it is written, so
    # every summary the project's facts decode shares values across modules, not within one only.
    cache = IndexCache(tmp_path / "cache")
    keys = two_modules(tmp_path, cache, summarise_packed)
    cache.save(set(keys))
    assert all(not isinstance(cache.entries[key], Packed) for key in keys)
    one, two = (cache.summary(key) for key in keys)
    first, second = one.functions["predict"], two.functions["predict"]
    assert first == second and first is not second
    assert [site.callee for site in first.calls] == [site.callee for site in second.calls] != []
    assert all(a.callee is b.callee for a, b in zip(first.calls, second.calls))
    assert first.qualname is second.qualname and one.imports["FastAPI"] is two.imports["FastAPI"]
    assert first.evaluated == set() and first.evaluated is second.evaluated and first.locals is second.locals


def test_packed_summaries_of_an_index_in_memory_share_values_across_modules_once_unpacked(tmp_path):
    # `--no-cache` keeps the summaries packed as the workers hand them over: unpacking makes equal values one
    # object across the project, as reading them from the index file does.
    cache = IndexCache(None)
    keys = two_modules(tmp_path, cache, summarise_packed)
    assert all(isinstance(cache.entries[key], Packed) for key in keys)
    one, two = (cache.summary(key) for key in keys)
    first, second = one.functions["predict"], two.functions["predict"]
    assert first == second and first is not second
    assert all(a.callee is b.callee for a, b in zip(first.calls, second.calls)) and first.calls
    assert first.params[0] is second.params[0] and one.syntax.calls == two.syntax.calls
    assert first.evaluated is second.evaluated and first.choices is second.choices


def test_a_moved_line_keeps_the_shape_and_a_new_call_changes_it(tmp_path):
    path = tmp_path / "app.py"
    path.write_text(SERVICE)
    _, _, shape = summarise_file(str(path), "app")
    path.write_text("# a comment that moves every line\n\n" + SERVICE)
    _, moved, moved_shape = summarise_file(str(path), "app")
    path.write_text(SERVICE + "\n\ndef warm():\n    predict(None)\n")
    _, _, called_shape = summarise_file(str(path), "app")
    assert moved_shape == shape and called_shape != shape


def test_an_unparsable_file_has_a_digest_and_no_summary(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n")
    digest, summary, shape = summarise_file(str(path), "broken")
    assert len(digest) == 32 and summary is None and shape == ""


GUARDS = '''\
import torch
from torch import no_grad

def plain(policy, x):
    return policy.score(x)

def under_with(policy, x):
    with torch.no_grad():
        return policy.score(x)

def switched_off(policy, x):
    with torch.set_grad_enabled(False), open("log") as log:
        return policy.score(x)

def not_a_guard(policy, x):
    with torch.inference_mode(False):
        return policy.score(x)

@no_grad()
def decorated(policy, x):
    return policy.score(x)

@torch.inference_mode()
async def coroutine(policy, x):
    return policy.score(x)
'''


def test_call_sites_record_a_grad_free_guard_written_around_them():
    from gemlint.project.summary import summarise

    summary = summarise(ast.parse(GUARDS), "policies", False)
    guarded = {qualname: [site.guarded for site in function.calls if site.callee == "policy.score"] for qualname, function in summary.functions.items()}
    assert guarded == {
        "plain": [False],
        "under_with": [True],
        "switched_off": [True],
        "not_a_guard": [False],
        "decorated": [True],
        "coroutine": [False],  # the decorator covers making the coroutine, not running it
    }


HEADS = {
    "base.py": "from torch import nn\n\n\nclass BaseHead(nn.Module):\n    def forward(self, f):\n        return self.decode(f)\n\n    def decode(self, f):\n        return f\n",
    "keypoint.py": "from heads.base import BaseHead\n\n\nclass KeypointHead(BaseHead):\n    def decode(self, f):\n        return self.rescore(f)\n",
    "coords.py": "from heads.base import BaseHead\n\n\nclass CoordHead(BaseHead):\n    def predict(self, f):\n        return self.decode(f)\n",
    "topdown.py": "from heads.keypoint import KeypointHead\n\n\nclass TopDownHead(KeypointHead):\n    def predict(self, f):\n        return self.decode(f)\n",
}


def test_a_self_call_reaches_an_override_only_from_the_classes_of_its_lineage(tmp_path):
    # `self.decode()` in a sibling class runs the base's (or its own) decode, never another subclass's; in a
    # subclass or in the base class itself, `self` may be an instance of the overriding class.
    (tmp_path / "heads").mkdir()
    (tmp_path / "heads" / "__init__.py").write_text("")
    for name, text in HEADS.items():
        (tmp_path / "heads" / name).write_text(text)
    forget_projects()
    model = project_for(default_config(tmp_path)).model
    model.build()
    entry = model.entry("heads.keypoint")
    callers = {function.qualname for _, function, _ in model.callers(entry, "KeypointHead.decode")}
    assert callers == {"BaseHead.forward", "TopDownHead.predict"}


HANDLERS = """\
import torch
from fastapi import Response

model = torch.nn.Linear(4, 2)


def health():
    model(torch.zeros(1, 4))
    return Response("ok")
"""
MAIN = """\
from fastapi import FastAPI

from svc.handlers import health

app = FastAPI()
app.add_api_route("/health", health)
"""


def test_a_file_the_project_read_for_its_routes_is_analysed_once(tmp_path, monkeypatch):
    """Linting the handlers reads the routes main.py declares (LibCST, with its index and routes); linting main.py
    then takes that tree and what was found of it, instead of finding it again."""
    import gemlint.analysis.module as module_analysis
    import gemlint.analysis.routes as routes

    config = project(tmp_path)
    (tmp_path / "svc" / "handlers.py").write_text(HANDLERS)
    (tmp_path / "svc" / "main.py").write_text(MAIN)
    indexed: list[str] = []
    extracted: list[str] = []
    build_index, extract = module_analysis.build_index, routes.extract
    monkeypatch.setattr(module_analysis, "build_index", lambda module: indexed.append(module.code) or build_index(module))
    monkeypatch.setattr(routes, "extract", lambda analysis: extracted.append(analysis.module.code) or extract(analysis))
    result = run([tmp_path / "svc" / "handlers.py", tmp_path / "svc" / "main.py"], config, jobs=1)
    # main.py's route table hands `health` to FastAPI: a route, whose forward is also unguarded (GEM101)
    assert [(d.code, d.path.rsplit("/", 1)[-1]) for d in result.diagnostics] == [("GEM602", "handlers.py"), ("GEM101", "handlers.py")]
    assert indexed.count(MAIN) == extracted.count(MAIN) == 1
    assert indexed.count(HANDLERS) == extracted.count(HANDLERS) == 1


# -- the triage facts come from the summariser's walk ------------------------------------------------------

SIGNATURES = """\
import torch.nn.functional as F
from transformers import AutoTokenizer as Tok


def encode(text, tokenizer=Tok.from_pretrained("bert"), *, limit: int = len("x")) -> F.softmax(None):
    total = 0
    total += 1
    window: list = []
    return tokenizer(text, padding="max_length", max_length=limit)


class Service(torch.nn.Module):
    @torch.no_grad()
    def predict(self, batch=lambda: torch.zeros(3)):
        return self.model(batch)
"""


def test_the_summary_holds_the_triage_facts_one_walk_finds():
    # The index summarises a module in one walk that also gathers its triage facts. That walk passes by what a
    # summary never records (a signature's defaults and annotations, an augmented assignment): the facts are
    # those of the triage's own walk all the same.
    tree = ast.parse(SIGNATURES)
    facts = summarise(tree, "svc", False).syntax
    assert facts == collect(tree)
    assert {"from_pretrained", "len", "softmax", "zeros", "no_grad"} <= facts.calls  # from signatures and decorators
    assert {"total", "window"} <= facts.assigned
    assert {"padding", "max_length"} <= facts.keywords


@pytest.mark.parametrize("path", sorted((Path(__file__).parent / "fixtures").rglob("*.py")), ids=lambda path: path.name)
def test_summarised_triage_facts_are_the_triage_walks_on_every_fixture(path):
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        pytest.skip("not Python that ast parses")
    assert summarise(tree, "fixture", path.name == "__init__.py").syntax == collect(tree)


hypothesmith = pytest.importorskip("hypothesmith")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar(auto_target=False))
def test_summarised_triage_facts_are_the_triage_walks_on_generated_programs(program):
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # the grammar allows what the compiler rejects; the index has no summary for those
    assert summarise(tree, "generated", False).syntax == collect(tree)


ROUTER = """\
from fastapi import APIRouter

router = APIRouter()


@router.get("/items/{n}")
def item_{n}():
    return {{"n": {n}}}
"""


def _linted_with_routes(tmp_path, monkeypatch, route_modules: dict[str, str], noted_too: tuple[str, ...] = ()):
    """Lint a project of ``route_modules`` (name -> text) beside the handlers, the app and enough plain modules for
    two workers; each call of ``compose``, ``process_file`` and the runner functions ``noted_too`` is logged with
    its process. The run's result, the log's (kind, pid) rows, the composers, the linters."""
    import os

    import gemlint.project.files as files
    import gemlint.runner as runner

    config = project(tmp_path)
    (tmp_path / "svc" / "handlers.py").write_text(HANDLERS)
    (tmp_path / "svc" / "main.py").write_text(MAIN)
    for name, text in route_modules.items():
        (tmp_path / "svc" / name).write_text(text)
    for n in range(runner.PARALLEL_THRESHOLD):
        (tmp_path / "svc" / f"plain_{n}.py").write_text(f"VALUE = {n}\n")
    log = tmp_path / "pids.log"

    def noted(kind, function):
        def call(*args, **kwargs):
            with open(log, "a") as handle:
                handle.write(f"{kind} {os.getpid()}\n")
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(files, "compose", noted("compose", files.compose))
    monkeypatch.setattr(runner, "process_file", noted("lint", runner.process_file))
    for name in noted_too:
        monkeypatch.setattr(runner, name, noted(name, getattr(runner, name)))
    result = run([tmp_path / "svc"], config, jobs=2)
    assert [d.path.rsplit("/", 1)[-1] for d in result.diagnostics if d.code == "GEM602"] == ["handlers.py"]
    rows = [line.split() for line in log.read_text().splitlines()]
    composers = {pid for kind, pid in rows if kind == "compose"}
    linters = {pid for kind, pid in rows if kind == "lint"}
    return rows, composers, linters


def test_workers_inherit_the_routes_composed_once_before_they_fork(tmp_path, monkeypatch):
    """A project whose routes are declared in many modules has them composed once, in a process of its own,
    before the workers fork: no worker parses every route module again, and the handler a route elsewhere
    names is still found. Meanwhile the process that forks the workers imports the Python rules, once, for
    every worker to inherit."""
    import os

    import gemlint.runner as runner

    routers = {f"items_{n}.py": ROUTER.format(n=n) for n in range(runner.ROUTE_MODULES_COMPOSED_ONCE)}
    rows, composers, linters = _linted_with_routes(tmp_path, monkeypatch, routers, noted_too=("_import_python_rules",))
    assert len(composers) == 1 and len(linters) == 2
    assert not composers & (linters | {str(os.getpid())})
    importers = [(index, pid) for index, (kind, pid) in enumerate(rows) if kind == "_import_python_rules"]
    first_lint = next(index for index, (kind, _) in enumerate(rows) if kind == "lint")
    assert [pid for _, pid in importers] == [str(os.getpid())] and importers[0][0] < first_lint


def test_one_large_route_module_is_composed_once_before_the_workers_fork(tmp_path, monkeypatch):
    """A single route module larger than ROUTE_MODULE_BYTES_COMPOSED_ONCE is parsed for the routes in a process of
    its own: no worker adds that parse to the trees it holds (a 650 KB FastAPI server's parse takes 230 MiB)."""
    import os

    import gemlint.runner as runner

    padding = "".join(f"# a comment line of the large server module, number {n}\n" for n in range(runner.ROUTE_MODULE_BYTES_COMPOSED_ONCE // 40))
    _, composers, linters = _linted_with_routes(tmp_path, monkeypatch, {"items_0.py": ROUTER.format(n=0) + padding})
    assert len(composers) == 1 and not composers & (linters | {str(os.getpid())})


def test_modules_that_star_import_each_other_resolve_a_name_none_defines_in_bounded_work(tmp_path, monkeypatch):
    # Six modules, each `from <every other> import *`: a name none of them defines (a builtin, a local) was
    # looked up along every path of the ring, up to the depth limit (millions of look-ups in a real repository).
    names = [f"part{i}" for i in range(6)]
    for name in names:
        stars = "".join(f"from {other} import *\n" for other in names if other != name)
        (tmp_path / f"{name}.py").write_text(f"{stars}\n\ndef {name}_helper(x):\n    return len(x)\n")
    forget_projects()
    model = project_for(default_config(tmp_path)).model
    model.build()
    from gemlint.project.model import ProjectModel

    looked_up = 0
    resolve_absolute = ProjectModel.resolve_absolute

    def counted(self, *args, **kwargs):
        nonlocal looked_up
        looked_up += 1
        assert looked_up < 1000, "the ring of star imports is walked path by path"
        return resolve_absolute(self, *args, **kwargs)

    monkeypatch.setattr(ProjectModel, "resolve_absolute", counted)
    entry = model.by_path[str(tmp_path / "part0.py")]
    assert model.resolve(entry, "len") is None
    assert model.resolve(entry, "part3_helper").qualname == "part3_helper"  # a name one of them defines is found
