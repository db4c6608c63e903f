"""Preview rules (ruff's model): off by default; on with `preview = true`, `--preview` or their exact code;
marked in `gemlint rules`, the docs and SARIF; honoured by the flake8 plugin.

No rule ships as preview on every branch, so each test marks a real rule preview for its duration: the
class attribute is all the machinery reads.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.config import ConfigError, default_config, load_config
from gemlint.docs import rule_markdown, rule_text, rules_markdown
from gemlint.flake8_plugin import Flake8Plugin, _rule_selection, _selection, _settings, _tree
from gemlint.registry import all_rules, known_codes, rule_by_code
from gemlint.reporters.sarif import render_sarif
from gemlint.rules import rule_table, triage_table
from gemlint.selection import Selection

# GEM103 is a single-file Python rule, so the flake8 plugin runs it too.
CODE = "GEM103"
SOURCE = "import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.post('/p')\ndef predict(model, x):\n    model.train()\n    return model(x)\n"


@pytest.fixture
def preview_rule(monkeypatch):
    rule = rule_by_code(CODE)
    monkeypatch.setattr(rule, "preview", True)
    # Runs and the flake8 plugin select from the generated table, which says what the metadata says.
    for module, table in ((rule_table, "RULES"), (triage_table, "PYTHON_RULES")):
        entries = tuple(replace(entry, preview=True) if entry.code == CODE else entry for entry in getattr(module, table))
        monkeypatch.setattr(module, table, entries)
    for cached in (_settings, _tree, _selection, _rule_selection):  # the plugin keeps configs for the process
        cached.cache_clear()
    yield rule
    for cached in (_settings, _tree, _selection, _rule_selection):  # the plugin keeps configs for the process
        cached.cache_clear()


def selected(**settings) -> set[str]:
    config = default_config(Path.cwd()).with_overrides(**settings)
    return {rule.code for rule in Selection.from_config(config, all_rules()).rules}


def test_selection_needs_preview_mode_or_the_exact_code(preview_rule):
    assert CODE not in selected()
    assert CODE not in selected(select=("GEM1",)) and CODE not in selected(extend_select=("GEM10",))
    assert CODE in selected(preview=True)
    assert CODE in selected(select=(CODE,)) and CODE in selected(extend_select=(CODE,))
    # ignore still wins, and preview mode does not select what select leaves out
    assert CODE not in selected(preview=True, ignore=("GEM103",)) and CODE not in selected(preview=True, select=("GEM4",))
    # the other rules are unaffected
    assert "GEM101" in selected() and "GEM101" in selected(select=("GEM1",))


def test_rules_that_are_not_preview_keep_prefix_selection():
    assert all(not rule.preview for rule in all_rules() if rule.code == CODE)
    assert CODE in selected(select=("GEM1",))


def test_config_key(tmp_path, preview_rule):
    (tmp_path / "gemlint.toml").write_text("preview = true\n")
    assert load_config(tmp_path / "gemlint.toml", known_codes()).preview is True
    (tmp_path / "gemlint.toml").write_text('preview = "yes"\n')
    with pytest.raises(ConfigError, match="'preview': expected true or false"):
        load_config(tmp_path / "gemlint.toml", known_codes())


def _lint(tmp_path, *args, config: str | None = None) -> set[str]:
    (tmp_path / "serve.py").write_text(SOURCE)
    if config is not None:
        (tmp_path / "gemlint.toml").write_text(config)
    result = CliRunner().invoke(main, ["check", str(tmp_path / "serve.py"), "--no-cache", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return {finding["code"] for finding in json.loads(result.stdout)}


def test_cli_flag_config_and_exact_code(tmp_path, preview_rule):
    assert CODE not in _lint(tmp_path)
    assert CODE in _lint(tmp_path, "--preview")
    assert CODE in _lint(tmp_path, "--extend-select", CODE)
    assert CODE not in _lint(tmp_path, "--extend-select", "GEM1")
    assert CODE in _lint(tmp_path, config="preview = true\n")


def test_rules_listing_and_docs_mark_it(preview_rule):
    table = CliRunner().invoke(main, ["rules"]).stdout
    line = next(line for line in table.splitlines() if line.startswith(CODE))
    assert f"{preview_rule.name} (preview)" in line
    rows = json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).stdout)
    flags = {row["code"]: row["preview"] for row in rows}
    assert flags[CODE] is True and flags["GEM101"] is False
    markdown = rule_markdown(preview_rule)
    assert "**Preview**" in markdown and f'`extend-select = ["{CODE}"]`' in markdown
    assert f"| {preview_rule.name} (preview) |" in rules_markdown(all_rules())
    assert "preview" in rule_text(preview_rule).splitlines()[0]


def test_sarif_precision_tags_and_default_configuration(preview_rule):
    log = json.loads(render_sarif([], rules=all_rules(), root=Path.cwd()))
    descriptors = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    preview, other = descriptors[CODE], descriptors["GEM101"]
    assert preview_rule.precision == "high" and preview["properties"]["precision"] == "medium"
    assert "preview" in preview["properties"]["tags"] and preview["defaultConfiguration"]["enabled"] is False
    assert other["properties"]["precision"] == rule_by_code("GEM101").precision
    assert "preview" not in other["properties"]["tags"] and other["defaultConfiguration"].get("enabled", True) is True


def _flake8(tmp_path, monkeypatch, named: frozenset[str] = frozenset()) -> set[str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Flake8Plugin, "config_file", None)
    monkeypatch.setattr(Flake8Plugin, "named_codes", named)
    for cached in (_settings, _tree, _selection, _rule_selection):  # the plugin keeps configs for the process
        cached.cache_clear()
    lines = SOURCE.splitlines(keepends=True)
    return {message.split()[0] for _, _, message, _ in Flake8Plugin(None, lines, str(tmp_path / "serve.py")).run()}


def test_flake8_plugin_honours_preview(tmp_path, monkeypatch, preview_rule):
    assert CODE not in _flake8(tmp_path, monkeypatch)
    assert CODE in _flake8(tmp_path, monkeypatch, frozenset({CODE}))
    (tmp_path / "gemlint.toml").write_text("preview = true\n")
    assert CODE in _flake8(tmp_path, monkeypatch)


def test_flake8_reads_exact_codes_from_its_own_options():
    class Options:
        gemlint_config = None
        select = ["E", "GEM103"]
        extend_select = ["gem202 ", "GEM4"]

    try:
        Flake8Plugin.parse_options(Options())
        assert Flake8Plugin.named_codes == {"GEM103", "GEM202"}
    finally:
        Flake8Plugin.named_codes = frozenset()
        Flake8Plugin.config_file = None
