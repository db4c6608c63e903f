"""`# noqa` semantics, identical to flake8's, and file-level `gemlint: noqa`."""

from __future__ import annotations

import pytest

from gemlint.api import lint_source
from gemlint.languages import Language
from gemlint.suppression import Suppressions

LINE = 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"'


def codes(source: str) -> list[str]:
    return [d.code for d in lint_source("import os\n" + source, "app.py")]


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("# noqa", True),
        ("# NOQA", True),
        ("# noqa: GEM404", True),
        ("# noqa:GEM404", True),
        ("# noqa: GEM4", True),  # prefixes, as flake8
        ("# noqa: E501,GEM404", True),
        ("# noqa: E501 GEM404", True),
        ("# noqa: GEM402", False),
        ("# noqa: E501", False),
        ("#noqa", False),  # flake8 needs the space
        ("# expect nothing", False),
    ],
)
def test_inline_noqa(comment, suppressed):
    assert codes(f"{LINE}  {comment}\n") == ([] if suppressed else ["GEM404"])


def test_noqa_in_a_multiline_string_covers_its_lines_as_in_flake8():
    text = 'x = """\nfirst\nsecond  # noqa: GEM404\n"""\n'
    suppressions = Suppressions(text, Language.PYTHON)
    assert suppressions.is_suppressed("GEM404", 1) and suppressions.is_suppressed("GEM404", 4)
    assert not Suppressions("a = 1\nb = 2  # noqa\n", Language.PYTHON).is_suppressed("GEM404", 1)


def test_file_level_noqa():
    assert codes(f"# gemlint: noqa\n{LINE}\n") == []
    assert codes(f"# gemlint: noqa: GEM4\n{LINE}\n") == []
    assert codes(f"# gemlint: noqa: GEM2\n{LINE}\n") == ["GEM404"]
    # Only as a comment of its own, not inside code.
    assert codes(f'{LINE}\nx = "# gemlint: noqa"\n') == ["GEM404"]


def test_native_comment_syntax_is_shared():
    text = "cudaMalloc(&p, n); // noqa: GEM301\ncudaMalloc(&q, n); /* noqa: GEM3 */\ncudaMalloc(&r, n); // noqa: GEM302\n"
    suppressions = Suppressions(text, Language.NATIVE)
    assert [suppressions.is_suppressed("GEM301", line) for line in (1, 2, 3)] == [True, True, False]
    assert Suppressions("// gemlint: noqa: GEM30\n", Language.NATIVE).is_suppressed("GEM301", 5)


def test_yaml_uses_hash_comments():
    suppressions = Suppressions("livenessProbe:  # noqa: GEM601\n", Language.YAML)
    assert suppressions.is_suppressed("GEM601", 1)
