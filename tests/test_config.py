"""Configuration files: discovery, every key, and errors that name the key and the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.config import ConfigError, find_config_file, load_config
from gemlint.diagnostics import Severity
from gemlint.registry import known_codes

BLOCKING = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
ANOMALY = "import torch\ntorch.autograd.set_detect_anomaly(True)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_cli(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_every_key_is_accepted(tmp_path):
    config = load_config(
        write(
            tmp_path / "gemlint.toml",
            """
select = ["GEM"]
ignore = ["GEM403"]
extend-select = ["GEM4"]
exclude = ["build"]
extend-exclude = ["generated/"]
force-exclude = true
per-file-ignores = { "scripts/*.py" = ["GEM404"] }
inference-paths = ["src/serving/**"]
training-paths = ["**/train*.py"]
health-paths = ["/healthz"]
static-shape-backends = ["torch_xla", "my_npu"]
severity = { GEM201 = "error", GEM4 = "note" }
""",
        ),
        known_codes(),
    )
    assert config.ignore == ("GEM403",)
    assert config.force_exclude is True
    assert config.per_file_ignores == (("scripts/*.py", ("GEM404",)),)
    assert dict(config.severity) == {"GEM201": Severity.ERROR, "GEM4": Severity.NOTE}
    assert config.static_shape_backends == ("torch_xla", "my_npu")
    assert config.root == tmp_path.resolve()


@pytest.mark.parametrize(
    "body, fragment",
    [
        ("selct = ['GEM']", "unknown key 'tool.gemlint.selct'"),
        ("select = 'GEM101'", "'tool.gemlint.select': expected a list of rule codes"),
        ("ignore = ['E501']", "'E501' is not a rule code"),
        ("ignore = ['GEM999']", "'GEM999' matches no gemlint rule"),
        ("force-exclude = 'yes'", "'tool.gemlint.force-exclude': expected true or false"),
        ("exclude = [1]", "'tool.gemlint.exclude': expected a list of strings"),
        ("severity = { GEM201 = 'fatal' }", "'tool.gemlint.severity.GEM201'"),
        ("per-file-ignores = ['x']", "'tool.gemlint.per-file-ignores': expected a table"),
    ],
)
def test_bad_config_names_key_and_file(tmp_path, body, fragment):
    pyproject = write(tmp_path / "pyproject.toml", f"[tool.gemlint]\n{body}\n")
    with pytest.raises(ConfigError) as error:
        load_config(pyproject, known_codes())
    assert fragment in str(error.value)
    assert str(pyproject) in str(error.value)


def test_bad_config_exits_2_with_message(tmp_path):
    write(tmp_path / "gemlint.toml", "selct = ['GEM']\n")
    write(tmp_path / "app.py", BLOCKING)
    result = run_cli(["app.py"], tmp_path)
    assert result.exit_code == 2
    assert "unknown key 'selct'" in result.output and "gemlint.toml" in result.output


def test_invalid_toml_exits_2(tmp_path):
    write(tmp_path / "gemlint.toml", "select = [\n")
    write(tmp_path / "app.py", BLOCKING)
    result = run_cli(["app.py"], tmp_path)
    assert result.exit_code == 2 and "invalid TOML" in result.output


def test_another_tools_broken_pyproject_is_not_gemlints_error(tmp_path):
    # A pyproject.toml that does not parse and never names gemlint holds no gemlint config: the run goes on.
    write(tmp_path / "pyproject.toml", '[project]\nname = "svc"\ndependencies = [\n  "a==1"\n  "b==2",\n]\n')
    write(tmp_path / "app.py", BLOCKING)
    result = run_cli(["app.py"], tmp_path)
    assert result.exit_code == 1 and "GEM404" in result.output
    # One that names gemlint is meant as its config: its mistake is reported, file and place, unless isolated.
    write(tmp_path / "pyproject.toml", "[tool.gemlint]\nignore = [\n")
    result = run_cli(["app.py"], tmp_path)
    assert result.exit_code == 2 and "pyproject.toml: invalid TOML" in result.output
    assert run_cli(["app.py", "--isolated"], tmp_path).exit_code == 1
    write(tmp_path / "other.toml", "ignore = ['GEM404']\n")
    assert run_cli(["app.py", "--config", "other.toml"], tmp_path).exit_code == 0


def test_nearest_config_wins_and_pyproject_needs_the_table(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.black]\nline-length = 100\n")
    assert find_config_file(tmp_path) is None
    write(tmp_path / "pyproject.toml", "[tool.gemlint]\nignore = ['GEM404']\n")
    write(tmp_path / "sub" / "gemlint.toml", "ignore = ['GEM402']\n")
    assert find_config_file(tmp_path / "sub" / "x.py") == tmp_path / "sub" / "gemlint.toml"
    assert find_config_file(tmp_path / "other") == tmp_path / "pyproject.toml"
    write(tmp_path / "sub" / ".gemlint.toml", "")
    assert find_config_file(tmp_path / "sub") == tmp_path / "sub" / ".gemlint.toml"


def test_select_ignore_and_most_specific_prefix(tmp_path):
    write(tmp_path / "svc.py", "import os\nimport torch\n" + BLOCKING.split("\n", 1)[1] + ANOMALY.split("\n", 1)[1])
    result = run_cli(["svc.py", "--ignore", "GEM4", "--extend-select", "GEM404", "--format", "json"], tmp_path)
    assert [d["code"] for d in json.loads(result.output)] == ["GEM404"]
    result = run_cli(["svc.py", "--select", "GEM402", "--format", "json"], tmp_path)
    assert [d["code"] for d in json.loads(result.output)] == ["GEM402"]


def test_per_file_ignores_severity_and_excludes(tmp_path):
    write(
        tmp_path / "pyproject.toml",
        """[tool.gemlint]
per-file-ignores = { "scripts/*.py" = ["GEM404"] }
severity = { GEM404 = "note" }
extend-exclude = ["generated/"]
""",
    )
    write(tmp_path / "scripts" / "debug.py", BLOCKING)
    write(tmp_path / "app.py", BLOCKING)
    write(tmp_path / "generated" / "gen.py", BLOCKING)
    write(tmp_path / ".venv2" / "pyvenv.cfg", "home = /usr\n")
    write(tmp_path / ".venv2" / "lib" / "x.py", BLOCKING)
    write(tmp_path / "node_modules" / "y.py", BLOCKING)
    result = run_cli([".", "--format", "json"], tmp_path)
    found = json.loads(result.output)
    assert [(d["path"], d["severity"]) for d in found] == [("app.py", "note")]
    # An excluded file named explicitly is still linted, unless --force-exclude.
    result = run_cli(["generated/gen.py", "--format", "json"], tmp_path)
    assert [d["path"] for d in json.loads(result.output)] == ["generated/gen.py"]
    result = run_cli(["generated/gen.py", "--force-exclude", "--format", "json"], tmp_path)
    assert json.loads(result.output) == []


def test_isolated_ignores_config(tmp_path):
    write(tmp_path / "gemlint.toml", "ignore = ['GEM404']\n")
    write(tmp_path / "app.py", BLOCKING)
    assert run_cli(["app.py"], tmp_path).exit_code == 0
    assert run_cli(["app.py", "--isolated"], tmp_path).exit_code == 1


def test_unknown_cli_code_exits_2(tmp_path):
    write(tmp_path / "app.py", BLOCKING)
    result = run_cli(["app.py", "--select", "GEM9"], tmp_path)
    assert result.exit_code == 2 and "option '--select'" in result.output
