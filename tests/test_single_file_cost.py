"""Linting a few files of a project whose index is cached parses those files, not the project again
(the pre-commit and editor shape): counted in files parsed, not in seconds."""

from __future__ import annotations

import libcst as cst
import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.project import files as project_files
from gemlint.project import model as project_model

MODULES = 40

HEALTH = '''
import torch
from fastapi import FastAPI

from service.models import load

app = FastAPI()
model = load()


@app.get("/healthz")
def healthz():
    with torch.inference_mode():
        model(torch.zeros(1, 8))
    return {"ok": True}
'''

MODELS = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 2)

    def forward(self, x):
        return self.layer(x)


def load():
    net = Net()
    net.load_state_dict(torch.load("net.pt"))
    return net.eval()
'''

DEPLOYMENT = '''apiVersion: apps/v1
kind: Deployment
metadata:
  name: service
spec:
  template:
    spec:
      containers:
        - name: service
          image: service:1
          livenessProbe:
            httpGet:
              path: /healthz
              port: 8000
            periodSeconds: 5
'''

HELPER = '''
import torch

from service.models import Net


def helper_{n}(x):
    return torch.relu(x) + {n}


class Part{n}(Net):
    def scale(self, x):
        return helper_{n}(x) * 2
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    package = tmp_path / "service"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "app.py").write_text(HEALTH)
    (package / "models.py").write_text(MODELS)
    for n in range(MODULES):
        (package / f"part_{n}.py").write_text(HELPER.format(n=n))
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def counts(monkeypatch):
    """How many modules the run summarised for the index and how many it parsed with LibCST."""
    seen = {"summarised": 0, "parsed": 0}
    summarise = project_model.summarise_file
    parse = cst.parse_module

    def counting_summarise(*args, **kwargs):
        seen["summarised"] += 1
        return summarise(*args, **kwargs)

    def counting_parse(*args, **kwargs):
        seen["parsed"] += 1
        return parse(*args, **kwargs)

    monkeypatch.setattr(project_model, "summarise_file", counting_summarise)
    monkeypatch.setattr(project_files.cst, "parse_module", counting_parse)
    return seen


def lint(*paths: str) -> str:
    project_files.forget_projects()  # each run as a fresh process would
    result = CliRunner().invoke(main, ["check", *paths, "--jobs", "1", "--exit-zero", "--format", "json"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_warm_single_file_run_parses_that_file_and_not_the_project(project, counts):
    lint(".")  # the whole project, as CI runs it: builds the index and the result cache
    counts.update(summarised=0, parsed=0)
    (project / "service" / "part_3.py").write_text(HELPER.format(n=3) + "\n# edited\n")
    lint("service/part_3.py")
    assert counts["summarised"] == 1  # the edited module, for the index
    # The edited file, and at most the few modules its rules ask about (its base class's module).
    assert counts["parsed"] <= 3, counts


def test_a_warm_probe_file_run_reads_the_routes_without_parsing_every_module(project, counts):
    lint(".")
    counts.update(summarised=0, parsed=0)
    (project / "deploy.yaml").write_text(DEPLOYMENT.replace("periodSeconds: 5", "periodSeconds: 10"))
    assert '"GEM601"' in lint("deploy.yaml")  # the probe's handler runs a forward: found through the index
    assert counts["summarised"] == 0
    # The module declaring the route (and what it imports to find the forward), not the 40 others.
    assert counts["parsed"] <= 3, counts
