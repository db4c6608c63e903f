"""Each benchmark pair: the rule flags its bad variant and accepts its good one, and the pair measures
what it claims (bad above good for counts and bytes; timings are reported, never compared)."""

from __future__ import annotations

import shutil

import pytest

from availability import require_modules, require_tools
from gemlint.api import lint_paths, lint_source
from gemlint.bench.registry import all_pairs
from gemlint.bench.result import Status
from gemlint.bench.runner import run_pair
from gemlint.languages import language_of
from gemlint.registry import rule_by_code

PAIRS = list(all_pairs().values())
# The toolchain each native pair builds with on the CPU.
TIMING_UNITS = {"ms", "s", "req/s"}
NATIVE_TOOLS = {".c": ("gcc",), ".cpp": ("g++",), ".cu": ("g++",)}


def _variant_source(pair, variant):
    path = pair.variant_path(variant)
    # Linted as the pair folder's file (gem401/bad.py): the folder's own location under gemlint/bench/
    # would make every GEM4xx finding a "benchmark script" exemption.
    return path.read_text(encoding="utf-8"), f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.code)
def test_rule_flags_the_bad_variant_and_accepts_the_good_one(pair, tmp_path):
    rule = rule_by_code(pair.code)
    if rule is None:
        pytest.skip(f"{pair.code} is not registered on this branch yet")
    if pair.lint_as_project:
        # A copy of the folder is its own project: the rule resolves the manifest's probe to the code beside it.
        project = shutil.copytree(pair.folder, tmp_path / pair.folder.name, ignore=shutil.ignore_patterns("__pycache__"))
        found = lint_paths([project], select=(pair.code,))
        assert found and {d.code for d in found} == {pair.code}, found
        assert {d.path.rsplit("/", 1)[-1] for d in found} == {pair.bad}, found
        return
    bad_source, bad_path = _variant_source(pair, "bad")
    good_source, good_path = _variant_source(pair, "good")
    # A pair is a minimal program around the pattern (`predict(model, batch)`), not an app with an entry point:
    # linted with strict, which reports inference context that rests on a name.
    bad = lint_source(bad_source, bad_path, select=(pair.code,), strict=True)
    good = lint_source(good_source, good_path, select=(pair.code,), strict=True)
    assert bad and {d.code for d in bad} == {pair.code}, bad
    assert good == [], good


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.code)
def test_variants_are_real_files_of_the_rule_language(pair):
    for variant in ("bad", "good"):
        path = pair.variant_path(variant)
        assert path.is_file(), path
        assert language_of(path) is not None
    assert pair.variant_path("bad").read_text() != pair.variant_path("good").read_text()
    assert (pair.folder / "measure.py").is_file()


_QUICK_RUNS: dict = {}


def _run_quick(pair):
    """The pair's ``--quick`` results on the CPU, run once per test session."""
    require_modules(*pair.requires)
    if pair.variant_path("bad").suffix in NATIVE_TOOLS:
        require_tools(*NATIVE_TOOLS[pair.variant_path("bad").suffix], "valgrind")
    if pair.code not in _QUICK_RUNS:
        _QUICK_RUNS[pair.code] = run_pair(pair, device="cpu", quick=True)
    return _QUICK_RUNS[pair.code]


@pytest.mark.bench
@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.code)
def test_pair_measures_bad_above_good(pair):
    results = _run_quick(pair)
    assert results and all(r.code == pair.code for r in results)
    assert not [r for r in results if r.status is Status.ERROR], results
    if "cpu" not in pair.devices:
        assert all(r.status is Status.SKIPPED and r.reason for r in results)
        return
    measured = [r for r in results if r.status is Status.MEASURED]
    assert measured, results
    for result in measured:
        assert result.device == "cpu"
        if result.unit in TIMING_UNITS or " every " in result.metric:
            # Timings, rates, and counts of what happens within a timed run depend on the machine's speed.
            assert not result.deterministic, result
        if result.deterministic:
            assert result.bad > result.good >= 0, result
        else:  # reported with the spread of its runs, never asserted to favour either variant
            assert result.bad >= 0 and result.good >= 0
            if result.runs:
                assert result.bad_range[0] <= result.bad <= result.bad_range[1]
                assert result.good_range[0] <= result.good <= result.good_range[1]
    for result in results:
        if result.status is Status.SKIPPED:
            assert result.reason


def _metrics(pair_code):
    results = _run_quick(all_pairs()[pair_code])
    return {r.metric.split(" (")[0]: r for r in results if r.status is Status.MEASURED and r.deterministic}


def _only(results, prefix):
    [result] = [r for name, r in results.items() if name.startswith(prefix)]
    return result


@pytest.mark.bench
def test_gem201_counts_every_padded_position():
    tokens = _only(_metrics("GEM201"), "tokens computed")
    assert tokens.bad == 4 * 512  # four requests padded to max_length=512
    assert tokens.good < 4 * 50  # padded to the longest: at most 40 words and 2 special tokens each


@pytest.mark.bench
def test_gem101_keeps_activations_only_without_a_guard():
    held = _only(_metrics("GEM101"), "bytes held for backward")
    # 4 Linear+GELU blocks of width 512 on 32 rows: each block keeps its Linear input and GELU input (float32).
    assert (held.bad, held.good) == (4 * 2 * 32 * 512 * 4, 0)


@pytest.mark.bench
def test_gem104_retained_graph_doubles_the_peak_of_saved_bytes():
    results = _metrics("GEM104")
    small, large = _only(results, "peak bytes saved for backward, 16 rows"), _only(results, "peak bytes saved for backward, 32 rows")
    # The previous step's retained graph is alive while the next forward saves its own: two graphs instead of one.
    assert small.bad == 2 * small.good > 0 and large.bad == 2 * large.good == 4 * small.good


@pytest.mark.bench
@pytest.mark.parametrize("code", ["GEM102", "GEM103"])
def test_train_mode_makes_outputs_nondeterministic_and_drifts_statistics(code):
    results = _metrics(code)
    assert _only(results, "max output difference").good == 0
    assert _only(results, "BatchNorm running-mean drift").good == 0
    assert _only(results, "max output difference").bad > 0 and _only(results, "BatchNorm running-mean drift").bad > 0


@pytest.mark.bench
def test_gem501_fuses_the_exported_graph():
    nodes = _only(_metrics("GEM501"), "graph nodes after ORT optimization")
    assert nodes.bad == 65  # 16 nodes per block x 4 blocks + the output Identity, untouched
    assert nodes.good <= 4 * 3  # at most Gemm, Gelu and LayerNormalization per block


@pytest.mark.bench
def test_gem302_leaks_one_buffer_per_rejected_request():
    leaked = _only(_metrics("GEM302"), "bytes leaked after 40 requests, 10 rejected")
    assert (leaked.bad, leaked.good) == (10 * 256 * 4, 0)


@pytest.mark.bench
def test_gem301_loses_one_device_buffer_per_rejected_request():
    results = _metrics("GEM301")
    lost = _only(results, "device bytes lost")
    assert (lost.bad, lost.good) == (5 * 16384 * 4, 0)  # 5 of 20 requests rejected, 16384 floats each
    assert _only(results, "bytes leaked").bad == lost.bad


@pytest.mark.bench
def test_gem303_reports_every_mismatched_release():
    mismatched = _only(_metrics("GEM303"), "mismatched releases")
    assert (mismatched.bad, mismatched.good) == (20, 0)


@pytest.mark.bench
def test_native_pairs_fall_back_to_addresssanitizer_without_valgrind(monkeypatch):
    import gemlint.bench.native as native

    pair = all_pairs()["GEM302"]
    compiler = NATIVE_TOOLS[pair.variant_path("bad").suffix][0]
    require_tools(compiler)
    real_which = shutil.which
    monkeypatch.setattr(native.shutil, "which", lambda name: None if name == "valgrind" else real_which(name))
    results = run_pair(pair, device="cpu", quick=True)
    if results[0].status is Status.SKIPPED:
        assert "valgrind" in results[0].reason  # LeakSanitizer cannot run here (ptrace, containers)
        return
    first = results[0]
    assert first.status is Status.MEASURED and "AddressSanitizer" in first.metric
    assert (first.bad, first.good) == (10 * 256 * 4, 0)


@pytest.mark.bench
def test_gem304_leaves_one_executable_graph_per_request():
    execs = _only(_metrics("GEM304"), "executable graphs never destroyed")
    assert (execs.bad, execs.good) == (20, 0)


@pytest.mark.bench
def test_gem305_open_capture_fails_every_later_request():
    results = _metrics("GEM305")
    failed = _only(results, "valid requests that failed")
    # Requests 0-2 succeed; request 3 is rejected and leaves the capture open, so the 12 valid ones after it fail.
    assert (failed.bad, failed.good) == (12, 0)
    capturing = _only(results, "streams still in capture mode")
    assert (capturing.bad, capturing.good) == (1, 0)


@pytest.mark.bench
def test_gem306_leaks_a_stream_and_two_events_per_empty_batch():
    results = _metrics("GEM306")
    assert (_only(results, "streams never destroyed").bad, _only(results, "streams never destroyed").good) == (5, 0)
    assert (_only(results, "events never destroyed").bad, _only(results, "events never destroyed").good) == (10, 0)


@pytest.mark.bench
def test_gem307_host_reads_the_buffer_before_the_default_stream_copy():
    stale = _only(_metrics("GEM307"), "host-buffer elements not yet copied")
    assert (stale.bad, stale.good) == (4 * 4096, 0)


@pytest.mark.bench
@pytest.mark.parametrize("code", ["GEM304", "GEM306", "GEM307"])
def test_gpu_only_metrics_are_skipped_with_a_reason_on_the_cpu(code):
    skipped = [r for r in _run_quick(all_pairs()[code]) if r.status is Status.SKIPPED]
    assert skipped and all("needs a CUDA device" in r.reason and r.bad is None for r in skipped)


CUDA_PAIRS = [pair for pair in PAIRS if pair.variant_path("bad").suffix == ".cu"]


@pytest.mark.bench
@pytest.mark.parametrize("pair", CUDA_PAIRS, ids=lambda pair: pair.code)
def test_cuda_variants_build_with_nvcc_and_skip_without_a_gpu(pair, tmp_path):
    """Where the CUDA toolkit is installed, both variants build against the real runtime; without a usable
    GPU the CUDA run is skipped with the runtime's reason, never reported as measured."""
    from gemlint.bench.native import DRIVER_SUPPORT, nvcc_build
    from gemlint.bench.pair import PairContext
    from gemlint.bench.runner import cuda_available, measure_pair

    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    ctx = PairContext(pair, "cuda", True, tmp_path)
    assert nvcc_build(ctx, "good", [pair.variant_path("good"), ctx.path("driver.cu")], includes=[DRIVER_SUPPORT]).is_file()
    results = measure_pair(pair, "cuda", quick=True)
    assert not [r for r in results if r.status is Status.ERROR], results
    if not cuda_available():
        [skipped] = results
        assert skipped.status is Status.SKIPPED and "CUDA runtime" in skipped.reason
