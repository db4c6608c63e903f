"""Reading the tensor shapes of a Triton model's config.pbtxt (consulted by GEM201)."""

from __future__ import annotations

from gemlint.frontends.triton_config import config_path, parse, tensor_shapes


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


def test_malformed_or_missing_configs_read_as_none(tmp_path):
    assert parse('output [ { name: "x" ') is None and parse("a: { b: 1 } }") is None
    assert tensor_shapes(write_model(tmp_path, 'output [ { name: "x" dims: [ abc ] } ]')) is None
    assert config_path(tmp_path / "model.py") is None  # not in a numeric version folder
    assert tensor_shapes(tmp_path / "other" / "2" / "model.py") is None  # no such file
