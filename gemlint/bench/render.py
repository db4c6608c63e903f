"""The ``gemlint bench`` table, and the one-line summaries quoted in the rule docs."""

from __future__ import annotations

import textwrap
from typing import Sequence

from gemlint.bench.result import Result, Status


#: The table fits a CI log or a terminal of this many columns.
TABLE_WIDTH = 120


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes":
        for scale, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if abs(value) >= scale:
                number = value / scale
                return f"{number:.3g} {name}" if abs(number) < 1000 else f"{number:.0f} {name}"
        return f"{value:.0f} B"
    if unit == "ms":
        return f"{value:.3g} ms"
    text = f"{value:.0f}" if float(value).is_integer() else f"{value:.3g}"
    return f"{text} {unit}".rstrip()


NO_DIFFERENCE = "no measurable difference"


def format_ratio(result: Result) -> str:
    if result.within_noise:
        return "within noise" if result.runs else "one run"
    if result.ratio is not None:
        return f"{result.ratio:.3g}x"
    if result.good == 0 and result.bad:
        return "good=0"
    return "-"


def render_table(results: Sequence[Result]) -> str:
    header = ("RULE", "METRIC", "BAD", "GOOD", "RATIO", "DEVICE")
    rows: list[tuple[str, ...]] = []
    notes: list[tuple[str, str]] = []
    for result in results:
        if result.status is Status.MEASURED:
            rows.append(
                (
                    result.code,
                    result.metric,
                    format_value(result.bad, result.unit),
                    format_value(result.good, result.unit),
                    format_ratio(result),
                    result.device or "-",
                )
            )
        else:
            label = "SKIPPED" if result.status is Status.SKIPPED else "ERROR"
            metric = "" if result.metric == "-" else f"{result.metric}: "
            notes.append((result.code, f"{label} {metric}{result.reason}"))
    lines = []
    if rows:
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        # Long metric names wrap inside their column so that the table fits TABLE_WIDTH columns.
        others = sum(width for i, width in enumerate(widths) if i != 1) + 2 * (len(header) - 1)
        widths[1] = max(len(header[1]), min(widths[1], TABLE_WIDTH - others))
        for row in [header, *rows]:
            metric = textwrap.wrap(row[1], widths[1], break_on_hyphens=False) or [""]
            for index, part in enumerate(metric):
                cells = [part if i == 1 else (cell if index == 0 else "") for i, cell in enumerate(row)]
                lines.append("  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip())
    if notes:
        if lines:
            lines.append("")
        for code, text in notes:
            lines += textwrap.wrap(f"{code}  {text}", TABLE_WIDTH, subsequent_indent=" " * (len(code) + 2), break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def format_range(value_range: tuple[float, float] | None, unit: str) -> str:
    """``, 7.4 to 23 ms``: the lowest and highest run (the unit once where both share it)."""
    if value_range is None:
        return ""
    if value_range[0] == value_range[1]:
        return ", every run"
    low, high = (format_value(value, unit) for value in value_range)
    low_number, _, low_unit = low.partition(" ")
    if low_unit and high.endswith(" " + low_unit):
        low = low_number
    return f", {low} to {high}"


def summary(result: Result) -> str:
    """One line for the rule docs. A count or a byte total is what it is: ``bytes held for backward: 1.2 MiB
    (bad) vs 0 B (good)``. A timing is a median of several runs, given with the lowest and highest run, and
    a ratio is claimed only when the two variants' runs do not overlap."""
    if result.deterministic:
        text = f"{result.metric}: {format_value(result.bad, result.unit)} (bad) vs {format_value(result.good, result.unit)} (good)"
        if result.ratio is not None:
            text += f", {result.ratio:.3g}x"
        return text
    if not result.runs:
        return (
            f"{result.metric}: {format_value(result.bad, result.unit)} (bad) vs {format_value(result.good, result.unit)} (good), "
            "one run each: no difference claimed"
        )
    bad = f"{format_value(result.bad, result.unit)} (bad{format_range(result.bad_range, result.unit)})"
    good = f"{format_value(result.good, result.unit)} (good{format_range(result.good_range, result.unit)})"
    text = f"{result.metric}, median of {result.runs} runs: {bad} vs {good}"
    if result.within_noise:
        return f"{text}: {NO_DIFFERENCE}"
    return text + (f", {result.ratio:.3g}x" if result.ratio is not None else "")
