"""Hostile input never crashes or hangs a run, and never changes the other files' findings (SPEC §10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemlint.api import lint_source
from gemlint.config import default_config
from gemlint.runner import run

GOOD = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


def hostile_inputs() -> dict[str, bytes]:
    deep = 5000
    return {
        "syntax_error.py": b"def f(:\n    pass\n",
        "python2.py": b'print "hello"\nexec "x = 1"\n',
        "binary.py": bytes(range(256)) * 40,
        "nul.py": b"x = 1\n\x00\x00y = 2\n",
        "invalid_utf8.py": b'x = "\xff\xfe\xfd"\n',
        "latin1_no_cookie.py": 'name = "café"\n'.encode("latin-1"),
        "latin1_cookie.py": '# -*- coding: latin-1 -*-\nname = "café"\n'.encode("latin-1"),
        "unknown_cookie.py": b"# -*- coding: klingon -*-\nx = 1\n",
        "bom.py": b"\xef\xbb\xbfimport os\n",
        "crlf_mixed.py": b"import os\r\nx = 1\ny = 2\r\nz = 3\rw = 4\n",
        "tabs.py": b"if True:\n\tx = 1\n\tif x:\n\t\ty = 2\n",
        "empty.py": b"",
        "only_newlines.py": b"\n\n\n",
        "jinja.py": b"{% for m in models %}\nmodel_{{ m }} = load('{{ m }}')\n{% endfor %}\n",
        "deep_parens.py": ("x = " + "(" * deep + "1" + ")" * deep + "\n").encode(),
        "deep_lists.py": ("x = " + "[" * deep + "]" * deep + "\n").encode(),
        "long_chain.py": ("import os\nmax_length = 1" + " + 1" * 5000 + "\n").encode(),
        "huge_line.py": ("x = '" + "a" * 2_000_000 + "'\n").encode(),
        "many_lines.py": b"".join(b"x%d = %d\n" % (i, i) for i in range(50_000)),
        "nested_defs.py": "".join("    " * i + f"def f{i}():\n" for i in range(90)).encode() + b"    " * 90 + b"pass\n",
        "lone_surrogate_name_\udcff.py".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape"): b"x = 1\n",
    }


@pytest.fixture
def hostile_tree(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    for name, data in hostile_inputs().items():
        try:
            (root / name).write_bytes(data)
        except (UnicodeEncodeError, OSError):
            pass  # a file system that refuses the name
    (root / "good.py").write_bytes(GOOD.encode())
    (root / "dangling.py").symlink_to(root / "missing.py")
    (root / "loop").mkdir()
    (root / "loop" / "again").symlink_to(root / "loop", target_is_directory=True)
    os.mkfifo(root / "fifo.py")
    return root


def test_hostile_files_yield_findings_or_gem000_and_never_disturb_others(hostile_tree):
    started = time.monotonic()
    config = default_config(hostile_tree)
    alone = run([hostile_tree / "good.py"], config, jobs=1).diagnostics
    together = run([hostile_tree], config, jobs=1).diagnostics
    assert time.monotonic() - started < 120
    key = lambda d: (d.code, d.line, d.column, d.message)  # noqa: E731
    assert [key(d) for d in together if d.path.endswith("good.py")] == [key(d) for d in alone] != []
    by_file = {}
    for d in together:
        by_file.setdefault(Path(d.path).name, []).append(d.code)
    for name in ("syntax_error.py", "python2.py", "binary.py", "nul.py", "invalid_utf8.py", "latin1_no_cookie.py",
                 "unknown_cookie.py", "jinja.py", "deep_parens.py", "deep_lists.py", "dangling.py", "fifo.py"):
        assert by_file.get(name) == ["GEM000"], (name, by_file.get(name))
    for name in ("latin1_cookie.py", "bom.py", "crlf_mixed.py", "tabs.py", "empty.py", "only_newlines.py",
                 "huge_line.py", "many_lines.py", "nested_defs.py"):
        assert name not in by_file, (name, by_file.get(name))


def test_cli_exit_code_is_1_not_2_and_no_traceback(hostile_tree):
    completed = subprocess.run(
        [sys.executable, "-m", "gemlint", str(hostile_tree), "--format", "json", "--no-cache", "--jobs", "2"],
        capture_output=True,
        timeout=300,
    )
    assert completed.returncode == 1, completed.stderr
    assert b"Traceback" not in completed.stderr
    findings = json.loads(completed.stdout.decode("utf-8", "replace"))
    assert any(f["code"] == "GEM404" and f["path"].endswith("good.py") for f in findings)


def test_text_output_survives_undecodable_file_names(hostile_tree):
    completed = subprocess.run([sys.executable, "-m", "gemlint", str(hostile_tree), "--no-cache"], capture_output=True, timeout=300)
    assert completed.returncode == 1 and b"Traceback" not in completed.stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_engine_never_raises_on_arbitrary_text(text):
    for path in ("service.py", "tests/test_x.py"):
        for diagnostic in lint_source(text + "\nmax_length profile anomaly CUDA_LAUNCH_BLOCKING", path):
            assert diagnostic.line >= 1 and diagnostic.column >= 1
