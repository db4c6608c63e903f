"""The real-corpus smoke script works on directories and archives (it is run by hand, not in CI)."""

from __future__ import annotations

import importlib.util
import json
import sys
import tarfile
import zipfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "smoke_corpus.py"


def _script():
    spec = importlib.util.spec_from_file_location("smoke_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_smoke_run_over_an_sdist_and_a_wheel_reports_counts(tmp_path, capsys):
    package = tmp_path / "pkg-1.0"
    (package / "csrc").mkdir(parents=True)
    (package / "csrc" / "ops.cu").write_text("void f(int n) {\n  float* d;\n  cudaMalloc(&d, n);\n}\n")
    (package / "csrc" / "blob.cuh").write_bytes(b"\x00\x01")
    (package / "svc.py").write_text('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n')
    (package / "README.md").write_text("not linted\n")
    sdist = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as bundle:
        bundle.add(package, arcname="pkg-1.0")
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as bundle:
        bundle.write(package / "svc.py", "pkg/svc.py")
    summary = tmp_path / "summary.json"
    assert _script().main([str(sdist), str(wheel), "--jobs", "1", "--json", str(summary)]) == 0
    data = json.loads(summary.read_text())
    assert data["crashes"] == 0 and data["gem000"] == 1
    assert data["files"] == {"native": 2, "python": 2} and data["files_total"] == 4
    assert data["findings_by_code"] == {"GEM000": 1, "GEM301": 1, "GEM404": 2}
    assert [t["name"] for t in data["targets"]] == ["pkg-1.0", "pkg-1.0-py3-none-any"]
    assert "crashes: 0" in capsys.readouterr().out
    assert not list(tmp_path.glob("gemlint-smoke-*"))  # scratch space is removed
