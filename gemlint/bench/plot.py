"""The chart of ``gemlint bench`` results (``gemlint bench --plot FILE``): bad against good for every pair.

Pairs measure different things (bytes, milliseconds, tokens, requests per second), so there is no shared
axis: every metric gets a small panel of its own, with its unit on the axis, and the panels of one rule sit
in one row titled by the rule. A bar is a variant's median; for a timing, the whisker spans its lowest to
its highest run. Metrics and pairs that were skipped or failed are shown as such, never dropped.

matplotlib comes with the ``bench`` extra and is imported only when a chart is drawn, so a plain install
of gemlint never loads it.
"""

from __future__ import annotations

import importlib
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Iterable, Sequence

from gemlint.bench.render import format_ratio, format_value
from gemlint.bench.result import Result, Status

#: Chart formats, by file suffix.
FORMATS = {".svg": "svg", ".png": "png"}
EXTRA_HINT = "pip install -e '.[bench]' in a checkout of gemlint, or pip install matplotlib"

# Okabe-Ito orange and blue: told apart by every common form of colour blindness, and in grey print.
BAD_COLOUR = "#D55E00"
GOOD_COLOUR = "#0072B2"
MUTED = "#555555"

PANEL_WIDTH_IN = 3.4
PANEL_HEIGHT_IN = 1.05
TITLE_LINE_IN = 0.15
ROW_TITLE_IN = 0.3
FOOTER_LINE_IN = 0.17
HEADER_LINE_IN = 0.21
#: Decimals of a figure fraction kept in the layout: a few thousandths of a point even on a chart a metre
#: tall, and far above the solver's noise (see :func:`freeze_layout`).
LAYOUT_DIGITS = 6
#: A PNG sharp enough to read the 7-point axis numbers (SVG output does not depend on it).
PNG_DPI = 150
#: Characters per line of a panel title: a long metric wraps instead of widening its panel.
TITLE_WRAP = 42
NOTE_WRAP = 42
#: Room right of the longest bar for the ratio written in the panel's corner.
HEADROOM = 1.5

#: Fixed settings, on top of matplotlib's defaults rather than the user's matplotlibrc, so that the same
#: results draw the same chart on every machine: SVG text stays text (searchable, and the tests read
#: it) in the font matplotlib ships, and the SVG's ids come from a fixed salt instead of a random one.
STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "svg.hashsalt": "gemlint-bench",
    "svg.id": "gemlint-bench",
}


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed: the message says how to install it."""


def chart_format(path: Path) -> str:
    """The format ``path`` asks for by its suffix; ValueError for a suffix that is not a chart format."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"a chart is written as {' or '.join(FORMATS)}, not {path.suffix or 'a file without a suffix'!r}: {path}")
    return fmt


def require_matplotlib() -> ModuleType:
    """matplotlib, or PlotUnavailable naming the extra that brings it. Called before a benchmark run, so a
    missing library is reported before minutes of measuring rather than after."""
    try:
        return importlib.import_module("matplotlib")
    except ImportError:
        raise PlotUnavailable(f"--plot needs matplotlib, which comes with the bench extra: {EXTRA_HINT}") from None


@dataclass
class PairRow:
    """One row of the chart: a rule's metrics on one device, those measured and those that were not."""

    code: str
    device: str | None
    measured: list[Result] = field(default_factory=list)
    missing: list[Result] = field(default_factory=list)

    @property
    def panels(self) -> list[Result]:
        return self.measured + self.missing


def pair_rows(results: Iterable[Result]) -> tuple[list[PairRow], list[PairRow]]:
    """The rows to draw (pairs with at least one measured metric, in the order of the results) and the pairs
    with none, which the chart lists in its caption instead of drawing empty rows."""
    rows: dict[tuple[str, str | None], PairRow] = {}
    for result in results:
        row = rows.setdefault((result.code, result.device), PairRow(result.code, result.device))
        (row.measured if result.status is Status.MEASURED else row.missing).append(result)
    drawn = [row for row in rows.values() if row.measured]
    return drawn, [row for row in rows.values() if not row.measured]


def pair_title(code: str) -> str:
    """``GEM201 static-max-length-padding``: the rule's code and name, as the pair's package names it."""
    from gemlint.registry import rule_by_code

    rule = rule_by_code(code)
    return f"{code} {rule.name}" if rule is not None else code


def panel_id(row: PairRow, index: int) -> str:
    """The SVG id of a panel's group, so that a reader (and the tests) can find each metric's panel."""
    return f"panel-{row.code}-{row.device or 'none'}-{index}"


def axis_scale(unit: str, values: Sequence[float]) -> tuple[float, str]:
    """The divisor and axis unit for ``values``: bytes read better as KiB/MiB/GiB on the axis."""
    if unit == "bytes":
        largest = max((abs(value) for value in values), default=0.0)
        for scale, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if largest >= scale:
                return float(scale), name
    return 1.0, unit or "no unit"


def tick_label(value: float, _position: object = None) -> str:
    """Axis numbers without matplotlib's scientific offset, which a small panel places badly."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if abs(value) >= scale:
            return f"{value / (scale if suffix != 'k' else 1e3):g}{suffix}"
    return f"{value:g}"


def ratio_note(result: Result) -> str:
    """The ratio in a panel's corner, worded as in the table (within noise, good=0, 5.2x)."""
    text = format_ratio(result)
    return "" if text == "-" else (f"bad/good {text}" if text.endswith("x") else text)


def drawable(result: Result) -> bool:
    """A measured result with finite numbers: NaN or infinity has no bar (the panel says so instead)."""
    numbers = [result.bad or 0.0, result.good or 0.0, *(result.bad_range or ()), *(result.good_range or ())]
    return result.status is Status.MEASURED and all(math.isfinite(number) for number in numbers)


def draw_measured(ax, result: Result) -> None:
    """Two bars, bad over good, at the medians; whiskers from the lowest to the highest run of a timing."""
    from matplotlib import ticker

    values = [result.bad or 0.0, result.good or 0.0]
    ranges = [result.bad_range, result.good_range]
    spans = [value_range or (value, value) for value, value_range in zip(values, ranges)]
    scale, axis_unit = axis_scale(result.unit, [end for span in spans for end in span])
    positions = [1, 0]
    xerr = None
    if all(value_range is not None for value_range in ranges):
        xerr = [[(value - low) / scale for value, (low, _) in zip(values, spans)], [(high - value) / scale for value, (_, high) in zip(values, spans)]]
    ax.barh(positions, [value / scale for value in values], height=0.6, color=[BAD_COLOUR, GOOD_COLOUR], xerr=xerr, error_kw={"capsize": 3, "elinewidth": 1, "ecolor": "black"})
    ax.set_yticks(positions, [f"bad  {format_value(values[0], result.unit)}", f"good  {format_value(values[1], result.unit)}"])
    for label, colour in zip(ax.get_yticklabels(), (BAD_COLOUR, GOOD_COLOUR)):
        label.set_color(colour)
    low = min(0.0, *(span[0] / scale for span in spans))
    high = max(span[1] / scale for span in spans)
    # A pair whose variants both measure 0 still gets an axis to draw on.
    ax.set_xlim(low, high * HEADROOM if high > 0 else 1.0)
    ax.set_ylim(-0.6, 1.7)
    ax.set_xlabel(axis_unit)
    ax.xaxis.set_major_locator(ticker.MaxNLocator(4))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(tick_label))
    note = ratio_note(result)
    if note:
        ax.text(0.99, 0.98, note, transform=ax.transAxes, ha="right", va="top", color=MUTED)


def missing_note(result: Result) -> str:
    if result.status is Status.MEASURED:
        return f"measured, but not a finite number: {format_value(result.bad, result.unit)} (bad) vs {format_value(result.good, result.unit)} (good)"
    label = "skipped" if result.status is Status.SKIPPED else "error"
    return f"{label}: {result.reason or 'no reason given'}"


def draw_missing(ax, result: Result) -> None:
    """A metric without bars keeps its place in the row and says why."""
    ax.set_axis_off()
    colour = MUTED if result.status is Status.SKIPPED else BAD_COLOUR
    ax.text(0.0, 0.9, textwrap.fill(missing_note(result), NOTE_WRAP), transform=ax.transAxes, ha="left", va="top", color=colour, style="italic")


def wrapped_title(result: Result) -> str:
    return textwrap.fill("(whole pair)" if result.metric == "-" else result.metric, TITLE_WRAP, break_on_hyphens=False)


def row_height(row: PairRow) -> float:
    lines = max(wrapped_title(result).count("\n") + 1 for result in row.panels)
    return ROW_TITLE_IN + lines * TITLE_LINE_IN + PANEL_HEIGHT_IN


def draw_row(subfigure, row: PairRow, columns: int, title: str) -> None:
    subfigure.suptitle(title, x=0.005, ha="left", fontweight="bold", fontsize=9)
    axes = subfigure.subplots(1, columns, squeeze=False)[0]
    for index, ax in enumerate(axes):
        if index >= len(row.panels):
            ax.set_visible(False)
            continue
        result = row.panels[index]
        ax.set_gid(panel_id(row, index))
        ax.set_title(wrapped_title(result), loc="left")
        if drawable(result):
            draw_measured(ax, result)
        else:
            draw_missing(ax, result)


def footer_lines(unmeasured: Sequence[PairRow]) -> list[tuple[str, bool]]:
    """The key to the chart, then one line per pair that measured nothing (its title and why), each with
    whether it is a heading."""
    lines = [
        ("How to read it", True),
        ("Bars: the medians of the bad and the good variant. Whiskers: the lowest to the highest run of a timing; counts and "
         "bytes that do not vary have none. Ratio: bad / good, 'within noise' where the runs of the two variants overlap.", False),
    ]
    if unmeasured:
        lines.append(("Not measured", True))
    for row in unmeasured:
        reasons = "; ".join(dict.fromkeys(f"{'skipped' if r.status is Status.SKIPPED else 'error'}: {r.reason}" for r in row.missing))
        device = f" ({row.device})" if row.device else ""
        lines.append((f"{pair_title(row.code)}{device}: {reasons}", False))
    return lines


def chart_title(results: Sequence[Result], rows: Sequence[PairRow], unmeasured: Sequence[PairRow]) -> str:
    devices = sorted({result.device for result in results if result.device})
    where = f" on {', '.join(devices)}" if devices else ""
    counts = f"{len(rows)} measured" + (f", {len(unmeasured)} not" if unmeasured else "")
    return f"gemlint bench{where}: the bad and the good variant of each rule's pair ({counts})"


def wrap_lines(lines: Sequence[tuple[str, bool]], width: int) -> list[tuple[str, bool]]:
    """Lines no wider than the figure: one Text per line, so each stays a line of its own in the SVG."""
    return [(part, heading) for text, heading in lines for part in textwrap.wrap(text, width, break_on_hyphens=False)]


def draw_lines(subfigure, lines: Sequence[tuple[str, bool]], line_in: float, height_in: float, size: int = 8) -> None:
    """Text lines from the top of a text-only part of the chart, ``line_in`` inches apart (placed by hand:
    the constrained layout arranges axes, not free text)."""
    for index, (line, heading) in enumerate(lines):
        subfigure.text(0.005, 1 - (0.05 + index * line_in) / height_in, line, ha="left", va="top", fontsize=size, color="black" if heading else MUTED, fontweight="bold" if heading else "normal")


def build_figure(results: Sequence[Result]):
    """The whole chart as a matplotlib Figure, drawn without pyplot (no global state, no GUI backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows, unmeasured = pair_rows(results)
    devices = {row.device for row in rows}
    columns = max((len(row.panels) for row in rows), default=1)
    width = PANEL_WIDTH_IN * columns
    # About this many characters of bold 10-point and of 8-point text fit across the figure.
    header = [(line, True) for line in textwrap.wrap(chart_title(results, rows, unmeasured), int(width * 10))]
    footer = wrap_lines(footer_lines(unmeasured), int(width * 14))
    heights = [0.1 + HEADER_LINE_IN * len(header), *(row_height(row) for row in rows), 0.1 + FOOTER_LINE_IN * len(footer)]
    figure = Figure(figsize=(width, sum(heights)), layout="constrained")
    FigureCanvasAgg(figure)  # PNG through Agg; savefig switches to the SVG canvas for .svg on its own
    parts = figure.subfigures(len(heights), 1, height_ratios=heights, squeeze=False)[:, 0]
    draw_lines(parts[0], header, HEADER_LINE_IN, heights[0], size=10)
    for subfigure, row in zip(parts[1:], rows):
        device = f" ({row.device})" if len(devices) > 1 and row.device else ""
        draw_row(subfigure, row, columns, pair_title(row.code) + device)
    draw_lines(parts[-1], footer, FOOTER_LINE_IN, heights[-1])
    return figure


def freeze_layout(figure) -> None:
    """Lay the chart out once, then round every position and switch the layout engine off. The constrained
    layout's solver lands on positions that differ in their 13th digit from one run to the next, and the
    SVG backend names each clip path by a hash of its rectangle: unrounded, the same results would write
    different ids on every run."""
    from matplotlib.transforms import Bbox

    figure.draw_without_rendering()
    figure.set_layout_engine("none")
    for subfigure in figure.subfigs:
        subfigure.bbox_relative.set_points(subfigure.bbox_relative.get_points().round(LAYOUT_DIGITS))
        for ax in subfigure.axes:
            ax.set_position(Bbox(ax.get_position().get_points().round(LAYOUT_DIGITS)))


def plot_results(results: Sequence[Result], path: Path) -> None:
    """Draw ``results`` into ``path`` (.svg or .png). The same results give the same SVG, byte for byte,
    with the same matplotlib: no date, fixed ids, the settings of :data:`STYLE`."""
    fmt = chart_format(path)
    mpl = require_matplotlib()
    import matplotlib.style

    with matplotlib.style.context("default"), mpl.rc_context(STYLE):
        figure = build_figure(results)
        freeze_layout(figure)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, format=fmt, dpi=PNG_DPI, metadata={"Date": None} if fmt == "svg" else None)
