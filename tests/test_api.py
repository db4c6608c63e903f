from __future__ import annotations

from gemlint import lint_paths, lint_source
from gemlint.diagnostics import Diagnostic


def test_lint_source_returns_diagnostics_as_data():
    found = lint_source('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n', "service.py")
    assert [(d.code, d.line, d.column) for d in found] == [("GEM404", 2, 1)]
    assert isinstance(found[0], Diagnostic) and found[0].to_json()["name"] == "cuda-launch-blocking"


def test_lint_source_honours_path_semantics_and_overrides():
    source = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
    assert lint_source(source, "tests/test_service.py") == []
    assert lint_source(source, "service.py", ignore=("GEM404",)) == []


def test_lint_paths(tmp_path):
    (tmp_path / "a.py").write_text('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n')
    (tmp_path / "b.py").write_text("def broken(:\n")
    found = lint_paths([tmp_path])
    assert sorted(d.code for d in found) == ["GEM000", "GEM404"]
