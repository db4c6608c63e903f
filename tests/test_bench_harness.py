"""The `gemlint bench` harness: pair discovery, device and dependency skips, the result schema, the CLI."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from gemlint.bench import published
from gemlint.bench.pair import Pair
from gemlint.bench.registry import NO_PAIR_NEEDED, all_pairs
from gemlint.bench.render import format_range, format_value, render_table, summary
from gemlint.bench.result import Result, Status, ratio
from gemlint.bench.runner import INSTALL_HINT, bench_codes, choose_device, run_benchmarks, run_pair, select_codes
from gemlint.cli import main
from gemlint.docs import rule_markdown, rule_text
from gemlint.registry import all_rules, known_codes

RESULT_KEYS = {"code", "metric", "unit", "bad", "good", "ratio", "device", "status", "reason"}


@pytest.fixture
def fake_pairs(tmp_path, monkeypatch):
    """Installs pair packages written in the test (``{code: measure body}``) in place of the real ones."""

    def install(**measures: str) -> dict[str, Pair]:
        root = tmp_path / "fakepairs"
        pairs = {}
        for code, body in measures.items():
            folder = root / code.lower()
            folder.mkdir(parents=True)
            (root / "__init__.py").write_text("")
            (folder / "__init__.py").write_text("")
            (folder / "bad.py").write_text("x = 1\n")
            (folder / "good.py").write_text("x = 2\n")
            (folder / "measure.py").write_text(
                "from gemlint.bench.pair import Measurement, SkipPair\n\n" + textwrap.dedent(body)
            )
            pairs[code] = Pair(code=code, bad="bad.py", good="good.py", package=f"fakepairs.{code.lower()}")
        monkeypatch.syspath_prepend(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith("fakepairs")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setattr("gemlint.bench.runner.all_pairs", lambda: pairs)
        return pairs

    return install


def test_every_pair_is_discovered_once_with_its_package():
    pairs = all_pairs()
    assert {"GEM201", "GEM401", "GEM402", "GEM403", "GEM404", "GEM501"} <= set(pairs)
    for code, pair in pairs.items():
        assert pair.code == code and pair.package.endswith(code.lower())
        assert set(pair.devices) <= {"cpu", "cuda"} and pair.devices


def test_bench_lists_every_rule_code():
    assert set(known_codes()) <= set(bench_codes())
    assert set(all_pairs()) <= set(bench_codes())


@pytest.mark.parametrize("rule", [rule for rule in all_rules() if rule.code not in NO_PAIR_NEEDED], ids=lambda r: r.code)
def test_every_rule_has_a_pair(rule):
    assert rule.code in all_pairs(), f"{rule.code} has no benchmark pair: a rule is not finished without one"
    assert rule.benchmark, "the rule's metadata describes its benchmark"


def test_a_rule_without_a_pair_is_skipped_with_a_reason(fake_pairs):
    fake_pairs()
    [result] = run_benchmarks(["GEM201"])
    assert result.status is Status.SKIPPED and "no benchmark pair" in result.reason
    [result] = run_benchmarks(["GEM000"])
    assert result.status is Status.SKIPPED and result.reason == NO_PAIR_NEEDED["GEM000"]


def test_missing_library_skips_with_the_install_hint():
    pair = Pair(code="GEM999", bad="bad.py", good="good.py", requires=("gemlint_no_such_module",))
    [result] = run_pair(pair)
    assert result.status is Status.SKIPPED and "gemlint_no_such_module" in result.reason and INSTALL_HINT in result.reason


def test_device_choice(monkeypatch):
    monkeypatch.setattr("gemlint.bench.runner.cuda_available", lambda: False)
    both = Pair(code="GEM999", bad="b.py", good="g.py", devices=("cpu", "cuda"))
    cuda_only = Pair(code="GEM999", bad="b.py", good="g.py", devices=("cuda",))
    assert choose_device(both, "auto") == ("cpu", "")
    assert choose_device(cuda_only, "auto")[0] is None
    assert choose_device(cuda_only, "cpu") == (None, "runs on cuda only, not on cpu")
    assert choose_device(both, "cuda") == (None, "needs a CUDA device; none is available here")
    monkeypatch.setattr("gemlint.bench.runner.cuda_available", lambda: True)
    assert choose_device(both, "auto") == ("cuda", "")
    assert choose_device(cuda_only, "cuda") == ("cuda", "")


def test_measured_skipped_and_failing_pairs(fake_pairs):
    fake_pairs(
        GEM991="""\
        def measure(ctx):
            return [
                Measurement("things", "bytes", 300, 100, deterministic=True),
                Measurement("peak", "bytes", None, None, skipped="not on this device"),
            ]
        """,
        GEM992="""\
        def measure(ctx):
            raise SkipPair("needs a toolchain")
        """,
        GEM993="""\
        import sys

        def measure(ctx):
            print("details on stderr", file=sys.stderr)
            raise ValueError("broken pair")
        """,
    )
    results = run_benchmarks(["GEM991", "GEM992", "GEM993"], device="cpu")
    measured, peak, skipped, failed = results
    assert (measured.status, measured.bad, measured.good, measured.ratio, measured.device) == (Status.MEASURED, 300, 100, 3.0, "cpu")
    assert peak.status is Status.SKIPPED and peak.metric == "peak" and peak.reason == "not on this device"
    assert skipped.status is Status.SKIPPED and skipped.reason == "needs a toolchain"
    assert failed.status is Status.ERROR and "ValueError: broken pair" in failed.reason and "details on stderr" in failed.reason


def test_result_json_has_the_documented_keys():
    result = Result("GEM201", "tokens", "tokens", 2048, 120, ratio(2048, 120), "cpu", Status.MEASURED)
    data = result.to_json()
    assert RESULT_KEYS <= set(data) and data["status"] == "measured"
    assert Result.from_json(json.loads(json.dumps(data))) == result
    assert ratio(5, 0) is None and ratio(6, 2) == 3.0


def test_table_shows_measured_rows_and_skip_reasons():
    table = render_table(
        [
            Result("GEM101", "bytes held", "bytes", 3 * 1024 * 1024, 0, None, "cpu", Status.MEASURED, deterministic=True),
            Result("GEM201", "latency", "ms", 12.5, 2.5, 5.0, "cpu", Status.MEASURED, runs=5, bad_range=(12.0, 13.0), good_range=(2.4, 2.7)),
            Result("GEM401", "latency", "ms", 2.6, 2.5, 1.04, "cpu", Status.MEASURED, runs=5, bad_range=(2.4, 2.9), good_range=(2.3, 2.7)),
            Result("GEM601", "throughput", "req/s", 150, 160, 0.94, "cpu", Status.MEASURED),
            Result.skipped("GEM404", "needs a CUDA device; none is available here"),
        ]
    )
    lines = table.splitlines()
    assert lines[0].split() == ["RULE", "METRIC", "BAD", "GOOD", "RATIO", "DEVICE"]
    assert "3 MiB" in lines[1] and "good=0" in lines[1]
    assert "12.5 ms" in lines[2] and "5x" in lines[2]
    assert "within noise" in lines[3] and "1.04x" not in lines[3]
    assert "one run" in lines[4] and "0.94x" not in lines[4]
    assert lines[-1] == "GEM404  SKIPPED needs a CUDA device; none is available here"
    assert format_value(1536, "bytes") == "1.5 KiB" and format_value(65, "nodes") == "65 nodes"


def test_table_fits_120_columns_with_long_metric_names_and_reasons():
    long_metric = "bytes of activations held for a backward pass that never comes, per request, at the largest batch size"
    table = render_table(
        [
            Result("GEM101", long_metric, "bytes", 3 * 1024 * 1024, 0, None, "cuda:0 (NVIDIA H200)", Status.MEASURED),
            Result("GEM201", "latency", "ms", 12.5, 2.5, 5.0, "cpu", Status.MEASURED),
            Result.skipped("GEM404", "needs a CUDA device; " + "none is available here; " * 8),
        ]
    )
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= 120
    assert " ".join(" ".join(line.split()) for line in lines).count("per request, at the largest batch size") == 1
    assert lines[1].split()[0] == "GEM101" and "3 MiB" in lines[1]  # the values stay on the metric's first line


def test_select_codes_takes_codes_and_prefixes():
    assert select_codes(["gem201"]) == ["GEM201"]
    assert "GEM401" in select_codes(["GEM4"]) and all(code.startswith("GEM4") for code in select_codes(["GEM4"]))
    with pytest.raises(ValueError):
        select_codes(["GEM999"])


def test_cli_bench_json_for_a_rule_without_runtime_cost():
    result = CliRunner().invoke(main, ["bench", "--rule", "GEM000", "--format", "json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert RESULT_KEYS <= set(row) and row["status"] == "skipped" and row["reason"]


def test_cli_bench_cuda_only_pair_is_skipped_on_cpu(tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(main, ["bench", "--rule", "GEM404", "--device", "cpu", "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    [row] = json.loads(out.read_text())
    assert row["status"] == "skipped" and "cuda" in row["reason"]


def test_cli_bench_rejects_an_unknown_rule():
    result = CliRunner().invoke(main, ["bench", "--rule", "GEM999"])
    assert result.exit_code == 2 and "GEM999" in result.output


def test_cli_bench_exits_1_when_a_pair_fails(fake_pairs, monkeypatch):
    fake_pairs(GEM991="def measure(ctx):\n    raise RuntimeError('boom')\n")
    monkeypatch.setattr("gemlint.bench.runner.bench_codes", lambda: ["GEM991"])
    result = CliRunner().invoke(main, ["bench", "--rule", "GEM991"])
    assert result.exit_code == 1 and "ERROR RuntimeError: boom" in result.stdout


def test_committed_results_cover_the_cpu_pairs_and_reach_the_docs():
    results = published.published_results()
    for code, pair in all_pairs().items():
        if "cpu" in pair.devices:
            assert code in results, f"gemlint/bench/results/cpu.json has no measured row for {code}: regenerate it"
    for code, rows in results.items():
        assert all(row.status is Status.MEASURED and row.bad is not None for row in rows)
        rule = next((rule for rule in all_rules() if rule.code == code), None)
        if rule is not None and rule.benchmark:
            assert published.measured_lines(code)[0] in rule_markdown(rule)
            assert published.measured_lines(code)[0] in rule_text(rule)


def test_doc_summaries_claim_a_ratio_only_outside_the_noise():
    counted = Result("GEM101", "bytes held", "bytes", 2048, 1024, 2.0, "cpu", Status.MEASURED, deterministic=True)
    assert summary(counted) == "bytes held: 2 KiB (bad) vs 1 KiB (good), 2x"
    apart = Result("GEM201", "latency", "ms", 12.5, 2.5, 5.0, "cpu", Status.MEASURED, runs=9, bad_range=(12.0, 13.0), good_range=(2.4, 2.7))
    assert summary(apart) == "latency, median of 9 runs: 12.5 ms (bad, 12 to 13 ms) vs 2.5 ms (good, 2.4 to 2.7 ms), 5x"
    overlapping = Result("GEM401", "latency", "ms", 2.6, 2.5, 1.04, "cpu", Status.MEASURED, runs=9, bad_range=(2.4, 2.9), good_range=(2.3, 2.7))
    assert overlapping.within_noise
    assert summary(overlapping).endswith(": no measurable difference") and "1.04x" not in summary(overlapping)
    once = Result("GEM601", "throughput", "req/s", 150, 160, 0.94, "cpu", Status.MEASURED)
    assert summary(once) == "throughput: 150 req/s (bad) vs 160 req/s (good), one run each: no difference claimed"
    assert Result.from_json(json.loads(json.dumps(apart.to_json()))) == apart
    probed = Result("GEM601", "forwards", "forwards", 98, 0, None, "cpu", Status.MEASURED, runs=5, bad_range=(92, 104), good_range=(0, 0))
    assert summary(probed) == "forwards, median of 5 runs: 98 forwards (bad, 92 to 104 forwards) vs 0 forwards (good, every run)"
    assert format_range((900, 2 * 1024 * 1024), "bytes") == ", 900 B to 2 MiB"


def test_a_latency_comparison_reports_the_median_and_keeps_its_runs():
    from gemlint.bench.pair import Measurement
    from gemlint.bench.runner import to_result
    from gemlint.bench.timing import Median, compare_latency

    bad, good = compare_latency(lambda: sum(range(2000)), lambda: None, quick=True)
    assert isinstance(bad, Median) and len(bad.runs) == 3 and bad == sorted(bad.runs)[1]
    result = to_result("GEM999", "cpu", Measurement("latency", "ms", bad, good))
    assert type(result.bad) is float and result.runs == 3
    assert result.bad_range == (min(bad.runs), max(bad.runs)) and result.good_range == (min(good.runs), max(good.runs))
    counted = to_result("GEM999", "cpu", Measurement("nodes", "nodes", 65, 12, deterministic=True))
    assert (counted.bad, counted.runs, counted.bad_range) == (65, None, None) and type(counted.bad) is int


CHECKERS = ("valgrind", "AddressSanitizer", "compute-sanitizer", "cudaMemGetInfo")


@pytest.mark.parametrize("code", sorted(all_pairs()))
def test_published_results_match_what_the_docs_say_the_pair_measures(code):
    from gemlint.docs import rule_markdown
    from gemlint.registry import rule_by_code

    pair = all_pairs()[code]
    description = pair.description()
    rule = rule_by_code(code)
    if rule is not None:
        assert f"#### Benchmark\n\n{description}\n" in rule_markdown(rule, heading="###")
    for result in published.published_results().get(code, []):
        # A tool named in a measured metric is the one the description names.
        for checker in CHECKERS:
            if checker in result.metric:
                assert checker in description, (checker, result.metric)
        if result.deterministic:
            assert result.unit not in ("ms", "s", "req/s") and " every " not in result.metric, result
        else:  # a timing: a median of several runs, with their range
            assert result.runs and result.runs >= 3, result
            assert result.bad_range[0] <= result.bad <= result.bad_range[1], result
            assert result.good_range[0] <= result.good <= result.good_range[1], result
