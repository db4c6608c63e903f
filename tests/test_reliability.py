"""Hostile input never crashes or hangs a run, and never changes the other files' findings (SPEC §10)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemlint.api import lint_source
from gemlint.config import default_config
from gemlint.bad_input import INTERNAL_ERROR_PREFIX
from gemlint.runner import run

GOOD = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
GOOD_CU = "void leak(int n) {\n  float* d;\n  cudaMalloc(&d, n);\n}\n"
GOOD_DOCKERFILE = "FROM python:3.11\nENV CUDA_LAUNCH_BLOCKING=1\n"

# Appended to hostile text so that the rules' text prefilters pass and the input reaches the parsers.
PY_MARKERS = "\n# torch .train( retain_graph max_length profile anomaly setLevel CUDA_LAUNCH_BLOCKING graph_optimization_level fastapi\n"
YAML_MARKERS = "\n# livenessProbe startupProbe healthcheck HEALTHCHECK CUDA_LAUNCH_BLOCKING NCCL_DEBUG\n"
C_MARKERS = "\n// cudaMalloc malloc new cudaStreamCreate cudaGraphCreate cudaStreamBeginCapture cudaMemcpyAsync SetGraphOptimizationLevel\n"

YAML_BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{name}: &{name} [" + ",".join([f"*{'abcdefghi'[i]}"] * 9) + "]" for i, name in enumerate("bcdefghi")]
)


def _odd_name(stem: str, suffix: str) -> str:
    """A file name that is not valid UTF-8 (kept as surrogate escapes, as os.fsdecode gives it)."""
    return (stem + "_\udcff" + suffix).encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")


def python_inputs() -> dict[str, bytes]:
    deep = 5000
    return {
        "syntax_error.py": b"def f(:\n    pass\n" + PY_MARKERS.encode(),
        "python2.py": b'print "hello"\nexec "x = 1"\n' + PY_MARKERS.encode(),
        "binary.py": bytes(range(256)) * 40,
        "nul.py": b"x = 1\n\x00\x00y = 2\n",
        "invalid_utf8.py": b'x = "\xff\xfe\xfd"\n',
        "latin1_no_cookie.py": 'name = "café"\n'.encode("latin-1"),
        "latin1_cookie.py": ('# -*- coding: latin-1 -*-\nname = "café"\n' + PY_MARKERS).encode("latin-1"),
        "unknown_cookie.py": b"# -*- coding: klingon -*-\nx = 1\n",
        "bom.py": b"\xef\xbb\xbfimport os\n" + PY_MARKERS.encode(),
        "crlf_mixed.py": b"import os\r\nx = 1\ny = 2\r\nz = 3\rw = 4\n" + PY_MARKERS.encode(),
        "tabs.py": b"if True:\n\tx = 1\n\tif x:\n\t\ty = 2\n" + PY_MARKERS.encode(),
        "empty.py": b"",
        "only_newlines.py": b"\n\n\n",
        "jinja.py": b"{% for m in models %}\nmodel_{{ m }} = load('{{ m }}')\n{% endfor %}\n" + PY_MARKERS.encode(),
        "deep_parens.py": ("x = " + "(" * deep + "1" + ")" * deep + "\n" + PY_MARKERS).encode(),
        "deep_lists.py": ("x = " + "[" * deep + "]" * deep + "\n" + PY_MARKERS).encode(),
        "long_chain.py": ("import os\nmax_length = 1" + " + 1" * 5000 + "\n").encode(),
        "huge_line.py": ("x = '" + "a" * 2_000_000 + "'\n").encode(),
        "many_lines.py": b"".join(b"x%d = %d\n" % (i, i) for i in range(50_000)),
        "nested_defs.py": "".join("    " * i + f"def f{i}():\n" for i in range(90)).encode() + b"    " * 90 + b"pass\n" + PY_MARKERS.encode(),
        _odd_name("lone_surrogate_name", ".py"): b"x = 1\n",
    }


def yaml_inputs() -> dict[str, bytes]:
    weird_kubernetes = """\
        apiVersion: apps/v1
        kind: Deployment
        spec:
          template:
            spec:
              containers: "not a list"
        ---
        kind: Pod
        spec:
          containers:
            - livenessProbe: 5
            - livenessProbe: null
            - livenessProbe: {httpGet: {path: 123, port: [1]}, periodSeconds: "abc"}
            - livenessProbe: {exec: {command: 7}}
            - livenessProbe: {exec: {command: [[], {}, null]}}
            - env: [1, null, {name: 5, value: {x: 1}}, {name: CUDA_LAUNCH_BLOCKING}]
        ---
        - just
        - a list
        ---
        "a scalar"
        """
    compose = """\
        services:
          a:
            healthcheck: {test: 123, interval: banana}
          b:
            healthcheck: {test: [CMD]}
          c:
            healthcheck: "curl"
          d: [1, 2]
          e:
            environment: 5
        """
    broken_template = """\
        apiVersion: v1
        kind: Pod
        spec:
          containers:
            - name: x
              {{- if .Values.x }}
              livenessProbe:
                httpGet: {path: {{ .Values.path | quote }}, port: {{ .Values.port }}
              {{- end
              {{ include "nope" . | nindent 6 }}
              {{ template "recursive" . }}
        """
    return {
        "yaml_bomb.yaml": (YAML_BOMB + YAML_MARKERS).encode(),
        "python_tags.yaml": (
            "apiVersion: v1\nkind: Pod\n"
            'spec: !!python/object/apply:os.system ["touch constructed"]\n'
            "meta: !!python/object:__main__.Evil {a: 1}\n"
            "name: !!python/name:os.system\n" + YAML_MARKERS
        ).encode(),
        "unknown_tags.yaml": ("a: !Ref Param\nb: !!binary aGk=\nc: !GetAtt [x, y]\n" + YAML_MARKERS).encode(),
        "invalid.yaml": ("a: [1, 2\nb: }\n  - c\n" + YAML_MARKERS).encode(),
        "binary.yaml": bytes(range(256)) * 8,
        "latin1.yaml": ("name: café\n" + YAML_MARKERS).encode("latin-1"),
        "deep_flow.yaml": ("a: " + "[" * 5000 + "]" * 5000 + "\n" + YAML_MARKERS).encode(),
        "deep_block.yaml": ("".join("  " * i + f"k{i}:\n" for i in range(1000)) + YAML_MARKERS).encode(),
        "jinja.yaml": ("{% for m in models %}\n- name: {{ m }}\n  livenessProbe: {{ .Values.probe | toYaml }}\n{% endfor %}\n" + YAML_MARKERS).encode(),
        "weird_kubernetes.yaml": (textwrap.dedent(weird_kubernetes) + YAML_MARKERS).encode(),
        "docker-compose.yml": (textwrap.dedent(compose) + YAML_MARKERS).encode(),
        "chart/Chart.yaml": b"apiVersion: v2\nname: hostile\nversion: 0.1.0\n",
        "chart/values.yaml": ("probe: {{ broken\n" + YAML_MARKERS).encode(),
        "chart/templates/broken.yaml": (textwrap.dedent(broken_template) + YAML_MARKERS).encode(),
        "chart/templates/_helpers.tpl": b'{{- define "recursive" -}}{{ template "recursive" . }}{{- end -}}\n{{ define "open" }}\n',
        "chart/templates/binary.yaml": bytes(range(256)),
        _odd_name("odd_name", ".yaml"): ("a: 1\n" + YAML_MARKERS).encode(),
    }


def native_inputs() -> dict[str, bytes]:
    noise = random.Random(9)
    return {
        "binary.cu": bytes(range(256)) * 4,
        "binary_without_nul.cu": bytes(noise.randrange(1, 256) for _ in range(20_000)),
        "utf16.cu": "void f() {}\n".encode("utf-16"),
        "truncated.cu": b"__global__ void k(float* x) {\n  float* d;\n  if (x) { cudaMalloc(&d, ",
        "unbalanced.cpp": ("}}}}} {{{{ ))) ((( void f() { int* p = (int*)malloc(4);\n#if\n#endif\n#endif\n" + C_MARKERS).encode(),
        "deep_blocks.cu": ("void f(int x, int n) { float* d; " + "if (x) {" * 4000 + "cudaMalloc(&d, n);" + "}" * 4000 + " }\n").encode(),
        "deep_parens.c": ("int g() { return " + "(" * 30_000 + "0" + ")" * 30_000 + "; }\n" + C_MARKERS).encode(),
        "deep_templates.cpp": ("using T = " + "std::vector<" * 1000 + "int" + ">" * 1000 + ";\n" + C_MARKERS).encode(),
        "huge_line.cu": ('const char* s = "' + "a" * 2_000_000 + '";\n' + C_MARKERS).encode(),
        "many_lines.c": b"".join(b"int x%d = %d;\n" % (i, i) for i in range(20_000)) + C_MARKERS.encode(),
        "macro_soup.h": ("#define A(x) x ## x\n#define B A(\nB B B )))\n#pragma once\n#include <\n#include \"\n??=define X\n" + C_MARKERS).encode(),
        "latin1.cc": b"// caf\xe9\nvoid f() {}\n" + C_MARKERS.encode(),
        "crlf_bom.cuh": b"\xef\xbb\xbfvoid f() {\r\n  void* p; cudaMalloc(&p, 4);\r\n}\r\n",
        "empty.cu": b"",
        _odd_name("odd_name", ".cu"): b"void f() {}\n",
    }


def dockerfile_inputs() -> dict[str, bytes]:
    markers = YAML_MARKERS.encode()
    return {
        "Dockerfile.unknown": b"FROM x\nFOO bar\nHEALTHCHECK\nHEALTHCHECK CMD\nHEALTHCHECK --interval=banana CMD curl localhost/healthz\nENV\nENV =1\n" + markers,
        "Dockerfile.json": b'FROM x\nCMD ["a",\nHEALTHCHECK CMD ["curl", "-f", \nENTRYPOINT [\nRUN [1, 2]\n' + markers,
        "Dockerfile.continuation": markers + b"FROM x\nRUN a \\\n",
        "Dockerfile.heredoc": b"FROM x\nRUN <<EOF\necho hi\n" + markers,
        "Dockerfile.only_continuations": b"\\\n\\\n   \\\n" + markers,
        "Dockerfile.onbuild": b"ONBUILD ONBUILD ONBUILD HEALTHCHECK CMD curl http://localhost/health\n" + markers,
        "Dockerfile.binary": bytes(range(256)),
        "Dockerfile.huge_line": b"FROM x\nRUN " + b"a" * 2_000_000 + b"\n" + markers,
        "Dockerfile.many_continuations": b"FROM x\nRUN a" + b" \\\n b" * 10_000 + b"\n" + markers,
        _odd_name("Dockerfile.odd_name", ""): b"FROM x\n" + markers,
    }


def hostile_inputs() -> dict[str, bytes]:
    return {**python_inputs(), **yaml_inputs(), **native_inputs(), **dockerfile_inputs()}


# Input that is not text, or not valid in its language, and must be reported.
MUST_BE_GEM000 = (
    "syntax_error.py", "binary.py", "nul.py", "invalid_utf8.py", "latin1_no_cookie.py", "unknown_cookie.py",
    "deep_parens.py", "deep_lists.py", "dangling.py", "fifo.py",
    "yaml_bomb.yaml", "invalid.yaml", "binary.yaml", "latin1.yaml", "chart/templates/binary.yaml",
    "binary.cu", "utf16.cu", "Dockerfile.binary", "dangling.cu", "fifo.yaml",
)  # fmt: skip
# Odd but valid input (or input read tolerantly): no finding at all.
MUST_BE_CLEAN = (
    "latin1_cookie.py", "bom.py", "crlf_mixed.py", "tabs.py", "empty.py", "only_newlines.py", "huge_line.py",
    "many_lines.py", "nested_defs.py",
    "jinja.py",  # a template (`{% ... %}`, `{{ m }}` where it does not parse): noted as not checked, not broken
    "python2.py",  # Python 2's print and exec statements: another language, noted as not checked, not broken
    "python_tags.yaml", "unknown_tags.yaml", "jinja.yaml", "weird_kubernetes.yaml", "docker-compose.yml",
    "chart/values.yaml", "chart/Chart.yaml", "chart/templates/broken.yaml",
    "latin1.cc", "macro_soup.h", "empty.cu", "many_lines.c", "deep_templates.cpp", "huge_line.cu",
    "Dockerfile.continuation", "Dockerfile.only_continuations", "Dockerfile.onbuild", "Dockerfile.many_continuations",
    "deep_parens.c", "Dockerfile.unknown", "chart/templates/_helpers.tpl",
)  # fmt: skip
# Extreme input with an exact outcome: too deep to follow is said (a GEM000), never passed as clean.
MUST_BE_EXACTLY = {
    "deep_blocks.cu": [("GEM000", 1)],
    "deep_flow.yaml": [("GEM000", 1)],
    "long_chain.py": [("GEM000", 1)],
    "Dockerfile.heredoc": [("GEM000", 2)],
    "Dockerfile.huge_line": [("GEM000", 2)],
    "Dockerfile.json": [("GEM000", 5)],
    "crlf_bom.cuh": [("GEM301", 2)],
}
# Broken or extreme input that a tolerant parser may read in part: a lone GEM000, or ordinary findings.
# (deep_block.yaml: PyYAML 6.0.4 refuses mappings nested 1,000 deep, which 6.0.3 reads.)


@pytest.fixture
def hostile_tree(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    for name, data in hostile_inputs().items():
        path = root / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except (UnicodeEncodeError, OSError):
            pass  # a file system that refuses the name
    (root / "good.py").write_bytes(GOOD.encode())
    (root / "good.cu").write_bytes(GOOD_CU.encode())
    (root / "Dockerfile").write_bytes(GOOD_DOCKERFILE.encode())
    (root / "dangling.py").symlink_to(root / "missing.py")
    (root / "dangling.cu").symlink_to(root / "missing.cu")
    (root / "loop").mkdir()
    (root / "loop" / "again").symlink_to(root / "loop", target_is_directory=True)
    os.mkfifo(root / "fifo.py")
    os.mkfifo(root / "fifo.yaml")
    return root


GOOD_FILES = ("good.py", "good.cu", "Dockerfile")


def _by_file(diagnostics, root: Path) -> dict[str, list]:
    by_file: dict[str, list] = {}
    for d in diagnostics:
        by_file.setdefault(Path(os.path.abspath(d.path)).relative_to(root).as_posix(), []).append(d)
    return by_file


def test_hostile_files_yield_findings_or_gem000_and_never_disturb_others(hostile_tree, monkeypatch):
    monkeypatch.chdir(hostile_tree)
    started = time.monotonic()
    config = default_config(hostile_tree)
    alone = run([Path(name) for name in GOOD_FILES], config, jobs=1).diagnostics
    whole = run([Path(".")], config, jobs=1)
    together = whole.diagnostics
    assert time.monotonic() - started < 120
    key = lambda d: (d.path, d.code, d.line, d.column, d.message)  # noqa: E731
    assert [key(d) for d in together if d.path in GOOD_FILES] == [key(d) for d in alone]
    assert sorted({d.path for d in alone}) == sorted(GOOD_FILES)
    assert not (hostile_tree / "constructed").exists()  # the !!python/object/apply tag was never run
    by_file = _by_file(together, hostile_tree)
    internal = [d for d in together if INTERNAL_ERROR_PREFIX in d.message]
    assert not internal, internal
    for name in MUST_BE_GEM000:
        assert [d.code for d in by_file.get(name, [])] == ["GEM000"], (name, by_file.get(name))
    for name in MUST_BE_CLEAN:
        assert name not in by_file, (name, by_file.get(name))
    # A template is not linted, and the run says so (--verbose names it; the summary counts it).
    assert any(file.endswith("jinja.py") and "a template, not checked" in note for file, note in whole.notes), whole.notes
    assert any(file.endswith("python2.py") and "Python 2, not checked" in note for file, note in whole.notes), whole.notes
    for name, expected in MUST_BE_EXACTLY.items():
        assert [(d.code, d.line) for d in by_file.get(name, [])] == expected, (name, by_file.get(name))
    for name, found in by_file.items():
        codes = [d.code for d in found]
        assert codes == ["GEM000"] or "GEM000" not in codes, (name, found)


def _run_cli(arguments: list[str], timeout: float = 300, cwd: Path | None = None) -> tuple[int, bytes, bytes, int]:
    """Run the CLI; returns the exit code, stdout, stderr and the peak RSS (KiB) of it and its workers."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen([sys.executable, "-m", "gemlint", *arguments], stdout=out, stderr=err, cwd=cwd)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                pytest.fail(f"gemlint {' '.join(arguments)} did not finish in {timeout} s")
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return process.returncode, out.read(), err.read(), usage.ru_maxrss


def test_cli_exit_code_is_1_not_2_and_no_traceback_in_bounded_memory(hostile_tree, monkeypatch):
    code, stdout, stderr, peak_kib = _run_cli([".", "--format", "json", "--no-cache", "--jobs", "2"], cwd=hostile_tree)
    assert code == 1, stderr
    assert b"Traceback" not in stderr
    findings = json.loads(stdout.decode("utf-8", "replace"))
    assert {f["path"].rsplit("/", 1)[-1] for f in findings if f["code"] != "GEM000"} >= set(GOOD_FILES)
    # Exactly what one process finds, file by file (two worker processes lose and add nothing).
    monkeypatch.chdir(hostile_tree)
    alone = run([Path(".")], default_config(hostile_tree), jobs=1).diagnostics
    key = lambda path, line, code: (path.rsplit("/", 1)[-1], line, code)  # noqa: E731
    assert sorted(key(f["path"], f["line"], f["code"]) for f in findings) == sorted(key(d.path, d.line, d.code) for d in alone)
    assert peak_kib < 1024 * 1024, f"peak RSS {peak_kib // 1024} MiB"


def test_text_output_with_source_and_the_default_cache_never_blocks_on_a_fifo(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "good.py").write_text(GOOD)
    os.mkfifo(root / "pipe.py")
    os.mkfifo(root / "pipe.cu")
    (root / "dangling.yaml").symlink_to(root / "missing.yaml")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for _ in range(2):  # cold, then warm: the cache reads every file before linting it
        code, stdout, stderr, _ = _run_cli([str(root), "--show-source", "--jobs", "1", *cache], timeout=60)
        assert code == 1 and b"Traceback" not in stderr, stderr
        assert stdout.count(b"GEM000") == 3 and b"GEM404" in stdout


def test_a_native_parse_that_runs_past_its_deadline_is_gem000_and_the_parser_recovers(monkeypatch):
    from gemlint.frontends import native

    monkeypatch.setattr(native, "PARSE_SECONDS", 0.2)
    monkeypatch.setattr(native, "PARSE_SECONDS_PER_MB", 0.0)
    nested = "using T = " + "std::vector<" * 8000 + "int" + ">" * 8000 + ";\n"  # minutes without a deadline
    leak = "void f(int n) { float* d; cudaMalloc(&d, n); }\n"
    started = time.monotonic()
    (finding,) = lint_source(nested + leak, "nested.cu")
    assert time.monotonic() - started < 5
    assert finding.code == "GEM000" and "parsing took longer than" in finding.message
    # The cancelled parse leaves nothing behind: the same (cached) parser reads the next file from its start.
    assert [(d.code, d.line) for d in lint_source(leak, "ok.cu")] == [("GEM301", 1)]


# Each path with the markers that make its rules parse the text rather than skip it.
ARBITRARY_TEXT_TARGETS = (
    ("service.py", PY_MARKERS),
    ("tests/test_x.py", PY_MARKERS),
    ("deploy.yaml", YAML_MARKERS),
    ("Dockerfile", YAML_MARKERS),
    ("ops.cu", C_MARKERS),
    ("ops.c", C_MARKERS),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_no_rule_ever_fails_on_arbitrary_text_in_any_language(text):
    for path, markers in ARBITRARY_TEXT_TARGETS:
        for source in (text + markers, markers + text):
            for diagnostic in lint_source(source, path):
                assert INTERNAL_ERROR_PREFIX not in diagnostic.message, (path, diagnostic)
                assert diagnostic.line >= 1 and diagnostic.column >= 1


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=300))
def test_no_rule_ever_fails_on_arbitrary_bytes_read_from_disk(tmp_path_factory, data):
    from gemlint.discovery import SourceFile
    from gemlint.engine import lint_file
    from gemlint.languages import language_of
    from gemlint.registry import all_rules
    from gemlint.selection import Selection

    folder = tmp_path_factory.mktemp("bytes")
    selection = Selection.from_config(default_config(folder), all_rules())
    for name, markers in ARBITRARY_TEXT_TARGETS:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data + markers.encode())
        diagnostics, _, _ = lint_file(SourceFile(path, language_of(path), name, name), selection)
        assert not [d for d in diagnostics if INTERNAL_ERROR_PREFIX in d.message], (name, diagnostics)


def test_an_interrupted_fix_leaves_the_original_file_and_no_debris(tmp_path, monkeypatch):
    from gemlint import fixes

    path = tmp_path / "svc.py"
    path.write_bytes(b"old\n")

    def interrupted(descriptor):
        raise KeyboardInterrupt

    monkeypatch.setattr(fixes.os, "fsync", interrupted)  # after the new bytes are written, before the rename
    with pytest.raises(KeyboardInterrupt):
        fixes.write_atomically(path, b"old\n", "fixed\n", "utf-8")
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["svc.py"]


def test_a_fix_killed_mid_write_leaves_the_original_file(tmp_path):
    path = tmp_path / "svc.py"
    path.write_bytes(b"old\n")
    killer = (
        "import os, signal, sys\n"
        "from gemlint import fixes\n"
        "fixes.os.fsync = lambda descriptor: os.kill(os.getpid(), signal.SIGKILL)\n"
        "fixes.write_atomically(fixes.Path(sys.argv[1]), b'old\\n', 'fixed\\n' * 100000, 'utf-8')\n"
    )
    completed = subprocess.run([sys.executable, "-c", killer, str(path)], capture_output=True, timeout=60)
    assert completed.returncode == -9, completed.stderr
    assert path.read_bytes() == b"old\n"


def test_analysed_code_is_never_imported_or_run_and_nothing_touches_the_network(tmp_path, monkeypatch):
    """Every rule, the cross-module ones included, on a project whose every module would write a marker if run."""
    from click.testing import CliRunner

    from gemlint.cli import main

    marker = tmp_path / "executed"
    payload = f"open({str(marker)!r}, 'a').write(__name__)\n"
    files = {
        "setup.py": payload,
        "conftest.py": payload,
        "evil/__init__.py": payload,
        "evil/model.py": payload + textwrap.dedent("""
            import torch
            model = torch.load("model.pt")
            def forward_once():
                return model(torch.zeros(1))
        """),
        "server.py": payload + textwrap.dedent("""
            import os
            import onnxruntime as ort
            from fastapi import FastAPI
            from evil.model import forward_once
            from evil import native_ext
            app = FastAPI()
            @app.get("/healthz")
            def healthz():
                native_ext.run()
                return {"ok": forward_once()}
            @app.post("/predict")
            def predict(tok, text):
                so = ort.SessionOptions()
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                return tok(text, padding="max_length", max_length=4096)
            if __name__ == "__main__":
                os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
        """),
        "probe.py": payload + "import urllib.request\nurllib.request.urlopen('http://localhost:8000/healthz')\n",
        "deploy.yaml": textwrap.dedent("""
            apiVersion: v1
            kind: Pod
            spec:
              containers:
                - name: server
                  livenessProbe: {exec: {command: [python, probe.py]}, periodSeconds: 5}
                  env: [{name: CUDA_LAUNCH_BLOCKING, value: "1"}]
                  readinessProbe: !!python/object/apply:os.system ["touch executed"]
        """),
        "Dockerfile": "FROM python:3.11\nHEALTHCHECK CMD python probe.py\nRUN touch executed\n",
        "ops.cu": "void leak(int n) {\n  float* d;\n  cudaMalloc(&d, n);\n}\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "evil" / "native_ext.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF not really")

    def refuse(*args, **kwargs):
        raise AssertionError(f"gemlint tried to reach outside: {args[:2]}")

    import socket

    for name in ("connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(os, "system", refuse)
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    result = CliRunner().invoke(main, [".", "--isolated", "--no-cache", "--jobs", "1", "--format", "json"])
    assert result.exit_code == 1, result.output
    codes = {finding["code"] for finding in json.loads(result.stdout)}
    assert {"GEM301", "GEM404", "GEM501", "GEM601", "GEM602"} <= codes, codes  # every family really ran
    assert not marker.exists() and not (tmp_path / "executed").exists()
    assert not {name for name in set(sys.modules) - before if name.split(".")[0] in ("evil", "server", "probe", "setup", "conftest")}
