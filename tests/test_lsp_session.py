"""The language server's protocol-free parts: where a suppression goes, and the editor's settings."""

from __future__ import annotations

import pytest

from gemlint.config import ConfigError
from gemlint.languages import Language
from gemlint.server.session import Settings, suppression
from gemlint.suppression import Suppressions


def suppressed(text: str, language: Language, line: int, code: str) -> str:
    where = suppression(text, language, line, code)
    lines = text.splitlines(keepends=True)
    target = lines[where.line - 1]
    lines[where.line - 1] = target[: where.column - 1] + where.text + target[where.column - 1 :]
    result = "".join(lines)
    assert Suppressions(result, language).is_suppressed(code, line), result
    return result


def test_python_comment_goes_at_the_end_of_the_logical_line_never_inside_a_string():
    text = 'x = f(\n    """a\n    b""",\n)\ny = 1\n'
    # flake8 reads a noqa anywhere on the lines up to the token group's end: after the string closes.
    assert suppressed(text, Language.PYTHON, 2, "GEM201") == 'x = f(\n    """a\n    b""",  # noqa: GEM201\n)\ny = 1\n'


def test_an_existing_noqa_list_gets_the_code_added():
    text = "model(x)  # noqa: GEM102\n"
    assert suppressed(text, Language.PYTHON, 1, "GEM101") == "model(x)  # noqa: GEM102, GEM101\n"
    assert Suppressions("model(x)  # noqa: GEM102, GEM101\n", Language.PYTHON).is_suppressed("GEM102", 1)


def test_a_trailing_comment_stays_and_the_noqa_follows_it():
    assert suppressed("model(x)  # why\n", Language.PYTHON, 1, "GEM101") == "model(x)  # why  # noqa: GEM101\n"


def test_native_and_yaml_comment_forms():
    assert suppressed("  cudaMalloc(&p, 16);\n", Language.NATIVE, 1, "GEM301") == "  cudaMalloc(&p, 16);  // noqa: GEM301\n"
    assert suppressed("  path: /healthz\n", Language.YAML, 1, "GEM601") == "  path: /healthz  # noqa: GEM601\n"


def test_dockerfile_noqa_is_a_comment_line_above_or_joins_the_one_there():
    text = "FROM x\n  ENV CUDA_LAUNCH_BLOCKING=1\n"
    assert suppressed(text, Language.DOCKERFILE, 2, "GEM404") == "FROM x\n  # noqa: GEM404\n  ENV CUDA_LAUNCH_BLOCKING=1\n"
    text = "FROM x\n# noqa: GEM403\nENV CUDA_LAUNCH_BLOCKING=1\n"
    assert suppressed(text, Language.DOCKERFILE, 3, "GEM404") == "FROM x\n# noqa: GEM403, GEM404\nENV CUDA_LAUNCH_BLOCKING=1\n"


def test_settings_are_validated_with_the_key_named():
    settings = Settings.from_json({"select": ["gem1"], "ignore": "GEM102", "unsafeFixes": True, "configPath": "~/g.toml"})
    assert settings.select == ("GEM1",) and settings.ignore == ("GEM102",) and settings.unsafe_fixes
    assert settings.config_path is not None and "~" not in str(settings.config_path)
    with pytest.raises(ConfigError, match="unknown key 'selct'"):
        Settings.from_json({"selct": ["GEM1"]})
    with pytest.raises(ConfigError, match="'preview' must be true or false"):
        Settings.from_json({"preview": "yes"})
    with pytest.raises(ConfigError, match="GEM999"):
        Settings.from_json({"select": ["GEM999"]})
