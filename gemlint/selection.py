"""Which rules run on which file: select / ignore / extend-select / per-file-ignores, and severity overrides."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

import pathspec

from gemlint.config import Config
from gemlint.diagnostics import Severity
from gemlint.languages import Language, checks_language
from gemlint.text import contains_marker_groups

if TYPE_CHECKING:  # a selection holds rule classes, or entries of the rules' table that stand for them
    from gemlint.rule import Rule
    from gemlint.text import ScannedText


@dataclass(frozen=True)
class RuleEntry:
    """What selecting a rule and keying its cached findings need to know of it, as data
    (:data:`gemlint.rules.rule_table.RULES`): a run whose files all come from the cache never imports
    the rules, nor LibCST under them."""

    code: str
    name: str
    preview: bool
    languages: frozenset[Language]
    notebooks: bool
    cross_file: bool
    sees_project: tuple[str, ...]
    reads_routes: bool
    #: For each language the rule reads, its text markers as groups (:meth:`Rule.marker_groups`): the engine
    #: rules a file out with them before it imports the rule.
    markers: tuple[tuple[Language, tuple[tuple[str, ...], ...]], ...] = ()

    def reads(self, language: Language) -> bool:
        return checks_language(self.languages, self.notebooks, language)

    def may_match(self, text: "str | ScannedText", language: Language) -> bool:
        """Whether a file in ``language`` with ``text`` may hold a finding (as the rule's ``may_match`` says)."""
        groups = next((groups for named, groups in self.markers if named is language), ())
        return contains_marker_groups(text, groups)


def _longest_prefix(code: str, prefixes: Iterable[str]) -> int:
    return max((len(prefix) for prefix in prefixes if code.startswith(prefix)), default=-1)


@dataclass(frozen=True)
class Selection:
    """Rule selection resolved from a :class:`Config`.

    As in ruff, the most specific prefix wins: ``select = ["GEM"]`` with
    ``ignore = ["GEM4"]`` and ``extend-select = ["GEM401"]`` enables GEM401 and
    no other GEM4xx rule; on a tie, ignore wins. A preview rule is selected only
    in preview mode or by its exact code.
    """

    rules: tuple[type[Rule] | RuleEntry, ...]
    config: Config

    @classmethod
    def from_config(cls, config: Config, all_rules: Iterable[type[Rule] | RuleEntry]) -> "Selection":
        chosen = tuple(rule for rule in all_rules if _enabled(rule, config))
        return cls(chosen, config)

    def rules_for(self, relative_path: str) -> tuple[type[Rule] | RuleEntry, ...]:
        """The selected rules minus the per-file ignores matching ``relative_path`` (posix, root-relative)."""
        ignored = self._ignored_for(relative_path)
        if not ignored:
            return self.rules
        return tuple(rule for rule in self.rules if not rule.code.startswith(ignored))

    def _ignored_for(self, relative_path: str) -> tuple[str, ...]:
        codes: list[str] = []
        for spec, pattern_codes in _per_file_specs(self.config.per_file_ignores):
            if spec.match_file(relative_path):
                codes.extend(pattern_codes)
        return tuple(codes)

    def severity_of(self, rule: type[Rule] | RuleEntry, reported: Severity) -> Severity:
        """A configured override wins over both the default and a severity the rule chose."""
        best, level = -1, None
        for prefix, override in self.config.severity:
            if rule.code.startswith(prefix) and len(prefix) > best:
                best, level = len(prefix), override
        return level or reported


def _enabled(rule: type[Rule] | RuleEntry, config: Config) -> bool:
    code = rule.code
    selected = max(_longest_prefix(code, config.select), _longest_prefix(code, config.extend_select))
    ignored = _longest_prefix(code, config.ignore)
    if rule.preview and not config.preview and selected != len(code):
        return False  # a preview rule runs with preview mode on, or when its exact code is selected
    return selected >= 0 and selected > ignored


@lru_cache(maxsize=64)
def _per_file_specs(table: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[tuple[pathspec.PathSpec, tuple[str, ...]], ...]:
    return tuple((pathspec.PathSpec.from_lines("gitignore", [pattern]), codes) for pattern, codes in table)
