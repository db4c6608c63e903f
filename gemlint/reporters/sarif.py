"""SARIF 2.1.0 for GitHub code scanning, built on sarif-om's object model.

One run per log. Every rule is described in ``tool.driver.rules`` (help text and
markdown from :mod:`gemlint.docs`); GEM000 input problems are not results but
tool execution notifications, described in ``tool.driver.notifications``.
Paths are relative to the repository root under ``uriBaseId: %SRCROOT%`` and
percent-encoded; regions are 1-based with exclusive end columns counted in code
points (``columnKind: unicodeCodePoints``). Each result carries its gemlint
fingerprint under ``partialFingerprints["gemlint/v1"]``; GitHub's own
``primaryLocationLineHash`` is left to upload-sarif, which computes it from the
checked-out sources.

A finding in a Jupyter notebook is placed in the notebook file's JSON text (the line and columns of the
cell's source string there), since that is the text code scanning shows of a ``.ipynb``; the cell and
the line in it are the result's ``properties.notebookCell``. Such a result has no ``fixes``: an edit of a
cell's code is not a replacement of the notebook's text.

sarif-om has no serializer, and the one usually paired with it
(``jschema_to_python.to_json``) drops every property equal to its schema
default. That changes meaning: a result's ``level`` of ``warning`` left out
under a rule whose default level is ``error`` reads as ``error``. :func:`to_sarif`
therefore writes every value that was set, and omits only ``None`` and the
defaults SARIF itself defines as "absent" (``-1`` indices and counts, and the
default lists).
"""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import attr
import sarif_om as om

from gemlint.version import __version__
from gemlint.diagnostics import CellSpan, Diagnostic, Edit, Fix, Severity, Span
from gemlint.docs import project_url, rule_markdown, rule_text, rule_url
from gemlint.bad_input import INTERNAL_ERROR_PREFIX
from gemlint.fingerprints import FINGERPRINT_KEY
from gemlint.registry import PARSE_ERROR_CODE
from gemlint.repository import repository_path
from gemlint.rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
#: GitHub truncates nothing but rejects more: descriptions over 1024 characters, more than 20 tags.
MAX_DESCRIPTION = 1024
MAX_TAGS = 20

_PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "recommendation"}


# -- serialization ---------------------------------------------------------------------------------


def to_sarif(value: Any) -> Any:
    """sarif-om objects to JSON-ready data with SARIF's property names; nothing that was set is lost."""
    if attr.has(type(value)):
        out: dict[str, Any] = {}
        for field in attr.fields(type(value)):
            item = getattr(value, field.name)
            if item is None or _is_absent_default(field, item):
                continue
            out[field.metadata.get("schema_property_name", field.name)] = to_sarif(item)
        return out
    if isinstance(value, Mapping):
        return {str(key): to_sarif(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_sarif(item) for item in value]
    if isinstance(value, (str, bool, int, float)):
        return value
    # A set or an enum would otherwise be written as its repr: refuse instead.
    raise TypeError(f"cannot write {type(value).__name__} into SARIF: {value!r}")


def _is_absent_default(field: attr.Attribute, value: Any) -> bool:
    default = field.default
    if isinstance(default, attr.Factory):  # schema-default lists such as newlineSequences
        return not default.takes_self and value == default.factory()
    return isinstance(default, (int, float)) and not isinstance(default, bool) and default == -1 and value == -1


# -- building the log -------------------------------------------------------------------------------


def _text(text: str, limit: int | None = None) -> om.MultiformatMessageString:
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return om.MultiformatMessageString(text=text)


def _descriptor(rule: type[Rule]) -> om.ReportingDescriptor:
    properties: dict[str, Any] = {
        # A preview rule says so where code scanning shows tags, and is off in its default configuration.
        "tags": list(dict.fromkeys((*rule.tags, "preview") if rule.preview else rule.tags))[:MAX_TAGS],
        "precision": rule.reported_precision(),
        "problem.severity": _PROBLEM_SEVERITY[rule.severity],
    }
    if rule.fix is not None:
        properties["fix"] = rule.fix.value
    return om.ReportingDescriptor(
        id=rule.code,
        name=rule.name,
        short_description=_text(rule.summary, MAX_DESCRIPTION),
        full_description=_text(rule.rationale, MAX_DESCRIPTION),
        help=om.MultiformatMessageString(text=rule_text(rule), markdown=rule_markdown(rule)),
        help_uri=rule_url(rule),
        default_configuration=om.ReportingConfiguration(level=rule.severity.value, enabled=not rule.preview),
        properties=properties,
    )


class _Locations:
    """Artifact locations relative to the repository root (absolute ``file:`` URIs outside it)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def artifact(self, path: str) -> om.ArtifactLocation:
        relative = repository_path(path, self.root)
        if relative is None:
            return om.ArtifactLocation(uri=Path(os.path.abspath(path)).as_uri())
        return om.ArtifactLocation(uri=urllib.parse.quote(relative, safe="/"), uri_base_id=SRCROOT)

    def physical(self, path: str, line: int, column: int, end_line: int, end_column: int) -> om.PhysicalLocation:
        return om.PhysicalLocation(artifact_location=self.artifact(path), region=_region(line, column, end_line, end_column))

    def of_diagnostic(self, d: Diagnostic) -> om.Location:
        return om.Location(physical_location=self._placed(d.path, d, d.cell))

    def of_span(self, span: Span, message: str, index: int, cell: CellSpan | None = None) -> om.Location:
        return om.Location(id=index, physical_location=self._placed(span.path, span, cell), message=om.Message(text=message))

    def _placed(self, path: str, at: Diagnostic | Span, cell: CellSpan | None) -> om.PhysicalLocation:
        """``at``'s region, or in a notebook the region of its cell span in the notebook's JSON text."""
        if cell is not None:
            return self.physical(path, cell.file_line, cell.file_column, cell.file_end_line, cell.file_end_column)
        return self.physical(path, at.line, at.column, at.end_line, at.end_column)

    def fix(self, path: str, fix: Fix) -> om.Fix:
        return om.Fix(
            description=om.Message(text=fix.message),
            artifact_changes=[
                om.ArtifactChange(artifact_location=self.artifact(path), replacements=[_replacement(edit) for edit in fix.edits])
            ],
            properties={"applicability": fix.applicability.value},
        )


def _region(line: int, column: int, end_line: int, end_column: int) -> om.Region:
    line, column = max(line, 1), max(column, 1)
    end_line = max(end_line, line)
    end_column = max(end_column, 1) if end_line > line else max(end_column, column)
    return om.Region(start_line=line, start_column=column, end_line=end_line, end_column=end_column)


def _replacement(edit: Edit) -> om.Replacement:
    return om.Replacement(
        deleted_region=_region(edit.start.line, edit.start.column, edit.end.line, edit.end.column),
        inserted_content=om.ArtifactContent(text=edit.content),
    )


def _escape_message(text: str) -> str:
    """SARIF message text treats ``[text](n)`` as a link; escape brackets written by gemlint itself."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _result(d: Diagnostic, rule_index: int, fingerprint: str | None, locations: _Locations) -> om.Result:
    message = d.message
    related = [locations.of_span(item.span, item.message, index, item.cell) for index, item in enumerate(d.related, 1)]
    if related:
        # GitHub links a related location only where the message refers to it by id.
        links = ", ".join(f"[{_escape_message(item.message)}]({index})" for index, item in enumerate(d.related, 1))
        message = f"{_escape_message(message)} (see {links})"
    return om.Result(
        rule_id=d.code,
        rule_index=rule_index,
        level=d.severity.value,
        kind="fail",
        message=om.Message(text=message),
        locations=[locations.of_diagnostic(d)],
        related_locations=related or None,
        partial_fingerprints={FINGERPRINT_KEY: fingerprint} if fingerprint else None,
        fixes=[locations.fix(d.path, d.fix)] if d.fix and d.cell is None else None,
        properties=_result_properties(d) or None,
    )


def _result_properties(d: Diagnostic) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    if d.precision:  # a finding below its rule's tier says so (code scanning's precision filter reads the rule's)
        properties["precision"] = d.precision
    if d.cell is not None:
        cell = d.cell
        properties["notebookCell"] = {
            "cell": cell.cell, "startLine": cell.line, "startColumn": cell.column, "endLine": cell.end_line, "endColumn": cell.end_column
        }
    return properties


def _notification(d: Diagnostic, fingerprint: str | None, locations: _Locations) -> om.Notification:
    return om.Notification(
        descriptor=om.ReportingDescriptorReference(id=d.code, index=0),
        level=d.severity.value,
        message=om.Message(text=d.message),
        locations=[locations.of_diagnostic(d)],
        properties={FINGERPRINT_KEY: fingerprint} if fingerprint else None,
    )


def build_log(
    diagnostics: Iterable[Diagnostic],
    *,
    rules: Sequence[type[Rule]],
    root: Path,
    fingerprints: Mapping[Diagnostic, str] | None = None,
    category: str | None = None,
    unchecked: Sequence[str] = (),
) -> om.SarifLog:
    """The SARIF log of one gemlint run. ``rules`` are every rule gemlint has (GEM000 included); ``unchecked``
    (what the run found and did not check) become warning notifications of the invocation."""
    fingerprints = fingerprints or {}
    locations = _Locations(root)
    result_rules = [rule for rule in rules if rule.code != PARSE_ERROR_CODE]
    notification_rules = [rule for rule in rules if rule.code == PARSE_ERROR_CODE]
    index = {rule.code: position for position, rule in enumerate(result_rules)}
    results: list[om.Result] = []
    notifications: list[om.Notification] = []
    for d in diagnostics:
        if d.code == PARSE_ERROR_CODE or d.code not in index:
            notifications.append(_notification(d, fingerprints.get(d), locations))
        else:
            results.append(_result(d, index[d.code], fingerprints.get(d), locations))
    notifications.extend(om.Notification(level="warning", message=om.Message(text=notice)) for notice in unchecked)
    driver = om.ToolComponent(
        name="gemlint",
        semantic_version=__version__,
        version=__version__,
        information_uri=project_url(),
        rules=[_descriptor(rule) for rule in result_rules],
        notifications=[_descriptor(rule) for rule in notification_rules] or None,
    )
    invocation = om.Invocation(
        execution_successful=not any(n.message.text.startswith(INTERNAL_ERROR_PREFIX) for n in notifications),
        tool_execution_notifications=notifications,
    )
    run = om.Run(
        tool=om.Tool(driver=driver),
        invocations=[invocation],
        results=results,
        column_kind="unicodeCodePoints",
        original_uri_base_ids={SRCROOT: om.ArtifactLocation(uri=Path(os.path.abspath(root)).as_uri().rstrip("/") + "/")},
        automation_details=om.RunAutomationDetails(id=automation_id(category)) if category else None,
    )
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def automation_id(category: str) -> str:
    """GitHub reads ``automationDetails.id`` as ``category/run-id``. As upload-sarif does with its
    ``category`` input, a trailing slash makes the whole name the category."""
    category = category.strip()
    return category if category.endswith("/") else category + "/"


def render_sarif(
    diagnostics: Iterable[Diagnostic],
    *,
    rules: Sequence[type[Rule]],
    root: Path,
    fingerprints: Mapping[Diagnostic, str] | None = None,
    category: str | None = None,
    unchecked: Sequence[str] = (),
) -> str:
    data = to_sarif(build_log(diagnostics, rules=rules, root=root, fingerprints=fingerprints, category=category, unchecked=unchecked))
    ordered = {key: data.pop(key) for key in ("$schema", "version")} | data  # the header first, for readers
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"
