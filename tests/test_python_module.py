"""LibCST's parse, with what its native parser frees handed back to the system after a large module."""

from __future__ import annotations

import subprocess
import sys

import libcst
import pytest

from gemlint.frontends import python_module
from gemlint.frontends.python_module import LARGE_MODULE, parse_module

LARGE = "".join(f"def f{n}(x, y=1):\n    return [x + y * {n} for _ in range(3)]\n\n\n" for n in range(LARGE_MODULE // 40))


def test_only_a_large_module_is_followed_by_a_trim(monkeypatch):
    trims: list[int] = []
    monkeypatch.setattr(python_module, "release_freed_heap", lambda: trims.append(1))
    assert parse_module("x = 1\n").code == "x = 1\n"
    assert trims == []
    assert len(LARGE) >= LARGE_MODULE
    assert parse_module(LARGE).code == LARGE
    assert trims == [1]
    with pytest.raises(libcst.ParserSyntaxError):
        parse_module(LARGE + "def (:\n")
    assert trims == [1, 1]  # a parse that fails frees what it built too


# What the process holds after the parse, with the module's tree alive, in a fresh interpreter.
_RESIDENT = """
import os, sys
import libcst
from gemlint.frontends import python_module
text = "".join(f"def f{n}(x, y=1):\\n    return [x + y * {n} for _ in range(3)]\\n\\n\\n" for n in range(2500))
module = (python_module.parse_module if sys.argv[1] == "trim" else libcst.parse_module)(text)
print(int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
"""


@pytest.mark.skipif(python_module._malloc_trim() is None, reason="the C library has no malloc_trim")
def test_the_trim_hands_back_what_the_parser_freed():
    def resident(how: str) -> int:
        done = subprocess.run([sys.executable, "-c", _RESIDENT, how], capture_output=True, text=True, check=True)
        return int(done.stdout)

    kept, trimmed = resident("keep"), resident("trim")
    assert kept - trimmed > 20 * 2**20, (kept, trimmed)


def test_the_tree_is_libcsts_node_for_node_on_every_fixture():
    from fixture_harness import parsable_python_fixtures

    sources = list(parsable_python_fixtures())
    assert len(sources) > 50
    for source in sources:
        assert parse_module(source).deep_equals(libcst.parse_module(source))


def test_nodes_built_outside_the_parse_are_still_checked():
    parse_module("x = 1\n")
    with pytest.raises(libcst.CSTValidationError):
        libcst.SimpleWhitespace("not whitespace")
    assert libcst.CSTNode.__post_init__ is python_module._LIBCST_POST_INIT


def test_a_node_another_thread_builds_during_a_parse_is_checked(monkeypatch):
    import threading

    outcome = []
    started, resume = threading.Event(), threading.Event()
    real_parse = libcst.parse_module

    def slow_parse(text):
        started.set()
        resume.wait(5)
        return real_parse(text)

    monkeypatch.setattr(python_module.cst, "parse_module", slow_parse)
    parser = threading.Thread(target=parse_module, args=("y = 2\n",))
    parser.start()
    started.wait(5)
    try:
        libcst.SimpleWhitespace("not whitespace")
        outcome.append("unchecked")
    except libcst.CSTValidationError:
        outcome.append("checked")
    resume.set()
    parser.join(5)
    assert outcome == ["checked"]


def test_a_failed_parse_puts_the_check_back():
    with pytest.raises(libcst.ParserSyntaxError):
        parse_module("def broken(:\n")
    assert libcst.CSTNode.__post_init__ is python_module._LIBCST_POST_INIT


def test_the_nodes_the_parser_builds_skip_the_check(monkeypatch):
    checked = []
    real = libcst.Name._validate
    monkeypatch.setattr(libcst.Name, "_validate", lambda node: checked.append(node) or real(node))
    source = "def f(a, b):\n    return a + b\n"
    parse_module(source)
    assert checked == []
    libcst.parse_module(source)
    assert len(checked) == 5
