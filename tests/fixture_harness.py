"""Reads fixture expectations (SPEC §11) and lints fixtures exactly as the CLI would."""

from __future__ import annotations

import re
from pathlib import Path

from gemlint.config import default_config, load_config
from gemlint.diagnostics import Diagnostic
from gemlint.discovery import SourceFile
from gemlint.engine import lint_file
from gemlint.languages import language_of
from gemlint.registry import all_rules, known_codes
from gemlint.selection import Selection

FIXTURES = Path(__file__).parent / "fixtures"
_MARKER = re.compile(r"(?:#|//|/\*)\s*expect(?P<next>-next)?:\s*(?P<codes>GEM\d{3}(?:\s*,\s*GEM\d{3})*)")


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and language_of(p) is not None)


def fixture_root(path: Path) -> Path:
    """Each top-level folder of tests/fixtures is a project root of its own."""
    return FIXTURES / path.relative_to(FIXTURES).parts[0]


def expectations(path: Path) -> set[tuple[int, str]]:
    # latin-1 never fails, so markers are found even in files that are not valid UTF-8.
    lines = path.read_bytes().decode("latin-1").replace("\r\n", "\n").split("\n")
    expected = set()
    for number, line in enumerate(lines, 1):
        for match in _MARKER.finditer(line):
            target = number + 1 if match.group("next") else number
            expected.update((target, code.strip()) for code in match.group("codes").split(","))
    return expected


def lint_fixture(path: Path) -> list[Diagnostic]:
    root = fixture_root(path)
    config_file = root / "gemlint.toml"
    config = load_config(config_file, known_codes()) if config_file.exists() else default_config(root)
    relative = path.relative_to(root).as_posix()
    source = SourceFile(path, language_of(path), relative, relative)
    diagnostics, _, _ = lint_file(source, Selection.from_config(config, all_rules()))
    return diagnostics
