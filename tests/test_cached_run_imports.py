"""What a run imports when it has nothing to lint: the command line and a run whose files all come from the cache
select the rules from their generated table, and import neither LibCST nor any rule (about half a second, most
of a run over a cached project). A run whose files no Python rule admits (manifests, CUDA, Python that no rule
looks at) imports the rules it needs but neither LibCST, the analyses nor astroid. Each check runs in a fresh
interpreter, where nothing else has imported them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gemlint.runner import FACTS_PROCESS_THRESHOLD

SERVICE = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.load("model.pt")


@app.post("/predict")
def predict(x):
    with torch.inference_mode():
        return model(torch.tensor(x))
"""
MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: server
spec:
  containers:
    - name: server
      image: server:1
      env:
        - name: CUDA_LAUNCH_BLOCKING
          value: "1"
"""

# Runs gemlint's command line in this interpreter, then says which of the heavy modules it imported. What the
# interpreter had imported before it is not the run's: a site's .pth file may import at start-up what it likes.
PROBE = """\
import json, sys
before = set(sys.modules)
from gemlint.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted(m for m in set(sys.modules) - before if m == "libcst" or m.startswith(("gemlint.rules.gem", "gemlint.engine")))
print(json.dumps(heavy), file=sys.stderr)
"""


def _run(folder: Path, *args: str) -> tuple[list[dict], list[str]]:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, "check", "--format", "json", "--exit-zero", *args, "."],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )
    findings = json.loads(completed.stdout)
    heavy = json.loads(completed.stderr.strip().splitlines()[-1])
    return findings, heavy


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.gemlint]\n")
    (tmp_path / "serve.py").write_text(SERVICE)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "pod.yaml").write_text(MANIFEST)
    return tmp_path


def test_a_run_over_a_cached_project_imports_no_rule_and_reports_the_same(tmp_path):
    folder = _project(tmp_path)
    first, heavy_first = _run(folder)
    assert {f["code"] for f in first} == {"GEM404"}  # the manifest's finding; the service gives none
    assert "libcst" in heavy_first and any(m.startswith("gemlint.rules.gem") for m in heavy_first)
    again, heavy_again = _run(folder)
    assert again == first
    assert heavy_again == []


def test_an_edited_file_is_linted_again_with_the_rules(tmp_path):
    folder = _project(tmp_path)
    _run(folder)
    (folder / "serve.py").write_text(SERVICE + '\nimport os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n')
    findings, heavy = _run(folder)
    assert sorted((f["path"], f["code"]) for f in findings) == [("deploy/pod.yaml", "GEM404"), ("serve.py", "GEM404")]
    assert "libcst" in heavy


def test_a_run_with_nothing_to_lint_imports_no_rule(tmp_path):
    (tmp_path / "README.md").write_text("nothing gemlint reads\n")
    findings, heavy = _run(tmp_path, "--no-cache")
    assert findings == [] and heavy == []


KERNEL = """\
#include <cuda_runtime.h>

void launch(float *buffer, int n);

void scratch(int n) {
    float *buffer;
    cudaMalloc(&buffer, n * sizeof(float));
    launch(buffer, n);
}
"""
TWO_GPUS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  template:
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:latest
          resources:
            limits:
              nvidia.com/gpu: 2
"""
ORT_SESSION = """\
#include <onnxruntime_cxx_api.h>

Ort::Session open(Ort::Env& env, const char* path) {
  Ort::SessionOptions options;
  options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL);
  return Ort::Session(env, path, options);
}
"""
# Which of LibCST, astroid and gemlint's Python path a run imported.
PYTHON_PATH_PROBE = PROBE.replace(
    'heavy = sorted(m for m in set(sys.modules) - before if m == "libcst" or m.startswith(("gemlint.rules.gem", "gemlint.engine")))',
    'heavy = sorted(m for m in set(sys.modules) - before if m in ("libcst", "astroid", "gemlint.python_lint", "gemlint.project.answers"))',
)


def _native_and_deployment(tmp_path: Path, copies: int) -> Path:
    tmp_path.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.gemlint]\n")
    (tmp_path / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    # Python 2 scripts, which neither `ast` nor LibCST parses: one a rule's markers would send to LibCST, one not
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "convert.py").write_text('import torch\nmodel = torch.load("m.pt")\nprint "converted"\n')
    (tmp_path / "tools" / "legacy.py").write_text('print "hello"\n')
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "server.yaml").write_text(TWO_GPUS)
    # Rules that read Python too: their C++ and Dockerfile sides need no LibCST
    (tmp_path / "session.cpp").write_text(ORT_SESSION)
    (tmp_path / "Dockerfile").write_text("FROM python:3.11\nENV CUDA_LAUNCH_BLOCKING=1\n")
    for number in range(copies):
        (tmp_path / f"kernel_{number}.cu").write_text(KERNEL)
    return tmp_path


def test_a_run_that_admits_no_python_file_imports_no_libcst_nor_astroid(tmp_path):
    # One kernel: linted in this process. Forty: linted by a pool of workers, which the parent prepares. The Python
    # 2 scripts are told apart by `ast`'s message: LibCST is not imported to reject them too.
    for copies, jobs in ((1, "1"), (40, "2")):
        folder = _native_and_deployment(tmp_path / str(copies), copies)
        completed = subprocess.run(
            [sys.executable, "-c", PYTHON_PATH_PROBE, "check", "--format", "json", "--no-cache", "--exit-zero", "--jobs", jobs, "."],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )
        findings = json.loads(completed.stdout)
        assert sorted({(f["path"].split("_")[0], f["code"]) for f in findings}) == [
            ("Dockerfile", "GEM404"), ("deploy/server.yaml", "GEM605"), ("kernel", "GEM301"), ("session.cpp", "GEM501")
        ]
        assert json.loads(completed.stderr.strip().splitlines()[-1]) == [], completed.stderr


# Which of the modules a run imports only to start processes or to make temporary files it imported.
PROCESS_PROBE = PROBE.replace(
    'heavy = sorted(m for m in set(sys.modules) - before if m == "libcst" or m.startswith(("gemlint.rules.gem", "gemlint.engine")))',
    'heavy = sorted(m for m in set(sys.modules) - before if m in ("multiprocessing", "tempfile"))',
)


def test_an_edit_derived_where_it_is_asked_imports_neither_multiprocessing_nor_tempfile(tmp_path):
    # A project large enough that its facts are derived in a process of their own: a run over one edited module
    # derives again, in its own process, the pieces that read it (the ledger holds for every other module), and
    # writes its cache entries; neither needs a process started or `tempfile`.
    (tmp_path / "pyproject.toml").write_text("[tool.gemlint]\n")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "__init__.py").write_text("")
    for number in range(FACTS_PROCESS_THRESHOLD):
        (tmp_path / "svc" / f"step_{number}.py").write_text(f"def step_{number}(x):\n    return x + {number}\n")
    (tmp_path / "svc" / "serve.py").write_text(SERVICE)
    _run(tmp_path)
    (tmp_path / "svc" / "step_0.py").write_text("from svc.step_1 import step_1\n\n\ndef step_0(x):\n    return step_1(x)\n")
    completed = subprocess.run(
        [sys.executable, "-c", PROCESS_PROBE, "check", "--format", "json", "--exit-zero", "svc/step_0.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert json.loads(completed.stdout) == []
    assert json.loads(completed.stderr.strip().splitlines()[-1]) == []
