"""What a run over a few files of a large project costs, counted in files parsed (not time): the pre-commit
shape. The project index is read back from the cache, the edited module alone is summarised again, and
LibCST parses only the files linted and the few whose code their questions are about."""

from __future__ import annotations

from pathlib import Path

import libcst

import gemlint.project.index_store as index_store
import gemlint.project.model as project_model
from gemlint.analysis.module import ModuleAnalysis
from gemlint.cache import Cache
from gemlint.config import default_config
from gemlint.project.files import forget_projects
from gemlint.runner import run

SERVICE = """\
import torch
from fastapi import FastAPI

from svc.layers import Net

app = FastAPI()
model = Net()
model.load_state_dict(torch.load("net.pt"))
model.eval()


@app.post("/predict")
def predict(x):
    return model(torch.tensor(x))
"""
LAYERS = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1), torch.nn.Linear(4, 2))

    def forward(self, x):
        return self.body(x)
"""
FILLER = """\
import torch


class Block{n}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)


def predict_{n}(block, x):
    return block(x)
"""
MODULES = 60


def make_project(root):
    (root / "svc").mkdir()
    (root / "svc" / "__init__.py").write_text("")
    (root / "svc" / "app.py").write_text(SERVICE)
    (root / "svc" / "layers.py").write_text(LAYERS)
    (root / "blocks").mkdir()
    (root / "blocks" / "__init__.py").write_text("")
    for n in range(MODULES):
        (root / "blocks" / f"block_{n}.py").write_text(FILLER.format(n=n))
    forget_projects()
    return default_config(root)


class Counted:
    """Counts the modules summarised for the index, the summaries decoded from it and the files LibCST parses."""

    def __init__(self, monkeypatch):
        self.summarised: list[str] = []
        self.decoded: list[str] = []
        self.parsed: int = 0
        summarise, parse, decode = project_model.summarise_file, libcst.parse_module, index_store.decode_summary

        def decode_summary(data, *found_corrupt):
            summary = decode(data, *found_corrupt)
            self.decoded.append(summary.name)
            return summary

        def summarise_file(path, module):
            self.summarised.append(module)
            return summarise(path, module)

        def parse_module(*args, **kwargs):
            self.parsed += 1
            return parse(*args, **kwargs)

        monkeypatch.setattr(project_model, "summarise_file", summarise_file)
        monkeypatch.setattr(libcst, "parse_module", parse_module)
        monkeypatch.setattr(index_store, "decode_summary", decode_summary)


def codes(result, root):
    return sorted((Path(d.path).resolve().relative_to(root).as_posix(), d.code) for d in result.diagnostics)


def test_one_edited_file_with_a_warm_cache_parses_that_file_alone(tmp_path, monkeypatch):
    config = make_project(tmp_path)
    cache = Cache(tmp_path / ".gemlint_cache")
    run([tmp_path], config, jobs=1, cache=cache)
    app = tmp_path / "svc" / "app.py"
    app.write_text(SERVICE + "# edited\n")
    forget_projects()
    counted = Counted(monkeypatch)
    result = run([app], config, jobs=1, cache=Cache(tmp_path / ".gemlint_cache"))
    assert counted.summarised == ["svc.app"]  # the other 62 modules come from the cached index
    # The edit moved no definition, import or call: the facts derived from every module are read back, and
    # only the modules the file's questions are about are decoded (its model class's), not all 62.
    assert set(counted.decoded) <= {"svc.layers", "svc"}
    assert counted.parsed <= 2  # the edited file, and at most the module its model class comes from
    assert codes(result, tmp_path) == [("svc/app.py", "GEM101")]


def test_an_edit_that_changes_what_a_module_calls_derives_the_facts_again(tmp_path, monkeypatch):
    config = make_project(tmp_path)
    run([tmp_path], config, jobs=1, cache=Cache(tmp_path / ".gemlint_cache"))
    layers = tmp_path / "svc" / "layers.py"
    layers.write_text(LAYERS.replace("class Net(torch.nn.Module):", "class Net(torch.nn.Module):\n    pass\n\n\nclass Shell:"))
    forget_projects()
    counted = Counted(monkeypatch)
    result = run([tmp_path / "svc" / "app.py"], config, jobs=1, cache=Cache(tmp_path / ".gemlint_cache"))
    assert counted.summarised == ["svc.layers"]
    # The facts are derived again from the ledger: only the pieces that read the edited module are (the
    # edited module's own, and those of the service that imports `Net` from it); the 60 fillers read neither.
    assert set(counted.decoded) <= {"svc.app", "svc", "svc.layers"}
    # `Net` no longer subclasses torch.nn.Module (its methods moved to `Shell`): no model runs in `predict`.
    assert codes(result, tmp_path) == codes(run([tmp_path / "svc" / "app.py"], config, jobs=1), tmp_path)


def test_three_files_of_a_fresh_clone_index_the_project_but_parse_only_what_they_ask(tmp_path, monkeypatch):
    config = make_project(tmp_path)
    counted = Counted(monkeypatch)
    files = [tmp_path / "svc" / "app.py", tmp_path / "blocks" / "block_1.py", tmp_path / "blocks" / "block_2.py"]
    result = run(files, config, jobs=1, cache=Cache(tmp_path / ".gemlint_cache"))
    assert len(counted.summarised) == MODULES + 4  # every module once, for the index
    assert counted.parsed <= 4
    assert codes(result, tmp_path) == [("svc/app.py", "GEM101")]


CONVERTER = """\
import torch

from svc.layers import Net


def convert(path):
    net = Net()
    net.load_state_dict(torch.load(path))
    return net(torch.zeros(1, 4)).tolist()
"""


def test_a_module_that_only_imports_a_project_model_is_not_parsed_for_loads_per_request(tmp_path, monkeypatch):
    """GEM502's markers stand for a request (a serving framework's import): a model class imported from another
    module shows no request, so a module no request reaches is not parsed for it, though it spells a load."""
    config = make_project(tmp_path)
    (tmp_path / "tools").mkdir()
    converter = tmp_path / "tools" / "convert.py"
    converter.write_text(CONVERTER)
    counted = Counted(monkeypatch)
    assert codes(run([converter], config, jobs=1), tmp_path) == []
    assert counted.parsed == 0
    # Reached from a route of another module, it is: the load runs per request there.
    (tmp_path / "svc" / "app.py").write_text(SERVICE.replace("def predict(x):", "def predict(x):\n    convert(x)").replace(
        "from svc.layers import Net", "from svc.layers import Net\nfrom tools.convert import convert"
    ))
    forget_projects()
    counted = Counted(monkeypatch)
    assert ("tools/convert.py", "GEM502") in codes(run([converter], config, jobs=1), tmp_path)
    assert counted.parsed >= 1


HEALTH = """\
import torch
from fastapi import FastAPI

from svc.layers import Net

app = FastAPI()
model = Net()
model.eval()


@app.get("/healthz")
def healthz():
    with torch.inference_mode():
        model(torch.zeros(1, 4))
    return {"ok": True}
"""


def test_a_file_whose_routes_the_project_read_is_linted_on_the_tree_the_project_parsed(tmp_path, monkeypatch):
    config = make_project(tmp_path)
    # `admin.py`, a web module that declares no route, is linted first: its handlers may be mounted elsewhere,
    # so the project reads every route of the project, which parses `app.py`.
    (tmp_path / "svc" / "admin.py").write_text("from fastapi import Request\n\n\ndef status(request: Request):\n    return {}\n")
    (tmp_path / "svc" / "app.py").write_text(HEALTH)
    expected = codes(run([tmp_path], config, jobs=1), tmp_path)
    assert ("svc/app.py", "GEM602") in expected
    forget_projects()
    texts: list[str] = []
    parse = libcst.parse_module

    def parse_module(text, *args, **kwargs):
        texts.append(text)
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    assert codes(run([tmp_path], config, jobs=1), tmp_path) == expected
    assert texts.count(HEALTH) == 1


def test_the_analyses_read_the_names_a_file_imports_from_the_triages_tree(tmp_path, monkeypatch):
    # The triage parses the file with `ast` before LibCST does; what the analyses read of that tree (the names
    # only imports bind) is taken before it is let go, not parsed from the text a second time.
    config = make_project(tmp_path)
    reparsed: list[str] = []
    reparse = ModuleAnalysis.ast_tree

    def counting(self):
        reparsed.append(self.context.source.relative)
        return reparse(self)

    monkeypatch.setattr(ModuleAnalysis, "ast_tree", counting)
    found = codes(run([tmp_path / "svc" / "app.py"], config, jobs=1), tmp_path)
    assert ("svc/app.py", "GEM101") in found  # the analyses asked what `torch` and `model` name
    assert "svc/app.py" not in reparsed


ROUTES = """\
from fastapi import FastAPI

from svc import {imported}

app = FastAPI()


@app.get("/route_{n}")
def route_{n}():
    return {{"ok": True}}
"""
PROBES = """\
from fastapi import Request


def healthz(request: Request):
    return {"ok": True}
"""


def make_web_project(root, routes: int, naming: str) -> None:
    (root / "svc").mkdir()
    (root / "svc" / "__init__.py").write_text("")
    (root / "svc" / "layers.py").write_text(LAYERS)
    (root / "svc" / "probes.py").write_text(PROBES)
    for n in range(routes):
        (root / "svc" / f"routes_{n}.py").write_text(ROUTES.format(n=n, imported=naming if n == 0 else "layers"))
    forget_projects()


def test_a_web_module_no_route_module_names_parses_none_of_them(tmp_path, monkeypatch):
    # A handler is mounted by a module that names its module (an import, a dotted string); `probes` declares no
    # route and no module that declares one names it: its GEM602 check parses no route module.
    make_web_project(tmp_path, routes=12, naming="layers")
    counted = Counted(monkeypatch)
    run([tmp_path / "svc" / "probes.py"], default_config(tmp_path), jobs=1)
    assert counted.parsed == 1


def test_a_web_module_a_route_module_names_is_looked_for_in_the_routes(tmp_path, monkeypatch):
    make_web_project(tmp_path, routes=12, naming="probes")
    counted = Counted(monkeypatch)
    run([tmp_path / "svc" / "probes.py"], default_config(tmp_path), jobs=1)
    assert counted.parsed == 1 + 12  # the project's routes are read from every module that declares one
