"""A module too large for LibCST's parse to fit the memory budget is not analysed, and the run says so: its
findings are not silently lost. Whether one that this interpreter rejects is broken only LibCST would say (it
reads newer grammars), so it is noted, not reported."""

from __future__ import annotations

from pathlib import Path

from gemlint import python_lint
from gemlint.config import default_config
from gemlint.frontends.module_size import MAX_ANALYSED_CHARS
from gemlint.runner import run

SERVICE = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


def test_the_limit_is_above_every_module_of_ordinary_size():
    # The parse's peak is about 220 bytes per character: a 1 MB module already needs some 300 MiB.
    assert 500_000 <= MAX_ANALYSED_CHARS <= 1_000_000


def test_a_module_over_the_limit_is_noted_not_analysed(tmp_path, monkeypatch):
    padding = "".join(f"VALUE_{i} = {i}\n" for i in range(200))
    (tmp_path / "small.py").write_text(SERVICE, encoding="utf-8")
    (tmp_path / "large.py").write_text(SERVICE + padding, encoding="utf-8")
    (tmp_path / "large_broken.py").write_text(SERVICE + padding + "def broken(:\n", encoding="utf-8")
    monkeypatch.setattr(python_lint, "MAX_ANALYSED_CHARS", len(SERVICE) + 100)
    result = run([tmp_path], default_config(tmp_path), jobs=1)
    found = sorted((Path(d.path).name, d.code) for d in result.diagnostics)
    assert found == [("small.py", "GEM404")]
    noted = sorted((Path(file).name, "too large to analyse" in note) for file, note in result.notes)
    assert noted == [("large.py", True), ("large_broken.py", True)]
    assert any(notice.startswith("2 files checked only in part") for notice in result.unchecked)


def test_a_module_too_deep_for_the_project_index_is_reported_and_the_run_goes_on(tmp_path):
    # An `elif` chain of hundreds of keys is deeper than the index's walk can follow: that module is left out of
    # the index and reported, and the other files are linted as ever.
    chain = "".join(f"    {'if' if i == 0 else 'elif'} key == 'k{i}':\n        values[{i % 8}] = 1\n" for i in range(600))
    (tmp_path / "small.py").write_text(SERVICE, encoding="utf-8")
    served = "import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\nnet = torch.nn.Linear(2, 2)\n\n\n@app.post('/p')\ndef predict(x: list[float]):\n    return net(torch.tensor(x)).tolist()\n\n\n"
    (tmp_path / "keys.py").write_text(served + "def parse(key, values):\n" + chain + "    return values\n", encoding="utf-8")
    result = run([tmp_path], default_config(tmp_path), jobs=1)
    found = sorted((Path(d.path).name, d.code) for d in result.diagnostics)
    assert found == [("keys.py", "GEM000"), ("small.py", "GEM404")]
