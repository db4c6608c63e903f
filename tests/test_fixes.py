"""Fixes: applied atomically, encoding/BOM/line endings/permissions kept, never unparsable, idempotent."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import libcst as cst
import pytest

from fixture_harness import FIXTURES, fixture_files
from gemlint.api import lint_source
from gemlint.config import default_config
from gemlint.diagnostics import Applicability, Edit, Fix, Position
from gemlint.fixes import FileChanged, apply_edits, fix_text, write_atomically
from gemlint.languages import Language
from gemlint.runner import FixMode, run

PADDING = 'from fastapi import FastAPI\napp = FastAPI()\n\n@app.post("/e")\ndef e(t):\n    return tok(t, padding="max_length", max_length=64)\n'
ORT = (
    "import onnxruntime as ort\nso = ort.SessionOptions()\n"
    "so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL\n"
    'sess = ort.InferenceSession("m.onnx", so)\n'
)


def fix_file(path: Path, unsafe: bool = False):
    return run([path], default_config(path.parent), FixMode(apply=True, unsafe=unsafe), jobs=1)


def test_fix_keeps_bom_crlf_encoding_and_mode(tmp_path):
    path = tmp_path / "svc.py"
    data = ("\ufeff# é\n" + PADDING).replace("\n", "\r\n").encode("utf-8")
    path.write_bytes(data)
    os.chmod(path, 0o750)
    result = fix_file(path, unsafe=True)
    assert result.fixed == 1 and result.diagnostics == []
    after = path.read_bytes()
    assert after == data.replace(b'"max_length"', b'"longest"')
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert not list(tmp_path.glob("*.gemlint-tmp"))


def test_latin1_cookie_file_is_written_back_in_latin1(tmp_path):
    path = tmp_path / "svc.py"
    path.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + PADDING).encode("latin-1"))
    fix_file(path, unsafe=True)
    assert "café".encode("latin-1") in path.read_bytes() and b'"longest"' in path.read_bytes()


def test_unsafe_fix_needs_unsafe_fixes(tmp_path):
    path = tmp_path / "svc.py"
    path.write_text(ORT)
    assert fix_file(path).fixed == 0 and path.read_text() == ORT
    assert fix_file(path, unsafe=True).fixed == 1
    assert "ORT_ENABLE_ALL" in path.read_text()


def test_fix_is_idempotent(tmp_path):
    path = tmp_path / "svc.py"
    path.write_text(PADDING + ORT)
    fix_file(path, unsafe=True)
    once = path.read_bytes()
    second = fix_file(path, unsafe=True)
    assert second.fixed == 0 and path.read_bytes() == once


def test_pad_to_max_length_fix_parses_and_clears_the_finding(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from gemlint.cli import main

    legacy = PADDING.replace('padding="max_length", max_length=64', "pad_to_max_length=True,  max_length=64")
    (tmp_path / "svc.py").write_text(legacy)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["svc.py", "--fix", "--unsafe-fixes", "--no-cache"], catch_exceptions=False)
    fixed = (tmp_path / "svc.py").read_text()
    cst.parse_module(fixed)
    # Only `keyword=value` is rewritten: the comma and spacing after it stay as written.
    assert fixed == legacy.replace("pad_to_max_length=True,", 'padding="longest",')
    assert result.exit_code == 0 and lint_source(fixed, "svc.py") == []


def test_a_fix_that_breaks_the_syntax_is_refused():
    broken = Fix((Edit(Position(6, 12), Position(6, 15), "((("),), Applicability.SAFE, "breaks")
    source = PADDING
    diagnostics = lint_source(source, "svc.py")
    diagnostics = [d.__class__(**{**d.__dict__, "fix": broken}) for d in diagnostics]
    outcome = fix_text(source, Language.PYTHON, lambda text: [], diagnostics, unsafe=False)
    assert outcome.text == source and outcome.refused


def test_overlapping_edits_are_applied_one_per_pass():
    first = Fix((Edit(Position(1, 1), Position(1, 4), "abc"),), Applicability.SAFE, "a")
    second = Fix((Edit(Position(1, 2), Position(1, 3), "X"),), Applicability.SAFE, "b")
    assert apply_edits("xyz\n", [first, second]) == ("abc\n", 1)


def test_file_changed_since_read_is_not_overwritten(tmp_path):
    path = tmp_path / "svc.py"
    path.write_text("new\n")
    with pytest.raises(FileChanged):
        write_atomically(path, b"old\n", "fixed\n", "utf-8")
    assert path.read_text() == "new\n"


@pytest.mark.parametrize("path", [p for p in fixture_files() if p.suffix == ".py"], ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixing_every_fixture_parses_and_is_idempotent(tmp_path, path):
    copy = tmp_path / path.relative_to(FIXTURES)
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(path.read_bytes())
    root = tmp_path / path.relative_to(FIXTURES).parts[0]
    config = default_config(root)
    run([copy], config, FixMode(apply=True, unsafe=True), jobs=1)
    once = copy.read_bytes()
    if once != path.read_bytes():
        cst.parse_module(once)  # the fixed file still parses
    run([copy], config, FixMode(apply=True, unsafe=True), jobs=1)
    assert copy.read_bytes() == once


def test_diff_of_a_last_line_without_newline_applies_with_git(tmp_path):
    import shutil
    import subprocess

    from gemlint.fixes import unified_diff

    before, after = "a = 1\nb = 2", "a = 1\nb = 3"
    diff = unified_diff("x.py", before, after)
    assert diff.endswith("+b = 3\n\\ No newline at end of file\n")  # the next line of output starts on its own line
    if shutil.which("git") is None:
        return
    (tmp_path / "x.py").write_text(before)
    subprocess.run(["git", "apply", "-"], input=diff, text=True, cwd=tmp_path, check=True)
    assert (tmp_path / "x.py").read_text() == after
