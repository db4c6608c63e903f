"""A linted repository is untrusted input: gemlint never runs its code and never reads outside it.

Each test plays a pull request from a fork: a crafted cache file, a link to a secret outside the
repository, a link to the process environment, a config that extends a file elsewhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.config import ConfigError, load_config
from gemlint.project.index_store import DATA_FILENAME, INDEX_FILENAME, index_format, MAX_INDEX_BYTES, IndexCache
from gemlint.project.summary import FunctionSummary, ModuleSummary
from gemlint.registry import known_codes
from gemlint.server.session import Session

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and /proc are POSIX")

SECRET = "SECRET_7d1e2f"

SERVICE = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt").eval()


@app.post("/predict")
def predict(values: list[float]):
    return model(torch.tensor([values])).tolist()
"""

#: A route handler whose name is the secret: any report that read it would print the name.
HANDLER = f"""\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt").eval()


@app.get("/healthz")
def healthz_{SECRET}():
    model(torch.zeros(1, 4))
    return {{"ok": True}}
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: api:1
          command: ["uvicorn", "handlers:app"]
          livenessProbe:
            httpGet:
              path: /healthz
              port: 8000
"""


class Payload:
    """Unpickling this writes a marker file: the proof that a cache file ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(autouse=True)
def cache_in_the_repository(monkeypatch):
    """The cache where users have it, in the linted repository (the suite's default keeps it elsewhere)."""
    monkeypatch.delenv("GEMLINT_CACHE_DIR", raising=False)


def reported(output: str, code: str) -> bool:
    """Whether a report lists a finding of ``code`` (SARIF names every rule in its tool metadata)."""
    if output.lstrip().startswith("{") and "runs" in (log := json.loads(output)):
        return any(result["ruleId"] == code for run in log["runs"] for result in run["results"])
    return code in output


@pytest.fixture
def repository(tmp_path):
    """A git work tree with a service, and a folder outside it holding secrets."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "app.py").write_text(SERVICE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(f'TOKEN = "{SECRET}"\nnot python {SECRET}\n')
    (outside / "handlers.py").write_text(HANDLER)
    return root


def lint(root: Path, *args: str, env: dict | None = None):
    old = Path.cwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, ["--exit-zero", *args], catch_exceptions=False, env=env)
    finally:
        os.chdir(old)


def touch_app(root: Path) -> None:
    """An edit, so that the next run summarises the project afresh and reads the index back."""
    (root / "app.py").write_text(SERVICE + "\n# edited\n")


# -- the project-index cache -----------------------------------------------------------------------
@pytest.mark.parametrize("name", [INDEX_FILENAME, "project-index.pickle"])
def test_a_pickled_payload_in_the_cache_never_runs(repository, tmp_path, name):
    marker = tmp_path / "ran"
    lint(repository)  # creates the cache
    cache = repository / ".gemlint_cache"
    (cache / name).write_bytes(pickle.dumps({"format": "x", "entries": Payload(marker)}))
    touch_app(repository)
    result = lint(repository)
    assert result.exit_code == 0 and "GEM101" in result.output
    assert not marker.exists()
    if name == INDEX_FILENAME:  # the rejected file is replaced with a valid one
        assert json.loads((cache / name).read_text())["entries"]


def test_the_original_reproduction_in_a_fresh_process(repository, tmp_path):
    """Pickle a payload into the index file, edit a file, run ``gemlint .``: nothing runs."""
    marker = tmp_path / "ran-in-subprocess"
    command = [sys.executable, "-m", "gemlint", "--exit-zero", "."]
    subprocess.run(command, cwd=repository, capture_output=True, timeout=120, check=True)
    for name in (INDEX_FILENAME, "project-index.pickle"):
        (repository / ".gemlint_cache" / name).write_bytes(pickle.dumps(Payload(marker)))
    touch_app(repository)
    completed = subprocess.run(command, cwd=repository, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0 and "GEM101" in completed.stdout
    assert not marker.exists()


def summary_field(cls: type, name: str) -> int:
    """Where a summary's JSON array holds the field ``name`` of ``cls`` (fields are stored in declared order)."""
    return [field.name for field in dataclasses.fields(cls)].index(name)


def with_field(summary: list, name: str, value: object) -> list:
    changed = list(summary)
    changed[summary_field(ModuleSummary, name)] = value
    return changed


def wrong_types(summary: list) -> list:
    functions = summary[summary_field(ModuleSummary, "functions")]
    first = next(iter(functions.values()), None)
    if first is None:
        return with_field(summary, "functions", 7)
    line = list(first)
    line[summary_field(FunctionSummary, "line")] = "nine"
    return with_field(summary, "functions", {"predict": line})


def with_summary(change):
    """A corruption of the first stored summary, written into the data file with a header that matches it."""

    def corrupt(header: dict, data: bytes) -> tuple[dict, bytes]:
        name, digest, shape, offset, length = header["entries"][0]
        text = json.dumps(change(json.loads(data[offset : offset + length]))).encode()
        token = data[:32]
        return {**header, "size": len(token) + len(text), "entries": [[name, digest, shape, len(token), len(text)]]}, token + text

    return corrupt


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(with_summary(wrong_types), id="a field of the wrong type"),
        pytest.param(with_summary(lambda summary: [*summary, 1]), id="a field too many"),
        pytest.param(with_summary(lambda summary: summary[:-1]), id="a field too few"),
        pytest.param(with_summary(lambda summary: with_field(summary, "star_imports", ["a", True])), id="a bool among strings"),
        pytest.param(
            with_summary(lambda summary: with_field(summary, "imports", {**summary[summary_field(ModuleSummary, "imports")], "x": 3})),
            id="a number among the imports",
        ),
        pytest.param(with_summary(lambda summary: with_field(summary, "name", "elsewhere")), id="another module's summary"),
        pytest.param(with_summary(lambda summary: dict(zip((f.name for f in dataclasses.fields(ModuleSummary)), summary))), id="an object, not an array"),
        pytest.param(lambda header, data: ({**header, "entries": [[1, 2, 3, 4, 5]]}, data), id="a key that is not strings"),
        pytest.param(lambda header, data: ({**header, "entries": [[*e[:3], e[3], header["size"]] for e in header["entries"]]}, data), id="past the data's end"),
        pytest.param(lambda header, data: ({**header, "entries": [[*e[:3], -1, e[4]] for e in header["entries"]]}, data), id="before the data's start"),
        pytest.param(lambda header, data: ({**header, "entries": [[*e[:4], True] for e in header["entries"]]}, data), id="a length that is a bool"),
        pytest.param(lambda header, data: ({**header, "entries": [[*e, 0] for e in header["entries"]]}, data), id="a row with a field too many"),
        pytest.param(lambda header, data: (header, b"0" * 32 + data[32:]), id="another data file"),
        pytest.param(lambda header, data: ({**header, "format": "0|old"}, data), id="another format"),
        pytest.param(lambda header, data: ([header], data), id="not an object"),
    ],
)
def test_a_corrupt_index_is_dropped_and_rebuilt_with_the_same_findings(repository, corrupt):
    lint(repository)
    file = repository / ".gemlint_cache" / INDEX_FILENAME
    data_file = file.with_name(DATA_FILENAME)
    header = json.loads(file.read_text())
    assert header["entries"]
    header, data = corrupt(header, data_file.read_bytes())
    file.write_text(json.dumps(header))
    data_file.write_bytes(data)
    index = IndexCache(file.parent)
    for key in list(index.entries):
        summary = index.summary(key)
        if summary is not None:
            list(summary.callables())  # its classes, functions and methods are checked as they are decoded
    assert index.entries == {} and index.rewrite  # the corrupt summary is dropped: the files are written afresh
    touch_app(repository)
    expected = lint(repository, "--no-cache", "--format", "json").output
    assert lint(repository, "--format", "json").output == expected
    assert json.loads(file.read_text())["format"] == index_format()


def test_a_huge_or_deep_index_file_is_not_parsed(repository):
    lint(repository)
    file = repository / ".gemlint_cache" / INDEX_FILENAME
    with open(file, "wb") as handle:  # sparse: past the limit without writing it
        handle.truncate(MAX_INDEX_BYTES + 1)
    assert IndexCache(file.parent).entries == {}
    file.write_bytes(b"x" * (100 * 1024 * 1024))  # 100 MB of garbage
    assert IndexCache(file.parent).entries == {}
    file.write_bytes(b"[" * 200_000)  # deeper than the parser's stack
    assert IndexCache(file.parent).entries == {}
    touch_app(repository)
    assert "GEM101" in lint(repository).output
    assert file.stat().st_size < 1024 * 1024


def test_an_index_file_that_is_a_link_is_neither_read_nor_written_through(repository, tmp_path):
    lint(repository)
    file = repository / ".gemlint_cache" / INDEX_FILENAME
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(file.read_text())
    file.unlink()
    file.symlink_to(elsewhere)
    before = elsewhere.read_text()
    assert IndexCache(file.parent).entries == {}
    touch_app(repository)
    assert "GEM101" in lint(repository).output
    assert elsewhere.read_text() == before and not file.is_symlink()


def test_a_cache_folder_that_is_a_link_is_not_used(repository, tmp_path):
    target = tmp_path / "someone-elses-folder"
    target.mkdir()
    (repository / ".gemlint_cache").symlink_to(target)
    result = lint(repository)
    assert "GEM101" in result.output and "cache disabled" in result.output
    assert list(target.iterdir()) == []


def test_a_result_cache_entry_that_is_a_fifo_or_device_link_is_a_miss(repository):
    lint(repository, "--format", "json")
    entries = [p for p in (repository / ".gemlint_cache").rglob("*.json") if p.name != INDEX_FILENAME]
    assert entries
    entries[0].unlink()
    entries[0].symlink_to("/dev/zero")  # read naively, this never ends
    assert "GEM101" in lint(repository).output


# -- links out of the repository -------------------------------------------------------------------
FORMATS = [
    ["--format", "text", "--show-source"], *(["--format", name] for name in ("json", "sarif", "github", "gitlab", "junit", "rdjson"))
]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f[1])
def test_a_link_to_a_secret_outside_never_appears_in_any_output(repository, tmp_path, fmt):
    (repository / "env.py").symlink_to(tmp_path / "outside" / "secret.py")
    (repository / "lib").symlink_to(tmp_path / "outside", target_is_directory=True)
    for given in ([], ["env.py"], ["lib"], ["lib/secret.py"], ["."]):
        result = lint(repository, "--no-cache", *fmt, *given)
        assert SECRET not in result.output, given
    result = lint(repository, "--no-cache", *fmt, "env.py")
    assert "env.py: a symbolic link to outside the project; not read" in result.output


def test_the_target_named_itself_is_linted(repository, tmp_path):
    """A file outside the project named on the command line (not through a link) is the user's choice."""
    result = lint(repository, "--no-cache", "--show-source", str(tmp_path / "outside" / "secret.py"))
    assert "GEM000" in result.output and SECRET in result.output


def test_a_link_to_the_process_environment_is_never_read(repository):
    (repository / "env.py").symlink_to("/proc/self/environ")
    (repository / "zero.py").symlink_to("/dev/zero")  # would never end
    env = {"CI_JOB_TOKEN": SECRET}
    for fmt in FORMATS:
        result = lint(repository, "--no-cache", *fmt, env=env)
        assert SECRET not in result.output and reported(result.output, "GEM101")
    result = lint(repository, "--no-cache", "/proc/self/environ", env=env)
    assert SECRET not in result.output and "special file" in result.output


def test_links_inside_the_project_are_still_followed(repository):
    (repository / "pkg").mkdir()
    (repository / "pkg" / "alias.py").symlink_to(repository / "app.py")
    result = lint(repository, "--no-cache", "pkg/alias.py")
    assert "pkg/alias.py" in result.output and "GEM101" in result.output


def test_a_handler_linked_from_outside_is_not_read_by_the_project_model(repository, tmp_path):
    (repository / "deploy.yaml").write_text(DEPLOYMENT)
    (repository / "handlers.py").write_text(HANDLER)
    found = lint(repository, "--no-cache", "deploy.yaml").output
    assert "GEM601" in found and SECRET in found  # the control: a handler in the repository is read
    (repository / "handlers.py").unlink()
    (repository / "handlers.py").symlink_to(tmp_path / "outside" / "handlers.py")
    for fmt in FORMATS:
        result = lint(repository, "--no-cache", *fmt, "deploy.yaml")
        assert SECRET not in result.output and not reported(result.output, "GEM601")


def test_the_language_server_session_does_not_read_a_linked_handler(repository, tmp_path):
    (repository / "deploy.yaml").write_text(DEPLOYMENT)
    (repository / "handlers.py").symlink_to(tmp_path / "outside" / "handlers.py")
    session = Session(cwd=repository)
    for path in (repository / "deploy.yaml", repository / "app.py"):
        result = session.lint(path, path.read_text())
        text = repr(result)
        assert SECRET not in text
    assert not any(d.code == "GEM601" for d in session.lint(repository / "deploy.yaml", DEPLOYMENT).diagnostics)


# -- files other files name ------------------------------------------------------------------------
def test_a_header_included_from_outside_the_work_tree_is_not_read(repository, tmp_path):
    (tmp_path / "outside" / "secret.h").write_text(f"#define CHECK(x) if (x) {{ {SECRET}; return; }}\n")
    (repository / "kernel.cu").write_text(
        f'#include "{tmp_path}/outside/secret.h"\n#include "../outside/secret.h"\n'
        "void f() {\n  float *p;\n  cudaMalloc(&p, 16);\n}\n"
    )
    (repository / "local.h").symlink_to(tmp_path / "outside" / "secret.h")
    for fmt in FORMATS:
        assert SECRET not in lint(repository, "--no-cache", *fmt).output


def test_chart_values_linked_from_outside_are_not_read(repository, tmp_path):
    chart = repository / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "outside" / "values.yaml").write_text(f"env: [{SECRET}\n")  # broken YAML quotes its line
    (chart / "values.yaml").symlink_to(tmp_path / "outside" / "values.yaml")
    (chart / "templates" / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.env }}\n"
    )
    for fmt in FORMATS:
        assert SECRET not in lint(repository, "--no-cache", *fmt).output


def test_a_config_extending_a_file_outside_the_repository_is_refused(repository, tmp_path):
    (tmp_path / "outside" / "base.toml").write_text(f'[tool.gemlint]\n"{SECRET}" = 1\n')
    (repository / "pyproject.toml").write_text('[tool.gemlint]\nextend = "../outside/base.toml"\n')
    with pytest.raises(ConfigError, match="outside the repository") as error:
        load_config(repository / "pyproject.toml", known_codes())
    assert SECRET not in str(error.value)
    result = lint(repository)
    assert result.exit_code == 2 and SECRET not in result.output


def test_a_config_file_that_links_to_a_device_is_not_read(repository):
    """``pyproject.toml -> /dev/zero`` would never end: it is not a config file, and the run goes on."""
    (repository / "pyproject.toml").symlink_to("/dev/zero")
    result = lint(repository, "--no-cache")
    assert result.exit_code == 0 and reported(result.output, "GEM101")


# -- never running the repository's code -----------------------------------------------------------
def test_python_dash_m_never_imports_modules_of_the_linted_repository(repository, tmp_path):
    """``python -m gemlint`` puts the current folder on sys.path: a repository file named like a module
    gemlint imports (libcst.py, click.py, pathspec.py, yaml.py) must not run."""
    marker = tmp_path / "ran"
    for name in ("libcst", "click", "pathspec", "yaml", "tomli", "astroid", "tree_sitter", "json_trick"):
        (repository / f"{name}.py").write_text(f"open({str(marker)!r} + '-{name}', 'w').close()\n")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONSAFEPATH", "GEMLINT_CACHE_DIR")}
    completed = subprocess.run(
        [sys.executable, "-m", "gemlint", "--exit-zero", "."], cwd=repository, capture_output=True, text=True, timeout=120, env=env
    )
    assert completed.returncode == 0 and "GEM101" in completed.stdout, completed.stderr
    assert not list(tmp_path.glob("ran-*"))


def test_cross_module_analysis_never_imports_project_modules(repository, tmp_path):
    """astroid and the project model read the project's modules; none is imported or run."""
    marker = tmp_path / "imported"
    (repository / "engine.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\nimport torch\n\n\ndef build():\n    return torch.jit.load('m.pt').eval()\n"
    )
    (repository / "service.py").write_text(
        "from fastapi import FastAPI\nfrom engine import build\nfrom engine import *\n\napp = FastAPI()\nmodel = build()\n\n\n"
        "@app.post('/run')\ndef run(x):\n    return model(x)\n"
    )
    result = lint(repository, "--no-cache", "--preview")
    assert reported(result.output, "GEM101") and not marker.exists()


@pytest.mark.parametrize(
    "content",
    [
        {"runs": [{"results": [1, {"partialFingerprints": 7}], "invocations": "x"}]},
        {"runs": [{"results": {"a": 1}}, 3]},
        [{"fingerprint": 5}],
    ],
    ids=["items of the wrong type", "results not an array", "a fingerprint not a string"],
)
def test_a_crafted_baseline_never_crashes_the_run(repository, content):
    baseline = repository / "baseline.json"
    baseline.write_text(json.dumps(content))
    result = lint(repository, "--no-cache", "--baseline", str(baseline))
    assert result.exit_code in (0, 2) and "Traceback" not in result.output
    assert reported(result.output, "GEM101") or "baseline" in result.output


def test_a_baseline_that_links_to_a_device_is_an_error_not_a_hang(repository):
    (repository / "baseline.json").symlink_to("/dev/zero")
    result = lint(repository, "--no-cache", "--baseline", "baseline.json")
    assert result.exit_code == 2 and "baseline" in result.output
