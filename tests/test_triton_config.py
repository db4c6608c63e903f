"""The Triton model-configuration front-end: config.pbtxt parsed with protobuf's text format against
Triton's ModelConfig schema (from tritonclient), field positions, and what happens without the schema."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from gemlint.api import lint_paths
from gemlint.cli import main
from gemlint.discovery import Discovery
from gemlint.config import default_config
from gemlint.diagnostics import Position
from gemlint.frontends import triton_config
from gemlint.frontends.triton_config import config_path, parse_text, schema_problem, tensor_shapes
from gemlint.languages import Language, language_of
from gemlint.text import SourceError

pytestmark = pytest.mark.skipif(schema_problem() is not None, reason=f"Triton's schema: {schema_problem()}")


def write_model(tmp_path, config: str):
    model = tmp_path / "tok" / "1" / "model.py"
    model.parent.mkdir(parents=True)
    model.write_text("")
    (tmp_path / "tok" / "config.pbtxt").write_text(config)
    return model


def test_inputs_and_outputs_in_every_text_format_spelling(tmp_path):
    model = write_model(
        tmp_path,
        """
        # comments, repeated fields written one by one, <...> messages, scalar dims
        input { name: "TEXT" data_type: TYPE_STRING dims: -1 }
        output [
          { name: 'input_ids', dims: [ 1, 128 ], reshape: { shape: [ 128 ] } },
          < name: "scores" dims: [ -1 ] >
        ]
        parameters: { key: "k" value: { string_value: "v" } }
        """,
    )
    shapes = tensor_shapes(model)
    assert shapes.inputs == {"TEXT": (-1,)} and shapes.outputs == {"input_ids": (1, 128), "scores": (-1,)}
    assert shapes.fixed("input_ids") is True and shapes.fixed("scores") is False and shapes.fixed("other") is None
    assert not shapes.outputs_fixed


def test_schema_errors_are_source_errors_with_their_position(tmp_path):
    with pytest.raises(SourceError) as error:
        parse_text(tmp_path / "config.pbtxt", 'name: "m"\ninstance_group [ { kind: KIND_TPU } ]\n')
    assert (error.value.line, error.value.column) == (2, 26) and "KIND_TPU" in str(error.value)
    with pytest.raises(SourceError, match='has no field named "max_batch"'):
        parse_text(tmp_path / "config.pbtxt", "max_batch: 8\n")
    with pytest.raises(SourceError):  # a string where the schema has an int32
        parse_text(tmp_path / "config.pbtxt", 'max_batch_size: "8"\n')


def test_malformed_or_missing_configs_give_no_shapes(tmp_path):
    assert tensor_shapes(write_model(tmp_path, 'output [ { name: "x" dims: [ abc ] } ]')) is None
    assert config_path(tmp_path / "model.py") is None  # not in a numeric version folder
    assert tensor_shapes(tmp_path / "other" / "2" / "model.py") is None  # no such file


def test_field_positions_follow_paths_and_occurrences(tmp_path):
    text = (
        'name: "m"\n'
        "max_batch_size: 8\n"
        "instance_group [\n"
        "  { kind: KIND_CPU },\n"
        "  { count: 2\n"
        "    kind: KIND_GPU }\n"
        "]\n"
        "instance_group { kind: KIND_AUTO }\n"
        "dynamic_batching { preferred_batch_size: [ 4, 8 ] }\n"
    )
    config = parse_text(tmp_path / "config.pbtxt", text)
    assert config.message.max_batch_size == 8 and len(config.message.instance_group) == 3
    assert config.span("max_batch_size") == (Position(2, 1), Position(2, 15))
    assert config.span(("instance_group", 1), "kind")[0] == Position(6, 5)
    assert config.span(("instance_group", 2), "kind")[0] == Position(8, 18)
    assert config.span("dynamic_batching", "preferred_batch_size")[0] == Position(9, 20)
    assert config.span("output") is None


def test_discovery_finds_model_configurations_only(tmp_path):
    for relative in ("repo/bert/config.pbtxt", "repo/bert/1/model.pt", "graphs/model.pbtxt"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    found = [source.relative for source in Discovery(default_config(tmp_path)).files([tmp_path])]
    assert found == ["repo/bert/config.pbtxt"]
    assert language_of(tmp_path / "config.pbtxt") is Language.TRITON


BATCHING_OFF = 'name: "m"\nbackend: "pytorch"\nmax_batch_size: 8\n'


def test_templates_are_not_configurations(tmp_path):
    model = tmp_path / "llm" / "config.pbtxt"
    model.parent.mkdir()
    model.write_text('name: "llm"\nmax_batch_size: ${triton_max_batch_size}\nbackend: "tensorrtllm"\n')
    assert lint_paths([tmp_path], config=default_config(tmp_path)) == []


def with_preview(root):
    """GEM603 is a preview rule: the configuration that selects it."""
    return dataclasses.replace(default_config(root), preview=True)


def test_without_the_schema_configurations_are_not_checked_and_every_output_says_so(tmp_path, monkeypatch):
    config = tmp_path / "m" / "config.pbtxt"
    config.parent.mkdir()
    config.write_text(BATCHING_OFF + "this is not a configuration {\n")
    assert [d.code for d in lint_paths([tmp_path], config=with_preview(tmp_path))] == ["GEM000"]
    config.write_text(BATCHING_OFF)
    assert [d.code for d in lint_paths([tmp_path], config=with_preview(tmp_path))] == ["GEM603"]

    monkeypatch.setattr(triton_config, "_schema", lambda: "tritonclient is not installed (pip install 'gemlint[triton]')")
    assert lint_paths([tmp_path], config=with_preview(tmp_path)) == []
    model = write_model(tmp_path, 'output [ { name: "input_ids" dims: [ 128 ] } ]')
    assert tensor_shapes(model) is None
    result = CliRunner().invoke(main, ["check", str(tmp_path), "--isolated", "--preview", "--no-cache", "--verbose", "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert "2 Triton model configurations (config.pbtxt) not checked: tritonclient is not installed" in result.stderr
    assert "GEM603 did not run" in result.stderr
    text = CliRunner().invoke(main, ["check", str(tmp_path), "--isolated", "--preview", "--no-cache"])
    assert text.exit_code == 0 and "All checks passed!" not in text.stdout
    assert text.stdout.splitlines()[-2:] == [
        "No problems found in the files checked.",
        "2 Triton model configurations (config.pbtxt) not checked: tritonclient is not installed "
        "(pip install 'gemlint[triton]').",
    ]
    sarif = CliRunner().invoke(main, ["check", str(tmp_path), "--isolated", "--preview", "--no-cache", "--format", "sarif"])
    notifications = json.loads(sarif.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [(n["level"], n["message"]["text"][:44]) for n in notifications] == [("warning", "2 Triton model configurations (config.pbtxt)")]
    github = CliRunner().invoke(main, ["check", str(tmp_path), "--isolated", "--preview", "--no-cache", "--format", "github"])
    assert github.stdout.startswith("::warning title=gemlint: not checked::2 Triton model configurations")
    json_run = CliRunner().invoke(main, ["check", str(tmp_path), "--isolated", "--preview", "--no-cache", "--format", "json"])
    assert json.loads(json_run.stdout) == [] and "gemlint: warning: 2 Triton model configurations" in json_run.stderr


def test_a_run_that_checked_everything_passes(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path), "--isolated", "--no-cache"])
    assert result.stdout == "All checks passed!\n" and "warning" not in result.stderr
