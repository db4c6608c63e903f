"""`gemlint bench --plot FILE`: the chart of the results, drawn after a run or from a results file (`--from`),
and the committed chart of the committed results that docs/bench.md shows."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from availability import require_modules
from gemlint.bench.plot import axis_scale, chart_format, pair_title, tick_label
from gemlint.bench.published import RESULTS_DIR
from gemlint.bench.result import Result, Status, read_results
from gemlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
BENCH_DOC = ROOT / "docs" / "bench.md"
RESULTS_FILES = sorted(RESULTS_DIR.glob("*.json"))
SVG = "{http://www.w3.org/2000/svg}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def committed_chart(results_file: Path) -> Path:
    return ROOT / "docs" / "images" / f"bench-{results_file.stem}.svg"


def regenerate_command(results_file: Path) -> str:
    chart = committed_chart(results_file).relative_to(ROOT).as_posix()
    return f"gemlint bench --from {results_file.relative_to(ROOT).as_posix()} --plot {chart}"


def svg_texts(path: Path) -> list[str]:
    """Every line of text in an SVG chart (matplotlib writes one <text> per line when text stays text)."""
    root = ET.parse(path).getroot()
    return ["".join(element.itertext()) for element in root.iter(f"{SVG}text")]


def svg_panels(path: Path) -> list[str]:
    """The ids of the chart's panels, one per metric of a drawn pair."""
    root = ET.parse(path).getroot()
    return [element.get("id") for element in root.iter(f"{SVG}g") if (element.get("id") or "").startswith("panel-")]


def svg_creator(path: Path) -> str:
    match = re.search(r"<dc:title>Matplotlib v(\S+), ", path.read_text(encoding="utf-8"))
    return match.group(1) if match else ""


def metrics_by_pair(results: list[Result]) -> tuple[dict[tuple[str, str | None], list[Result]], set[str]]:
    """What the chart must show, worked out here from the results: the metrics of every pair that measured
    something (each gets a panel, measured or not), and the codes of the pairs that measured nothing."""
    pairs: dict[tuple[str, str | None], list[Result]] = {}
    for result in results:
        pairs.setdefault((result.code, result.device), []).append(result)
    drawn = {key: rows for key, rows in pairs.items() if any(row.status is Status.MEASURED for row in rows)}
    return drawn, {code for code, device in pairs if (code, device) not in drawn}


def synthetic_results() -> list[Result]:
    """One of each kind of row a run reports: a timing with its run ranges, a count, a metric skipped on the
    device, a number that is not finite, a pair skipped whole and a pair that failed."""
    return [
        Result("GEM201", "latency per batch", "ms", 12.5, 2.5, 5.0, "cpu", Status.MEASURED, runs=9, bad_range=(12.0, 13.0), good_range=(2.4, 2.7)),
        Result("GEM201", "tokens computed per batch", "tokens", 4000, 300, 13.3, "cpu", Status.MEASURED, deterministic=True),
        Result.skipped("GEM201", "needs a GPU", metric="peak device memory", unit="bytes", device="cpu"),
        Result("GEM101", "bytes held for backward", "bytes", 3 << 20, 0, None, "cpu", Status.MEASURED, deterministic=True),
        Result("GEM102", "output drift", "", float("nan"), 0.0, None, "cpu", Status.MEASURED, deterministic=True),
        Result.skipped("GEM404", "runs on cuda only, not on cpu"),
        Result.error("GEM401", "RuntimeError: boom", device="cpu"),
    ]


@pytest.fixture
def no_run(monkeypatch):
    """Fails the test if a pair would run: the checks of --plot and --from come first."""

    def run_benchmarks(*args, **kwargs):
        raise AssertionError("the pairs ran")

    monkeypatch.setattr("gemlint.bench.runner.run_benchmarks", run_benchmarks)


@pytest.fixture(scope="module")
def redrawn(tmp_path_factory) -> dict[Path, Path]:
    """Each committed results file drawn again, as docs/bench.md says to, into a temporary folder."""
    require_modules("matplotlib")
    charts = {}
    for results_file in RESULTS_FILES:
        chart = tmp_path_factory.mktemp("charts") / f"bench-{results_file.stem}.svg"
        result = CliRunner().invoke(main, ["bench", "--from", str(results_file), "--plot", str(chart)])
        assert result.exit_code == 0, result.output
        charts[results_file] = chart
    return charts


def test_the_format_comes_from_the_suffix():
    assert chart_format(Path("chart.svg")) == "svg" and chart_format(Path("CHART.PNG")) == "png"
    for name in ("chart.pdf", "chart"):
        with pytest.raises(ValueError, match=r"\.svg or \.png"):
            chart_format(Path(name))


def test_axes_read_bytes_in_binary_units_and_large_counts_without_an_offset():
    assert axis_scale("bytes", [3 << 20, 0]) == (float(1 << 20), "MiB")
    assert axis_scale("bytes", [100, 0]) == (1.0, "bytes")
    assert axis_scale("ms", [81.5]) == (1.0, "ms") and axis_scale("", [1.0])[1] == "no unit"
    assert [tick_label(value) for value in (0, 0.4, 2400, 500000, 1.5e6)] == ["0", "0.4", "2400", "500k", "1.5M"]


def test_a_plain_install_never_imports_matplotlib():
    code = "import sys, gemlint.cli, gemlint.bench.plot; assert 'matplotlib' not in sys.modules, 'matplotlib was imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_cli_rejects_a_chart_suffix_it_cannot_write(tmp_path, no_run):
    result = CliRunner().invoke(main, ["bench", "--rule", "GEM201", "--plot", str(tmp_path / "chart.pdf")])
    assert result.exit_code == 2 and "--plot" in result.output and ".svg or .png" in result.output


def test_cli_names_the_bench_extra_when_matplotlib_is_missing(tmp_path, monkeypatch, no_run):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    result = CliRunner().invoke(main, ["bench", "--rule", "GEM201", "--plot", str(tmp_path / "chart.svg")])
    assert result.exit_code == 2 and "matplotlib" in result.output and "bench extra" in result.output
    assert not (tmp_path / "chart.svg").exists()


def test_cli_from_reads_only_a_results_report(tmp_path, no_run):
    report = tmp_path / "results.json"
    report.write_text('{"code": "GEM201"}')
    result = CliRunner().invoke(main, ["bench", "--from", str(report)])
    assert result.exit_code == 2 and "--from" in result.output and "report" in result.output
    result = CliRunner().invoke(main, ["bench", "--from", str(RESULTS_FILES[0]), "--quick"])
    assert result.exit_code == 2 and "--from" in result.output


def test_cli_from_reports_the_chosen_rules_of_a_results_file(tmp_path):
    report = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["bench", "--from", str(RESULTS_FILES[0]), "--rule", "GEM2", "--format", "json", "--output", str(report)])
    assert result.exit_code == 0, result.output
    expected = [row for row in read_results(RESULTS_FILES[0]) if row.code.startswith("GEM2")]
    assert read_results(report) == expected and expected


def test_cli_plots_after_a_run(tmp_path, monkeypatch):
    require_modules("matplotlib")
    monkeypatch.setattr("gemlint.bench.runner.run_benchmarks", lambda codes, **kwargs: synthetic_results())
    png = tmp_path / "chart.png"
    result = CliRunner().invoke(main, ["bench", "--plot", str(png)])
    # The run's own exit status is kept: a pair failed.
    assert result.exit_code == 1 and "ERROR RuntimeError: boom" in result.stdout
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    svg = tmp_path / "chart.svg"
    CliRunner().invoke(main, ["bench", "--plot", str(svg)])
    texts = svg_texts(svg)
    assert pair_title("GEM201") in texts and pair_title("GEM101") in texts
    assert svg_panels(svg) == ["panel-GEM201-cpu-0", "panel-GEM201-cpu-1", "panel-GEM201-cpu-2", "panel-GEM101-cpu-0", "panel-GEM102-cpu-0"]
    # Bars and whiskers carry their values and units; the skipped metric and the pairs that measured
    # nothing are shown with their reasons.
    assert {"bad  12.5 ms", "good  2.5 ms", "bad  3 MiB", "good  0 B", "MiB", "tokens", "bad/good 5x", "good=0"} <= set(texts)
    assert any("skipped: needs a GPU" in text for text in texts)
    assert any("not a finite number" in text for text in texts)
    assert any(text.startswith(pair_title("GEM404")) and "runs on cuda only" in text for text in texts)
    assert any(text.startswith(pair_title("GEM401") + " (cpu)") and "error: RuntimeError: boom" in text for text in texts)


def test_the_same_results_draw_the_same_svg(tmp_path, monkeypatch):
    require_modules("matplotlib")
    monkeypatch.setattr("gemlint.bench.runner.run_benchmarks", lambda codes, **kwargs: synthetic_results())
    first, second = tmp_path / "first.svg", tmp_path / "second.svg"
    for chart in (first, second):
        CliRunner().invoke(main, ["bench", "--plot", str(chart)])
    assert first.read_bytes() == second.read_bytes()
    assert "<dc:date>" not in first.read_text(encoding="utf-8")


@pytest.mark.parametrize("results_file", RESULTS_FILES, ids=lambda path: path.name)
def test_chart_of_the_committed_results_has_a_panel_per_metric(results_file, redrawn):
    chart = redrawn[results_file]
    texts, panels = svg_texts(chart), svg_panels(chart)
    drawn, unmeasured = metrics_by_pair(read_results(results_file))
    assert drawn, f"{results_file.name} measured nothing"
    for (code, device), metrics in drawn.items():
        assert pair_title(code) in texts or f"{pair_title(code)} ({device})" in texts, code
        assert [panel for panel in panels if panel.startswith(f"panel-{code}-{device}-")] == [f"panel-{code}-{device}-{index}" for index in range(len(metrics))]
    assert len(panels) == sum(len(metrics) for metrics in drawn.values())
    for code in unmeasured:
        assert any(text.startswith(pair_title(code)) for text in texts), f"{code} measured nothing and is not listed"


@pytest.mark.parametrize("results_file", RESULTS_FILES, ids=lambda path: path.name)
def test_docs_show_the_chart_of_each_committed_results_file(results_file, redrawn):
    committed = committed_chart(results_file)
    command = regenerate_command(results_file)
    doc = BENCH_DOC.read_text(encoding="utf-8")
    assert f"](images/{committed.name})" in doc and command in doc
    assert committed.is_file(), f"no chart of {results_file.name}: {command}"
    fresh = redrawn[results_file]
    if svg_creator(committed) == svg_creator(fresh):
        # The same matplotlib draws the same bytes (no date, fixed ids).
        assert committed.read_bytes() == fresh.read_bytes(), f"{committed.name} is out of date: {command}"
    else:
        # Another matplotlib version places the same drawing a little differently: the bytes differ with no
        # change of the results, so only what the chart says is compared (each pair's title and panels).
        assert svg_panels(committed) == svg_panels(fresh), f"{committed.name} is out of date: {command}"
        titles = [text for text in svg_texts(fresh) if re.match(r"GEM\d{3} ", text)]
        assert [text for text in svg_texts(committed) if re.match(r"GEM\d{3} ", text)] == titles, f"{committed.name} is out of date: {command}"
