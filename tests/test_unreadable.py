"""Unreadable files and folders: one GEM000 each, every other finding unchanged, exit 1, no traceback
(SPEC §10).

Root reads through ``chmod 000``, so when the tests run as root the CLI runs without that power: as
uid 65534 where that user can run this interpreter, else as root without the two capabilities that
bypass permission bits (``setpriv``). As any other user the files are simply made unreadable.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sarif_validation import github_errors, schema_errors

NOBODY = 65534
BYPASS_CAPABILITIES = "dac_override,dac_read_search"
LOCKED = ("locked.py", "locked.yaml", "locked.cu", "secret")

FILES = {
    "good.py": 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    # A probe that reaches a forward pass in another module: the project-wide scan walks past the locked folder.
    "server.py": """
        from fastapi import FastAPI

        from model import forward_once

        app = FastAPI()


        @app.get("/healthz")
        def healthz():
            return {"ok": forward_once()}
    """,
    "model.py": """
        import torch
        from transformers import AutoModel

        model = AutoModel.from_pretrained("bert-base-uncased").eval()


        def forward_once():
            with torch.no_grad():
                return model(torch.zeros(1, 1, dtype=torch.long))
    """,
    "deploy.yaml": """
        apiVersion: v1
        kind: Pod
        metadata: {name: server}
        spec:
          containers:
            - name: server
              image: server:1
              livenessProbe:
                httpGet: {path: /healthz, port: 8000}
                periodSeconds: 10
    """,
    # ONNX Runtime options: the rule scans the whole project for exported models, past the locked folder.
    "session.cpp": "void make(Ort::SessionOptions& o) {\n  o.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL);\n}\n",
    # Each locked file has a finding while it can still be read, so a GEM000 visibly replaces it.
    "locked.py": 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    "locked.yaml": """
        apiVersion: v1
        kind: Pod
        metadata: {name: debug}
        spec:
          containers:
            - name: debug
              image: debug:1
              env:
                - {name: CUDA_LAUNCH_BLOCKING, value: "1"}
    """,
    "locked.cu": "void leak(int n) {\n  float* d;\n  cudaMalloc(&d, n);\n}\n",
    "secret/inner.py": 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
}

# What the unprivileged process must manage before the real run: import everything gemlint loads, and
# fail to read a chmod-000 file.
PROBE = """
import sys
import astroid, libcst, yaml, gemlint.cli, gemlint.project
from gemlint.frontends import dockerfile_file, native, yaml_file
try:
    open(sys.argv[1], "rb").read()
except PermissionError:
    print("denied")
else:
    print("readable")
"""


@dataclass
class Unprivileged:
    how: str
    prefix: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)

    def run(self, arguments: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*self.prefix, sys.executable, *arguments], cwd=cwd, capture_output=True, timeout=timeout, **self.options)


def _candidates() -> list[Unprivileged]:
    if os.geteuid() != 0:
        return [Unprivileged("as the current user")]
    candidates = [Unprivileged(f"as uid {NOBODY}", options={"user": NOBODY, "group": NOBODY, "extra_groups": []})]
    setpriv = shutil.which("setpriv")
    if setpriv:
        drop = f"-{BYPASS_CAPABILITIES.replace(',', ',-')}"
        candidates.append(
            Unprivileged("as root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH", [setpriv, f"--inh-caps={drop}", f"--bounding-set={drop}", "--"])
        )
    return candidates


def _lock(project: Path) -> None:
    for name in LOCKED:
        (project / name).chmod(0)


def _unlock(project: Path) -> None:
    for name in LOCKED:
        path = project / name
        if path.exists() or path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def project():
    # Not pytest's tmp_path: it lies in a folder only its owner may enter, and uid 65534 must reach this one.
    root = Path(tempfile.mkdtemp(prefix="gemlint-unreadable-"))
    root.chmod(0o755)
    try:
        for name, text in FILES.items():
            path = root / name
            path.parent.mkdir(exist_ok=True)
            path.parent.chmod(0o755)
            path.write_text(textwrap.dedent(text).lstrip("\n"))
            path.chmod(0o644)
        yield root
    finally:
        _unlock(root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def unprivileged(project) -> Unprivileged:
    _lock(project)
    try:
        reasons = []
        for candidate in _candidates():
            try:
                probe = candidate.run(["-c", PROBE, str(project / "locked.py")], cwd=project, timeout=60)
            except (OSError, subprocess.SubprocessError) as error:  # e.g. setuid not permitted
                reasons.append(f"{candidate.how}: {error}")
                continue
            verdict = probe.stdout.decode(errors="replace").strip()
            if probe.returncode == 0 and verdict == "denied":
                return candidate
            why = verdict or probe.stderr.decode(errors="replace").strip().splitlines()[-1:]
            reasons.append(f"{candidate.how}: {why}")
        pytest.skip("cannot make a file unreadable to a gemlint process here: " + "; ".join(map(str, reasons)))
    finally:
        _unlock(project)


def _findings(completed: subprocess.CompletedProcess) -> dict[str, list[tuple]]:
    by_file: dict[str, list[tuple]] = {}
    for finding in json.loads(completed.stdout):
        by_file.setdefault(finding["path"], []).append((finding["code"], finding["line"], finding["column"], finding["message"]))
    return by_file


def test_each_unreadable_file_and_folder_is_one_gem000_and_the_rest_is_unchanged(project, unprivileged):
    arguments = ["-m", "gemlint", ".", "--format", "json"]
    before = unprivileged.run(arguments, project)
    assert before.returncode == 1 and b"Traceback" not in before.stderr, before.stderr.decode(errors="replace")
    readable = _findings(before)
    assert {path: [code for code, *_ in found] for path, found in readable.items()} == {
        "deploy.yaml": ["GEM601"],
        "good.py": ["GEM404"],
        "locked.cu": ["GEM301"],
        "locked.py": ["GEM404"],
        "locked.yaml": ["GEM404"],
        "secret/inner.py": ["GEM404"],
        "server.py": ["GEM602"],
        "session.cpp": ["GEM501"],
    }, unprivileged.how

    _lock(project)
    after = unprivileged.run(arguments, project)
    stderr = after.stderr.decode(errors="replace")
    assert after.returncode == 1 and "Traceback" not in stderr, (unprivileged.how, stderr)
    found = _findings(after)
    for name in LOCKED:
        ((code, line, column, message),) = found.pop(name)
        assert (code, line, column) == ("GEM000", 1, 1), (name, message)
        assert ("cannot list the directory" if name == "secret" else "cannot read") in message
        assert "Permission denied" in message
    # Everything else, including the cross-file findings, is exactly what it was.
    assert found == {path: items for path, items in readable.items() if path not in ("locked.py", "locked.yaml", "locked.cu", "secret/inner.py")}


def test_unreadable_paths_named_on_the_command_line_are_gem000_not_a_usage_error(project, unprivileged):
    outputs = project / "out"
    outputs.mkdir()
    outputs.chmod(0o777)  # writable by the unprivileged user
    _lock(project)
    completed = unprivileged.run(
        ["-m", "gemlint", "locked.py", "good.py", "secret/inner.py", "secret", "locked.yaml", "--show-source", "--no-cache",
         "--output-format", f"sarif:{outputs / 'report.sarif'}"],
        project,
    )  # fmt: skip
    stdout, stderr = completed.stdout.decode(errors="replace"), completed.stderr.decode(errors="replace")
    assert completed.returncode == 1 and "Traceback" not in stderr, (unprivileged.how, stderr)
    lines = [line for line in stdout.splitlines() if ": GEM" in line]
    assert [line.split(" [")[0] for line in lines] == [
        "good.py:2:1: GEM404",
        "locked.py:1:1: GEM000",
        "locked.yaml:1:1: GEM000",
        "secret:1:1: GEM000",
        "secret/inner.py:1:1: GEM000",
    ], stdout
    # In SARIF they are tool execution notifications, and the log is still valid.
    log = json.loads((outputs / "report.sarif").read_text())
    assert not schema_errors(log) and not github_errors(log)
    notifications = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert sorted(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notifications) == [
        "locked.py", "locked.yaml", "secret", "secret/inner.py"
    ]


def test_a_folder_that_cannot_be_listed_is_reported_in_process(tmp_path, monkeypatch):
    """The same treatment without privileges to drop: listing the folder fails as it would on disk."""
    from gemlint.config import default_config
    from gemlint.runner import run

    (tmp_path / "good.py").write_text(FILES["good.py"])
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "inner.py").write_text(FILES["good.py"])
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("hidden"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    found = run([Path(".")], default_config(tmp_path), jobs=1).diagnostics
    assert [(d.path, d.code) for d in found] == [("good.py", "GEM404"), ("hidden", "GEM000")]
    assert "cannot list the directory (Permission denied)" in found[1].message


def test_a_crash_inside_gemlint_exits_2_with_one_line_and_no_traceback(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import gemlint.cli

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(gemlint.cli, "run", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(gemlint.cli.main, [str(tmp_path)])
    assert result.exit_code == 2
    assert "gemlint: internal error: ValueError: a bug" in result.output and "Traceback" not in result.output
    (saved,) = tmp_path.glob("gemlint-crash-*.txt")
    assert "Traceback" in saved.read_text() and stat.S_IMODE(saved.stat().st_mode) == 0o600
