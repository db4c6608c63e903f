"""A C/C++ finding whose code did not parse is not reported; --verbose says where, --statistics counts the files,
the summary line says how many; statement macros left without `;` are terminated before parsing."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gemlint.cli import main
from gemlint.frontends.native import terminate_statement_macros

UNPARSED = """\
#include <stdlib.h>
int f(int n, int fail) {
  char *p = malloc(n);
  int total = SOME_MACRO(p) @@ n;
  if (fail) return -1;
  free(p);
  return total;
}
int g(int n, int fail) {
  int total = SOME_MACRO(n) @@ n;
  char *p = malloc(n);
  if (fail) return -1;
  free(p);
  return total;
}
"""


def lint(tmp_path, *options):
    (tmp_path / "a.c").write_text(UNPARSED)
    runner = CliRunner()
    return runner.invoke(main, ["check", "--no-cache", "--select", "GEM302", "--format", "json", *options, str(tmp_path / "a.c")])


def test_only_the_finding_past_the_parse_error_is_left_out(tmp_path):
    result = lint(tmp_path)
    findings = json.loads(result.stdout)
    assert [(f["code"], f["line"]) for f in findings] == [("GEM302", 11)]  # the error in g is before its malloc
    assert "not reported" not in result.stderr


def test_verbose_says_what_was_left_out_and_statistics_counts_the_file(tmp_path):
    result = lint(tmp_path, "--verbose", "--statistics")
    assert "line 3: a possible GEM302 finding in `f` is not reported" in result.stderr
    assert "did not parse (line 4)" in result.stderr
    assert "1\tfile with code left unanalysed" in result.stderr


def test_a_file_with_notes_says_them_again_when_the_cache_is_on(tmp_path):
    (tmp_path / "a.c").write_text(UNPARSED)
    runner = CliRunner()
    command = ["check", "--cache-dir", str(tmp_path / "cache"), "--select", "GEM302", "--verbose", str(tmp_path / "a.c")]
    first, second = runner.invoke(main, command), runner.invoke(main, command)
    assert "is not reported" in first.stderr and "is not reported" in second.stderr


def test_the_text_summary_says_how_many_files_were_checked_only_in_part(tmp_path):
    (tmp_path / "a.c").write_text(UNPARSED)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "GEM302", str(tmp_path / "a.c")])
    assert result.stdout.splitlines()[-1].startswith("1 file checked only in part: code that did not parse")


STATEMENT_MACROS = b"""\
int f(int n) {
  LOG_DEBUG("n=%d", n)
  TRACE(f)  // why
  int x = n;
  CHECK_EQ(x, n)
#ifdef EXTRA
  x++;
#endif
  return x;
}
"""


def test_a_statement_macro_left_without_its_semicolon_gets_one_in_the_space_after_it():
    terminated = terminate_statement_macros(STATEMENT_MACROS)
    assert len(terminated) == len(STATEMENT_MACROS)
    assert terminated.splitlines()[2:4] == [b"; TRACE(f); // why", b"  int x = n;"]
    assert b"CHECK_EQ(x, n)\n#ifdef" in terminated  # no space before the next token: left as written


def test_lines_that_only_look_like_statement_macros_are_left_alone():
    source = b"struct S {\n  S(int a)\n      : a(a) {}\n  FOO(int b)\n  {}\n};\nint g(int v) {\n  return 1 +\n    TWICE(v)\n    + 2;\n}\n"
    assert terminate_statement_macros(source) == source


def test_node_text_read_through_the_parse_callback_is_the_source_text():
    """The native parse reads the file through a callback (so that it can be cancelled); a tree without errors is
    then read again from the bytes, one with errors is kept as the callback left it. Either way every node's text,
    multi-byte characters across the callback's chunks included, must be exactly the source's."""
    from gemlint.frontends.native import parse

    for broken in (False, True):
        text = "".join(
            f'int f{i}(int x) {{ /* {"注释é" * (i % 5)} */ const char* s = "{"ü" * (i % 7)}"; '
            f'return x {"@@" if broken and i % 50 == 0 else "+"} {i}; }}\n'
            for i in range(400)
        )
        document = parse(None, text)
        stack, checked = [document.root], 0
        while stack:
            node = stack.pop()
            assert node.text == document.data[node.start_byte : node.end_byte]
            checked += 1
            stack.extend(node.children)
        assert checked > 10_000 and document.root.has_error is broken


def test_an_array_delete_of_parentheses_is_read_as_one_with_the_code_after_it():
    from gemlint.frontends.native import parse, walk
    from gemlint.native.c_syntax import text
    from gemlint.native.c_uses import delete_operand, is_array_delete

    source = (
        "struct Pool {\n"
        "  void drop(float** rows, int n) {\n"
        "    for (int i = 0; i < n; i++) delete[] (rows[i]);\n"
        "    delete [] (float**) rows;\n"
        "  }\n"
        "  void keep(float* row) { delete[](row); }\n"
        "  int size() const { return 0; }\n"
        "};\n"
    )
    document = parse(None, source)
    deletes = [node for node in walk(document.root) if node.type == "delete_expression"]
    functions = [node for node in walk(document.root) if node.type == "function_definition"]
    assert [text(delete_operand(node)) for node in deletes[:2]] == ["rows[i]", "rows"]
    assert all(is_array_delete(node) for node in deletes)
    assert len(functions) == 3 and all(node.parent.type == "field_declaration_list" for node in functions[:1])
    # The rewrite keeps every offset: the document's text is the file's.
    assert document.text == source and document.text_of(deletes[0]) == "delete[] (rows[i])"


def test_the_reading_with_terminated_macros_is_the_tree_a_fresh_parse_of_that_text_gives():
    """The retry tells the first tree where each `;` went and parses only around them: its tree must be the one a
    parse of the terminated text from scratch gives (macros on many lines, after multi-byte characters, whose
    columns are counted in bytes)."""
    import tree_sitter
    import tree_sitter_cuda

    from gemlint.frontends.native import parse

    functions = []
    for i in range(60):
        functions.append(
            f"int f{i}(int n) {{\n"
            f'  const char* s = "{"é" * (i % 4)}";  LOG_DEBUG("n=%d", n)\n'
            f"  int x = n + {i};\n"
            f"  CHECK_OK(x)\n"
            f"  if (x) {{ TRACE(x)\n    x--; }}\n"
            f"  return x @@ 1;\n"
            f"}}\n"
        )
    source = "".join(functions)
    document = parse(None, source)
    terminated = terminate_statement_macros(source.encode())
    assert terminated != source.encode()
    fresh = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language())).parse(terminated)
    assert str(document.root) == str(fresh.root_node)
    assert document.root.has_error  # the `@@` is still there: the retry was kept for having fewer errors
