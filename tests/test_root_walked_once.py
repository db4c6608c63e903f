"""A run over a project's root walks it once: the project model's questions (a liveness probe's handler, the
C++ classes that register themselves) take the run's own walk, whatever language the run's files are in."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemlint.config import default_config
from gemlint.discovery import Discovery
from gemlint.project.files import forget_projects
from gemlint.runner import run

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: detector
spec:
  template:
    spec:
      containers:
        - name: detector
          image: detector:1
          livenessProbe:
            httpGet:
              path: /healthz
              port: 8080
            periodSeconds: 5
"""
NATIVE = """\
#include <cuda_runtime.h>

void fill(int n) {
    float* device = nullptr;
    cudaMalloc(&device, n * sizeof(float));
    Layer* layer = new Layer(device);
    if (n > 4) return;
    cudaFree(device);
}
"""
SERVICE = """\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt")


@app.get("/healthz")
def healthz():
    return {"ok": True}
"""


@pytest.fixture
def walks(monkeypatch):
    """The folders each walk of the run started from."""
    started: list[list[str]] = []
    walk = Discovery.files

    def counted(self, paths):
        started.append([str(path) for path in paths])
        return walk(self, paths)

    monkeypatch.setattr(Discovery, "files", counted)
    forget_projects()
    yield started
    forget_projects()


def _project(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "files",
    [
        {"deploy/detector.yaml": MANIFEST},
        {"src/fill.cu": NATIVE},
        {"deploy/detector.yaml": MANIFEST, "src/fill.cu": NATIVE, "app/service.py": SERVICE},
    ],
    ids=["manifests", "native", "all three"],
)
def test_a_run_over_the_root_walks_it_once(tmp_path, walks, files):
    _project(tmp_path, files)
    result = run([tmp_path], default_config(tmp_path), jobs=1)
    assert len(result.files) == len(files)
    assert walks == [[str(tmp_path)]]


def test_a_run_over_a_folder_walks_it_and_the_root_the_project_is_made_of(tmp_path, walks):
    _project(tmp_path, {"deploy/detector.yaml": MANIFEST, "app/service.py": SERVICE})
    run([tmp_path / "deploy"], default_config(tmp_path), jobs=1)
    assert walks == [[str(tmp_path / "deploy")], [str(tmp_path)]]


def test_a_file_added_after_a_run_is_in_the_project_the_next_run_asks_of(tmp_path, walks):
    """The kept walk is the run's: an editor's buffer linted after a file appeared sees the project as it is now."""
    from gemlint.runner import lint_stdin
    from gemlint.walk_record import root_files

    _project(tmp_path, {"deploy/detector.yaml": MANIFEST})
    run([tmp_path], default_config(tmp_path), jobs=1)
    _project(tmp_path, {"app/service.py": SERVICE})
    lint_stdin(SERVICE.encode(), tmp_path / "app" / "service.py", default_config(tmp_path))
    found = [source.display for source in root_files(Discovery(default_config(tmp_path), cwd=tmp_path), tmp_path)]
    assert "app/service.py" in found
