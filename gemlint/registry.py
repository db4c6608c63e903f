"""Discovers the rule classes in :mod:`gemlint.rules`."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

import gemlint.rules
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


def parse_error_rule() -> type[Rule]:
    rule = rule_by_code(PARSE_ERROR_CODE)
    assert rule is not None
    return rule
