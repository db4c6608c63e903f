"""The text prefilter and the ``ast`` triage only ever spare work: they never hide a finding."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from fixture_harness import FIXTURES, fixture_files, lint_fixture
from gemlint.analysis.triage import Triage, collect, is_test_class, is_test_module, is_test_path
from gemlint.api import lint_source
from gemlint.config import default_config
from gemlint.registry import all_rules
from gemlint.languages import Language
from gemlint.rule import PythonRule


def _facts(source: str):
    return collect(ast.parse(source))


def _triage(source: str, **paths) -> Triage:
    return Triage(
        _facts(source), source, paths.get("training", False), paths.get("inference", False), paths.get("test", False)
    )


@pytest.fixture
def without_filters(monkeypatch):
    """Every rule runs on every file of its languages, as if there were no prefilter and no triage."""
    for rule in all_rules():
        monkeypatch.setattr(rule, "may_match", classmethod(lambda cls, text, language=None: True))
        if issubclass(rule, PythonRule):
            monkeypatch.setattr(rule, "may_match_syntax", classmethod(lambda cls, triage: True))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_filters_hide_no_finding(path, request):
    filtered = lint_fixture(path)
    request.getfixturevalue("without_filters")
    assert lint_fixture(path) == filtered


def test_every_rule_example_passes_its_own_filters():
    config = default_config(FIXTURES)
    for rule in all_rules():
        if not issubclass(rule, PythonRule) or rule.examples_language() is not Language.PYTHON:
            continue
        facts = collect(ast.parse(rule.bad))
        assert rule.may_match(rule.bad), rule.code
        assert rule.may_match_syntax(Triage.of(facts, rule.bad, config, "service/app.py")), rule.code


def test_facts_record_terminal_names_keywords_targets_and_imports():
    facts = _facts(
        """
import torch.nn as nn
from os import environ
from fastapi import FastAPI

@app.post("/predict")
async def handler(request):
    out = tokenizer(text, padding="max_length", **extra)
    obj.attr[0] = 1
    a, (b, *c) = pairs
    with torch.profiler.profile() as prof:
        pass

class Service(base.TritonBase, metaclass=Meta):
    pass
"""
    )
    assert {"post", "tokenizer", "profile"} <= facts.calls
    assert facts.keywords == {"padding"}  # ``**extra`` names nothing
    assert {"out", "attr", "a", "b", "c"} <= facts.assigned
    assert facts.decorators == {"post"}
    assert facts.functions == {"handler"} and facts.classes == {"Service"} and facts.bases == {"TritonBase"}
    assert {"torch", "torch.nn", "os", "fastapi"} <= facts.imports
    assert not facts.main_block


def test_aliases_count_as_the_names_they_import():
    facts = _facts("from torch.autograd import set_detect_anomaly as sda\nsda(True)\nfrom torch import profiler as p\n")
    assert "set_detect_anomaly" in facts.calls


def test_relative_imports_are_not_modules():
    assert _facts("from . import torch\nfrom .fastapi import app\n").imports == set()


def test_main_block_only_at_module_level():
    assert _facts('if __name__ == "__main__":\n    main()\n').main_block
    assert not _facts('def f():\n    if __name__ == "__main__":\n        main()\n').main_block


def test_facts_reach_the_deepest_nodes():
    deep = "x = " + "(" * 150 + "f(padding=1)" + ")" * 150 + "\n"
    facts = _facts(deep)
    assert "f" in facts.calls and "padding" in facts.keywords


@pytest.mark.parametrize(
    ("source", "paths", "expected"),
    [
        ("def forward(self, x):\n    return self.net(x)\n", {}, False),
        ("def predict(x):\n    return model(x)\n", {}, True),
        ("def predictor(x):\n    return model(x)\n", {}, False),
        ("def _generate2(x):\n    return model(x)\n", {}, True),
        ("def predict(x):\n    return model(x)\n", {"training": True}, False),
        ("def helper(x):\n    return model(x)\n", {"inference": True}, True),
        ('if __name__ == "__main__":\n    model(x)\n', {}, True),
        ('if __name__ == "__main__":\n    test_model()\n', {"test": True}, False),
        ("from flask import Flask\ndef index():\n    pass\n", {}, True),
        ("class H(BaseHandler):\n    pass\n", {}, True),
        ("class M(TritonPythonModel):\n    pass\n", {}, False),
        ("class TritonPythonModel:\n    def execute(self, requests):\n        pass\n", {}, True),
        ("@serve.deployment\nclass D:\n    def __call__(self, r):\n        pass\n", {}, True),
        ("class B(LightningModule):\n    def predict_step(self, batch):\n        pass\n", {}, True),
        # A test module's handlers, hooks and callbacks are fixtures of its tests (ModuleAnalysis.context_of) ...
        ("from flask import Flask\ndef index():\n    pass\n", {"test": True}, False),
        ("class H(BaseHandler):\n    pass\n", {"test": True}, False),
        ("def predict(x):\n    return model(x)\n", {"test": True}, False),
        # ... unless inference-paths names the file.
        ("def helper(x):\n    return model(x)\n", {"test": True, "inference": True}, True),
    ],
)
def test_inference_context_by_spelling(source, paths, expected):
    assert _triage(source, **paths).may_have_inference_context() is expected


def test_a_test_module_is_told_by_its_place_in_the_project(tmp_path):
    """Paths to a nested config's folder (what its globs see) may leave out the test folder above it; the
    triage places the file in the project, as the analyses do, and never admits what they rule out."""
    config = default_config(tmp_path)
    source = "from fastapi import FastAPI\n\napp = FastAPI()\n\n@app.get('/predict')\ndef predict(x):\n    return model(x)\n"
    facts = _facts(source)
    inside = Triage.of(facts, source, config, "server.py", tmp_path / "tests" / "e2e" / "server.py")
    assert inside.test_file and not inside.may_have_inference_context()
    assert not Triage.of(facts, source, config, "server.py", tmp_path / "serving" / "server.py").test_file
    # A file outside the project is placed by the path it was given.
    assert not Triage.of(facts, source, config, "server.py", tmp_path.parent / "tests" / "server.py").test_file
    assert Triage.of(facts, source, config, "tests/server.py").test_file


def test_environment_writes_need_a_write_and_the_variable():
    assert _triage('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n').may_write_environment(("CUDA_LAUNCH_BLOCKING",))
    assert _triage('import os\nos.putenv("X", "1")\n').may_write_environment(("X",))
    assert not _triage('import os\nblocking = os.environ.get("CUDA_LAUNCH_BLOCKING")\n').may_write_environment(
        ("CUDA_LAUNCH_BLOCKING",)
    )
    assert not _triage('import os\nos.environ["OTHER"] = "1"\n').may_write_environment(("CUDA_LAUNCH_BLOCKING",))


def test_a_file_no_rule_admits_is_never_parsed_by_libcst(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("LibCST parsed a file that no rule's triage admits")

    monkeypatch.setattr(cst, "parse_module", refuse)
    # torch everywhere (every text prefilter of GEM1xx passes), but nothing runs per request.
    source = "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return self.fc(x).relu()\n"
    assert lint_source(source, "pkg/net.py") == []


DJANGO_MODULES_WITHOUT_FUNCTIONS = {
    "site/app/admin.py": "from django.contrib import admin\n",
    "site/app/apps.py": "from django.apps import AppConfig\n\nclass AppConfig(AppConfig):\n    name = 'app'\n",
    "site/app/urls.py": "from django.urls import path\nfrom . import views\n\nurlpatterns = [path('health', views.health)]\n",
}


@pytest.mark.parametrize("path", sorted(DJANGO_MODULES_WITHOUT_FUNCTIONS))
def test_a_web_module_without_functions_is_never_parsed(monkeypatch, path):
    """A health endpoint's handler is a function of the module it is reported in: a Django module that imports the
    framework and defines none (admin, app config, URL table) cannot hold one."""

    def refuse(*args, **kwargs):
        raise AssertionError("LibCST parsed a web module that defines no function")

    monkeypatch.setattr(cst, "parse_module", refuse)
    assert lint_source(DJANGO_MODULES_WITHOUT_FUNCTIONS[path], path) == []


PROFILED = "import torch\n\ndef step(model, x):\n    with torch.profiler.profile(record_shapes=True):\n        return model(x)\n"


@pytest.mark.parametrize("path", ["tests/test_step.py", "benchmarks/step.py", "profiling/step.py"])
def test_debugging_switches_in_tests_benchmarks_and_profiling_scripts_are_never_parsed(monkeypatch, path):
    """The GEM4xx rules report production code only: a test of a profiler (a 466 KB one doubled its worker's memory
    when parsed) is ruled out before LibCST."""

    def refuse(*args, **kwargs):
        raise AssertionError("LibCST parsed a file whose only candidates are debugging switches outside production code")

    monkeypatch.setattr(cst, "parse_module", refuse)
    assert lint_source(PROFILED, path) == []


def test_a_profiler_in_production_code_is_still_parsed_and_reported():
    assert [d.code for d in lint_source(PROFILED, "service/step.py")] == ["GEM401"]


def test_a_file_a_rule_admits_is_linted():
    source = "import torch\nfrom fastapi import FastAPI\napp = FastAPI()\n\n@app.post('/p')\ndef predict(x):\n    model = torch.load('m.pt')\n    return model(x)\n"
    assert {d.code for d in lint_source(source, "service/app.py")} >= {"GEM101"}


def test_broken_file_is_still_reported_when_no_rule_admits_it():
    assert [d.code for d in lint_source("def f(:\n    torch\n", "pkg/broken.py")] == ["GEM000"]


def test_rule_default_triage_admits_everything():
    class Anything(PythonRule):
        pass

    assert Anything.may_match_syntax(_triage("x = 1\n"))


@pytest.mark.parametrize("module", ["rule_table", "triage_table"])
def test_the_rule_tables_are_generated_from_the_rules_current_metadata(module):
    from gemlint import registry

    table = Path(__file__).resolve().parent.parent / "gemlint" / "rules" / f"{module}.py"
    assert table.read_text() == getattr(registry, f"{module}_source")(), (
        f"gemlint/rules/{module}.py is stale: regenerate it with "
        f"python -c \"from gemlint.registry import {module}_source as t; print(t(), end='')\" > gemlint/rules/{module}.py"
    )


def test_a_run_whose_files_come_from_the_cache_imports_no_triage(tmp_path):
    """Selecting the rules reads the rules' table alone: the triage (its gates, the frameworks' names) is imported
    only by a run that lints a file."""
    code = "import sys; from gemlint.registry import rule_entries; rule_entries(); print('gemlint.analysis.triage' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"


def test_the_triage_table_decides_as_the_rules_do():
    """The flake8 plugin's verdict from the table equals the rules' own, on every rule's examples."""
    from gemlint.registry import all_rules
    from gemlint.rules.triage_table import PYTHON_RULES

    by_code = {rule.code: rule for rule in all_rules()}
    config = default_config(Path("."))
    for entry in PYTHON_RULES:
        rule = by_code[entry.code]
        for text in (rule.bad, rule.good, "import torch\nx = 1\n"):
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            triage = Triage.of(collect(tree), text, config, "service/app.py")
            assert entry.may_match(text) == rule.may_match(text, Language.PYTHON), entry.code
            assert entry.gate.admits(triage) == rule.may_match_syntax(triage), entry.code


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_api.py", True),
        ("pkg/test/helpers.py", True),
        ("runtimes/alibi/tests_alibi_explain/models.py", True),
        ("runtimes/onnx/onnx_tests/conftest.py", True),
        ("src/model_test.py", True),
        ("src/attestation/check.py", False),
        ("src/contest/server.py", False),
        ("src/testing_utils.py", False),
        ("serving/app.py", False),
    ],
)
def test_test_paths_by_their_folders_and_names(path, is_test):
    assert is_test_path(path) is is_test


@pytest.mark.parametrize(
    ("path", "source", "is_test"),
    [
        ("u2net_test.py", "import torch\n\nif __name__ == '__main__':\n    print(torch.load('m.pt'))\n", False),
        ("u2net_test.py", "import torch\n\ndef test_load():\n    assert torch.load('m.pt')\n\nif __name__ == '__main__':\n    test_load()\n", True),
        ("u2net_test.py", "import unittest\n\nif __name__ == '__main__':\n    unittest.main()\n", True),
        ("u2net_test.py", "import torch\nprint(torch.zeros(1))\n", True),
        ("tests/predict.py", "if __name__ == '__main__':\n    print(1)\n", True),
        ("conftest.py", "if __name__ == '__main__':\n    print(1)\n", True),
    ],
)
def test_a_script_named_like_a_test_is_a_test_only_by_its_content(path, source, is_test):
    # Only the file name says `test`: a script with a `__main__` block and no test in it tries a model out.
    assert is_test_module(path, collect(ast.parse(source))) is is_test


def test_marker_checks_on_scanned_text_agree_with_the_text():
    """The engine asks each rule's markers of a ScannedText (each marker searched for once per file): the
    answer is the plain text's, for every rule, language and fixture."""
    from fixture_harness import fixture_files
    from gemlint.text import ScannedText

    for path in fixture_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        scanned = ScannedText(text)
        for rule in all_rules():
            for language in (None, *rule.languages):
                assert rule.may_match(scanned, language) == rule.may_match(text, language), (rule.code, path.name)



@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('if __name__ == "__main__":\n    model(x)\n', True),
        ('if __name__ == "__main__":\n    for b in data:\n        model(b).sum().backward()\n        optimizer.step()\n', False),
        ('import torch\nopt = torch.optim.Adam(params)\nif __name__ == "__main__":\n    model(x)\n', False),
        ('if __name__ == "__main__":\n    loss = model(x)\n    loss.backward()\n\ndef predict(x):\n    return model(x)\n', True),
        ('net = Net()\nout = net(x)\nout.backward()\n', False),
        ('net = Net()\nout = net(x)\n', True),
    ],
)
def test_a_training_script_has_inference_context_only_through_its_functions(source, expected):
    """The resolved twin of the triage's answer: a script's `__main__` block and module-level code serve
    predictions only where the script does not train (where training wins, a model tracking is not needed)."""
    from test_models import analyse

    assert analyse(source).may_have_inference_context is expected


def test_a_file_on_another_drive_than_the_project_is_placed_by_its_given_path(monkeypatch):
    from gemlint.analysis import triage

    def other_drive(path, start):
        raise ValueError("path is on mount 'D:', start on mount 'C:'")

    monkeypatch.setattr(triage.os.path, "relpath", other_drive)
    assert triage.project_relative("D:/tests/server.py", "C:/project", "server.py") == "server.py"


@pytest.mark.parametrize(
    ("name", "stand_in"),
    [("TestModule", True), ("Test", True), ("Test_Net", True), ("TestNet2", True), ("Tester", False), ("Testbed", False),
     ("TextModel", False), ("TestTimeAugmentation", False), ("TestTimeFlip", False), ("Model", False)],
)
def test_classes_named_as_test_classes_are_stand_ins_but_not_test_time_augmentation(name, stand_in):
    assert is_test_class(name) is stand_in
