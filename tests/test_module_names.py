"""The names Python imports a project's modules under, and what the project model resolves through them: the
project root (where its scripts run) and a folder no import can spell are no packages, a package's star import
re-exports its module's names, and a script-folder fallback of a relative import names the same module."""

from __future__ import annotations

import os

import pytest

from gemlint.config import default_config
from gemlint.project.files import forget_projects, project_for
from gemlint.project.summary import forget_packages, module_name, module_names, summarise
import ast


def _tree(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def project(tmp_path):
    forget_projects()
    forget_packages()
    yield lambda: project_for(default_config(tmp_path))
    forget_projects()
    forget_packages()


def test_the_root_and_an_unspellable_folder_are_no_packages(tmp_path, project):
    _tree(tmp_path, {
        "__init__.py": "", "helpers.py": "", "ui/__init__.py": "", "ui/app.py": "",
        "photo-editor/__init__.py": "", "photo-editor/paint.py": "", "photo-editor/pages/__init__.py": "",
        "photo-editor/pages/main.py": "", "pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/mod.py": "",
    })
    root = os.path.abspath(tmp_path)
    paths = [os.path.join(root, *name.split("/")) for name in ("helpers.py", "ui/app.py", "photo-editor/paint.py", "photo-editor/pages/main.py", "pkg/sub/mod.py")]
    assert module_names(paths, root) == ["helpers", "ui.app", "paint", "pages.main", "pkg.sub.mod"]
    forget_packages()
    # Without the root, its __init__.py makes it a package named after its folder, as it is to a parent folder.
    assert module_name(paths[0]) == f"{os.path.basename(root)}.helpers" if os.path.basename(root).isidentifier() else "helpers"


def test_a_script_of_a_subpackage_finds_a_module_of_a_root_holding_an_init(tmp_path, project):
    _tree(tmp_path, {
        "__init__.py": "",
        "loaders.py": "import torch\ndef load(path):\n    return torch.load(path)\n",
        "ui/__init__.py": "",
        "ui/app.py": "from loaders import load\n",
    })
    model = project().model
    entry = model.entry_of_path(str(tmp_path / "ui" / "app.py"))
    target = model.resolve(entry, "load")
    assert (target.kind, target.module, target.qualname) == ("function", "loaders", "load")


def test_a_package_star_import_re_exports_its_modules_names(tmp_path, project):
    _tree(tmp_path, {
        "enhance/__init__.py": "from .pipeline import *\n",
        "enhance/pipeline.py": "import torch\nclass Enhancer:\n    pass\ndef build(name):\n    return Enhancer()\n",
        "app.py": "from enhance import build, Enhancer, torch\n",
    })
    model = project().model
    assert model.resolve_absolute("enhance.build").qualname == "build"
    assert model.resolve_absolute("enhance.Enhancer").kind == "class"
    assert model.resolve_absolute("enhance.torch").module == "torch"  # what the module imports is re-exported too
    assert model.resolve_absolute("enhance.missing") is None


def test_a_script_folder_fallback_keeps_the_relative_import():
    source = (
        "try:\n    from .features import Frozen, Tunable as T\nexcept ImportError:\n    from features import Frozen, Tunable as T\n"
        "try:\n    from .other import Thing\nexcept ImportError:\n    from vendored.other import Thing\n"
    )
    summary = summarise(ast.parse(source), "metrics.distance", False)
    assert summary.imports["Frozen"] == "metrics.features.Frozen"
    assert summary.imports["T"] == "metrics.features.Tunable"
    # A fallback to another module (not the same one found from the script's folder) is the binding that holds last.
    assert summary.imports["Thing"] == "vendored.other.Thing"
