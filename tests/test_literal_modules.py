"""A generated table bound at a module's top level is read from its tokens and left out of the parse, which would
take hundreds of MiB for a few MB of literal: the rest of the module, its line numbers and the binding stay."""

from __future__ import annotations

import ast

from gemlint.analysis import literal_modules
from gemlint.analysis.literal_modules import without_large_literals
from gemlint.project import model


def table_module(entries: int, value: str = "[['a'], ['b']]") -> str:
    rows = "".join(f"    'key{i}': {value},\n" for i in range(entries))
    return (
        "# -*- coding: utf-8 -*-\nfrom __future__ import unicode_literals\n\n"
        f"phrases = {{\n{rows}}}\n\nfrom pinyin import load_phrases\n\n\ndef load():\n    load_phrases(phrases)\n"
    )


def test_a_large_literal_is_replaced_on_its_own_lines(monkeypatch):
    monkeypatch.setattr(literal_modules, "LARGE_LITERAL_CHARACTERS", 1000)
    text = table_module(200)
    rewritten = without_large_literals(text.encode())
    assert rewritten is not None and len(rewritten) < len(text) / 10
    assert rewritten.count("\n") == text.count("\n")
    tree = ast.parse(rewritten)
    assert [type(node).__name__ for node in tree.body] == ["ImportFrom", "Assign", "ImportFrom", "FunctionDef"]
    assert isinstance(tree.body[1].value, ast.Constant) and tree.body[1].value.value is None
    function = tree.body[3]
    assert function.lineno == text.splitlines().index("def load():") + 1


def test_only_literals_at_the_top_level_are_left_out(monkeypatch):
    monkeypatch.setattr(literal_modules, "LARGE_LITERAL_CHARACTERS", 1000)
    assert without_large_literals(table_module(5).encode()) is None  # too small to matter
    assert without_large_literals(table_module(200, "load('a')").encode()) is None  # a call is no literal
    assert without_large_literals(table_module(200, "f'{x}'").encode()) is None  # nor is an f-string
    indented = "if True:\n    phrases = [" + ", ".join("'x'" for _ in range(1000)) + "]\n"
    assert without_large_literals(indented.encode()) is None  # only top-level bindings
    assert without_large_literals(b"phrases = {'a': [\n") is None  # does not tokenize: the parser says why


def test_the_index_parses_a_large_module_without_its_table(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "LARGE_MODULE_BYTES", 1000)
    monkeypatch.setattr(literal_modules, "LARGE_LITERAL_CHARACTERS", 1000)
    path = tmp_path / "table.py"
    path.write_text(table_module(300), encoding="utf-8")
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(model.ast, "parse", lambda source, *args, **kwargs: parsed.append(len(source)) or real_parse(source, *args, **kwargs))
    _, summary, _ = model.summarise_file(str(path), "table")
    assert summary is not None and "load" in summary.functions
    assert summary.imports["load_phrases"] == "pinyin.load_phrases"
    assert parsed and max(parsed) < path.stat().st_size / 10
