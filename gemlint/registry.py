"""Discovers the rule classes in :mod:`gemlint.rules`."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

import gemlint.rules
from gemlint.languages import Language
from gemlint.rule import Rule

PARSE_ERROR_CODE = "GEM000"


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule, sorted by code; GEM000 included."""
    found: dict[str, type[Rule]] = {}
    for module_info in pkgutil.iter_modules(gemlint.rules.__path__):
        module = importlib.import_module(f"gemlint.rules.{module_info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value.__module__ == module.__name__
                and "code" in vars(value)
            ):
                if value.code in found:
                    raise RuntimeError(f"duplicate rule code {value.code}: {found[value.code]} and {value}")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in all_rules() if rule.code == code.upper()), None)


def rule_by_name(name: str) -> type[Rule] | None:
    """The rule named ``name`` (``static-max-length-padding``; underscores and case do not matter)."""
    wanted = name.strip().lower().replace("_", "-")
    return next((rule for rule in all_rules() if rule.name == wanted), None)


def known_codes() -> frozenset[str]:
    return frozenset(rule.code for rule in all_rules())


def python_markers(rule: type[Rule]) -> tuple[tuple[str, ...], ...]:
    """The text markers a Python file needs for ``rule`` to match, as groups (see ``Rule.may_match``)."""
    groups = getattr(rule, "markers", {}).get(Language.PYTHON)
    if groups is not None:
        return tuple(tuple(group) for group in groups)
    return (tuple(rule.prefilter),) if rule.prefilter else ()


def triage_table_source() -> str:
    """The text of :mod:`gemlint.rules.triage_table`, from the rules' metadata."""
    from gemlint.rule import PythonRule

    lines = [
        '"""Every rule\'s code and each Python rule\'s triage, as data: the flake8 plugin rules a file out with it',
        "without importing LibCST or any rule. Generated from the rules' metadata; do not edit. Regenerate with",
        "``python -c \"from gemlint.registry import triage_table_source as t; print(t(), end='')\" > gemlint/rules/triage_table.py``",
        '(tests/test_triage.py checks that it is current)."""',
        "",
        "from gemlint.analysis.triage import (",
        *(f"    {name}," for name in ("AllOf", "AnyOf", "CallsProjectLoader", "DefinesFunctions", "Imports", "InferenceContext", "RuleTriage", "Spelled", "WritesEnvironment")),
        ")",
        "",
        f"KNOWN_CODES = frozenset({sorted(known_codes())!r})",
        "",
        "PYTHON_RULES = (",
    ]
    for rule in all_rules():
        if Language.PYTHON not in rule.languages or rule.code == PARSE_ERROR_CODE:
            continue
        if not issubclass(rule, PythonRule) or "may_match_syntax" in vars(rule):
            raise RuntimeError(f"{rule.code}: state the syntax triage as a syntax_gate, not by overriding may_match_syntax")
        if "may_match" in vars(rule):
            raise RuntimeError(f"{rule.code}: state the text markers as prefilter or markers, not by overriding may_match")
        lines.append(f"    RuleTriage({rule.code!r}, {rule.preview!r}, {python_markers(rule)!r}, {rule.syntax_gate!r}),")
    lines += [")", ""]
    return "\n".join(lines)


def parse_error_rule() -> type[Rule]:
    rule = rule_by_code(PARSE_ERROR_CODE)
    assert rule is not None
    return rule
