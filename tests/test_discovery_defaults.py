"""What discovery skips by default: vendored folders, git submodules and files git ignores (ruff's
``respect-gitignore``), and how each is linted again."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.config import ConfigError, load_config
from gemlint.registry import known_codes

SERVICE = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _linted(root: Path, *args: str) -> list[str]:
    result = CliRunner().invoke(
        main, [str(root), "--project-root", str(root), "--format", "json", "--no-cache", "--exit-zero", "--select", "GEM404", *args]
    )
    assert result.exit_code == 0, result.output
    return sorted((Path.cwd() / item["path"]).resolve().relative_to(root.resolve()).as_posix() for item in json.loads(result.stdout))


def test_vendored_folders_and_submodules_are_excluded_by_default(tmp_path):
    _write(
        tmp_path,
        {
            "app.py": SERVICE,
            "third_party/lib/a.py": SERVICE,
            "3rd_party/b.py": SERVICE,
            "3rdparty/kernels/b.py": SERVICE,
            "3rd-party/b.py": SERVICE,
            "src/vendor/c.py": SERVICE,
            "external/d.py": SERVICE,
            "extern/e.py": SERVICE,
            "deps/engine/f.py": SERVICE,
            "deps/mine/g.py": SERVICE,
            ".gitmodules": '[submodule "engine"]\n\tpath = deps/engine\n\turl = https://example.com/engine.git\n',
        },
    )
    assert _linted(tmp_path) == ["app.py", "deps/mine/g.py"]
    # Named on the command line, a vendored folder is linted, as an excluded folder is.
    result = CliRunner().invoke(main, [str(tmp_path / "deps/engine"), "--project-root", str(tmp_path), "--no-cache", "--exit-zero", "--select", "GEM404"])
    assert "f.py" in result.output


def test_vendored_trees_under_other_names_and_copied_projects_are_excluded(tmp_path):
    _write(
        tmp_path,
        {
            "app.py": SERVICE,
            "pkg/__init__.py": "",
            "pkg/thirdparty/a.py": SERVICE,
            "pkg/_vendor/b.py": SERVICE,
            "vendored/c.py": SERVICE,
            # Another project copied into a package: its own license and build file.
            "pkg/libs/__init__.py": "",
            "pkg/libs/fastlib/LICENSE": "MIT\n",
            "pkg/libs/fastlib/setup.py": "",
            "pkg/libs/fastlib/d.py": SERVICE,
            # A project of the monorepo is not inside a package: it is the project's own code.
            "services/api/LICENSE": "MIT\n",
            "services/api/pyproject.toml": "",
            "services/api/e.py": SERVICE,
            # A subpackage with a license but no build file is the package's own.
            "pkg/ops/LICENSE": "MIT\n",
            "pkg/ops/f.py": SERVICE,
            # A release of another project unpacked into the tree, anywhere: named for its version or date, with
            # its own license and build file.
            "deps/solver-3.4.0/COPYING": "MPL\n",
            "deps/solver-3.4.0/CMakeLists.txt": "",
            "deps/solver-3.4.0/g.py": SERVICE,
            "nets-20210525-full-source/LICENSE.txt": "BSD\n",
            "nets-20210525-full-source/setup.py": "",
            "nets-20210525-full-source/tools/h.py": SERVICE,
            # Named like one but without a build file: the project's own.
            "models-2.1/LICENSE": "MIT\n",
            "models-2.1/i.py": SERVICE,
        },
    )
    assert _linted(tmp_path) == ["app.py", "models-2.1/i.py", "pkg/ops/f.py", "services/api/e.py"]
    (tmp_path / "gemlint.toml").write_text('exclude = []\n')
    linted = _linted(tmp_path)
    assert {"pkg/libs/fastlib/d.py", "deps/solver-3.4.0/g.py", "nets-20210525-full-source/tools/h.py"} <= set(linted)


def test_a_copy_of_a_platforms_toolkits_or_librarys_headers_is_not_the_projects_code(tmp_path):
    leak = "#include <stdlib.h>\nvoid make(void) { int *p = (int *)malloc(4); if (!p) return; p[0] = 1; }\n"
    _write(
        tmp_path,
        {
            "src/decode.c": leak,
            # the Windows SDK's user-mode headers, copied in to build without the SDK installed
            "um/WinBase.h": "", "um/WinUser.h": "", "um/MspAddr.h": leak,
            # the CUDA toolkit's headers beside a copy of a sample's helper
            "deps/cuda/include/cuda.h": "", "deps/cuda/include/cuda_runtime_api.h": "", "deps/cuda/include/driver_types.h": "",
            "deps/cuda/include/helper.h": leak,
            # one of those names alone is the project's own header
            "include/cuda.h": leak,
            # Eigen's source tree, copied in whole (it marks itself with a file), and its folder of module headers
            "third/linalg/signature_of_eigen3_matrix_library": "", "third/linalg/unsupported/solver.h": leak,
            **{f"vendor/Eigen/{name}": "" for name in ("Core", "Dense", "Eigenvalues", "Householder", "Jacobi", "SparseCore")},
            "vendor/Eigen/src/Core/util.h": leak,
            # a project folder that merely holds a file named `Core` is the project's
            "engine/Core": "", "engine/pool.h": leak,
        },
    )
    assert _linted(tmp_path, "--select", "GEM302") == ["engine/pool.h", "include/cuda.h", "src/decode.c"]


def test_a_config_that_sets_exclude_decides_about_vendored_code_itself(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.gemlint]\nexclude = [".git", "third_party/skipped"]\n',
            "third_party/kept/a.py": SERVICE,
            "third_party/skipped/b.py": SERVICE,
            "deps/engine/f.py": SERVICE,
            ".gitmodules": '[submodule "engine"]\n\tpath = deps/engine\n',
        },
    )
    assert _linted(tmp_path) == ["deps/engine/f.py", "third_party/kept/a.py"]


def test_files_git_ignores_are_not_linted_unless_asked(tmp_path):
    _write(
        tmp_path,
        {
            ".gitignore": "generated/\n*_pb2.py\n",
            "app.py": SERVICE,
            "generated/a.py": SERVICE,
            "api_pb2.py": SERVICE,
            "pkg/.gitignore": "local_*.py\n!local_keep.py\n",
            "pkg/local_scratch.py": SERVICE,
            "pkg/local_keep.py": SERVICE,
            "pkg/sub/local_deep.py": SERVICE,
        },
    )
    assert _linted(tmp_path) == ["app.py", "pkg/local_keep.py"]
    everything = ["api_pb2.py", "app.py", "generated/a.py", "pkg/local_keep.py", "pkg/local_scratch.py", "pkg/sub/local_deep.py"]
    assert _linted(tmp_path, "--no-respect-gitignore") == everything
    (tmp_path / "pyproject.toml").write_text("[tool.gemlint]\nrespect-gitignore = false\n", encoding="utf-8")
    assert _linted(tmp_path) == everything
    assert _linted(tmp_path, "--respect-gitignore") == ["app.py", "pkg/local_keep.py"]


def test_respect_gitignore_is_resolved_per_file(tmp_path):
    _write(
        tmp_path,
        {
            ".gitignore": "*_gen.py\n",
            "a_gen.py": SERVICE,
            "tools/gemlint.toml": "respect-gitignore = false\n",
            "tools/b_gen.py": SERVICE,
        },
    )
    assert _linted(tmp_path) == ["tools/b_gen.py"]


def test_git_info_exclude_is_respected(tmp_path):
    _write(tmp_path, {"app.py": SERVICE, "scratch.py": SERVICE, ".git/info/exclude": "scratch.py\n"})
    assert _linted(tmp_path) == ["app.py"]


@pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="git is not installed")
def test_agrees_with_git_check_ignore(tmp_path):
    ignores = "*.log\nbuild*/\n/top_only.py\ndocs/**/gen_*.py\n!docs/keep/gen_x.py\n"
    files = ["top_only.py", "sub/top_only.py", "docs/a/gen_y.py", "docs/keep/gen_x.py", "build2/x.py", "src/app.py"]
    _write(tmp_path, {".gitignore": ignores, **{name: SERVICE for name in files}})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    checked = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "--stdin"], input="\n".join(files), capture_output=True, text=True)
    ignored_by_git = set(checked.stdout.split())
    assert _linted(tmp_path) == sorted(set(files) - ignored_by_git)


def test_folders_re_included_by_a_negation_are_walked_as_git_walks_them(tmp_path):
    # Ignore everything, then take back every folder and every file with an extension: git tracks `src/a.py`
    # and `src/deep/b.py`, and ignores only the extensionless files.
    ignores = "*\n!*.*\n!*/\n"
    files = ["top.py", "src/a.py", "src/deep/b.py", "src/Makefile", "src/deep/README"]
    _write(tmp_path, {".gitignore": ignores, **{name: SERVICE for name in files}})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    checked = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "--stdin"], input="\n".join(files), capture_output=True, text=True)
    assert set(checked.stdout.split()) == {"src/Makefile", "src/deep/README"}
    assert _linted(tmp_path) == ["src/a.py", "src/deep/b.py", "top.py"]


def test_the_key_is_validated_with_a_suggestion(tmp_path):
    config = tmp_path / "gemlint.toml"
    config.write_text("respect-gitignores = false\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="did you mean 'respect-gitignore'"):
        load_config(config, known_codes())
    config.write_text('respect-gitignore = "no"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'respect-gitignore': expected true or false"):
        load_config(config, known_codes())


def test_compiled_globs_match_as_pathspec_does():
    """The excludes are tested with one expression where no pattern negates: on every path, with and without
    a trailing slash, the answer is pathspec's, for the default excludes, negations, anchors and wildcards."""
    import pathspec

    from gemlint.config import default_config
    from gemlint.globs import compile_globs

    pattern_sets = [
        tuple(default_config(Path(".")).exclude),
        ("build", "!build/keep.py", "*.egg-info"),
        ("/src/generated/", "**/train*.py", "docs/**/*.txt", "a?c", "[ab]*.py"),
        (),
        ("# a comment", "", "tests/"),
        ("a+b", "c.d", "we$ird", "ünï", "x-y", "build"),
    ]
    paths = [
        "build", "build/keep.py", "build/x.py", "src/build/x.py", "pkg.egg-info/PKG", "src/generated/a.py",
        "lib/src/generated/a.py", "scripts/train_lora.py", "docs/a/b/c.txt", "docs/c.txt", "abc", "xabc", "b1.py",
        "c/b1.py", "tests", "tests/test_a.py", "a/tests/b.py", "./venv/lib/x.py", ".venv", "node_modules/x/y.js",
        "third_party/z.cc", "external", "src/extern/lib.py", "__pycache__/m.pyc", "ok/model.py",
        "my_build/x.py", "build.py", "src/venv.py", "docs/build", "a+b/c.py", "aab/c.py", "c.d", "cxd/e.py",
        "we$ird/f.py", "ünï/g.py", "x-y", "a/b/.venv/c.py",
    ]
    for patterns in pattern_sets:
        compiled, reference = compile_globs(patterns), pathspec.PathSpec.from_lines("gitignore", patterns)
        for path in paths:
            for spelled in (path, path + "/"):
                assert compiled.match_file(spelled) == reference.match_file(spelled), (patterns, spelled)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_linked_file_is_left_to_its_target_when_the_walk_reaches_it_or_it_is_vendored(tmp_path, monkeypatch):
    _write(
        tmp_path,
        {
            "app.py": SERVICE,
            "third_party/engine/g.py": SERVICE,
            ".gitmodules": '[submodule "codec"]\n\tpath = codec\n\turl = https://example.com/codec.git\n',
        },
    )
    (tmp_path / "headers").mkdir()
    (tmp_path / "tools").mkdir()
    # The submodule is not checked out, so the link into it dangles; it is the submodule's file all the same.
    (tmp_path / "headers/codec.py").symlink_to("../codec/codec.py")
    (tmp_path / "headers/engine.py").symlink_to("../third_party/engine/g.py")
    (tmp_path / "tools/app.py").symlink_to("../app.py")
    (tmp_path / "tools/missing.py").symlink_to("../nowhere.py")
    monkeypatch.chdir(tmp_path)

    def found(*paths: str) -> list[tuple[str, str]]:
        result = CliRunner().invoke(
            main, [*paths, "--project-root", ".", "--format", "json", "--no-cache", "--exit-zero", "--select", "GEM404,GEM000"]
        )
        assert result.exit_code == 0, result.output
        return sorted((item["path"], item["code"]) for item in json.loads(result.stdout))

    # Linted once, under the target's own name; a link that dangles into the project's own code is still reported.
    assert found(".") == [("app.py", "GEM404"), ("tools/missing.py", "GEM000")]
    # A walk that does not reach the target lints it through the link.
    assert found("tools") == [("tools/app.py", "GEM404"), ("tools/missing.py", "GEM000")]
    # Once the submodule is checked out, a link into it that still dangles is broken.
    _write(tmp_path, {"codec/other.py": SERVICE})
    assert found(".") == [("app.py", "GEM404"), ("headers/codec.py", "GEM000"), ("tools/missing.py", "GEM000")]
