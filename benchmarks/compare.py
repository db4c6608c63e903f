"""Side-by-side speed and memory of gemlint and its peers on one corpus.

    python benchmarks/compare.py [--corpus DIR] [--runs N] [--only NAME,...]

Every tool is a whole process timed from outside (start-up included); tools are
run alternately (A B C ... A B C ...) so that machine noise spreads evenly, and
medians are reported with ratios to LibCST parse-only in one process. Peak RSS is
the largest single process of a run (the tool or one of its workers), read from
wait4() rusage. The corpus comes from benchmarks/corpus.sh; peer tools from
benchmarks/setup_peers.sh. Nothing third-party is committed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bytecode import compile_gemlint

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path(os.environ.get("GEMLINT_CORPUS", Path.home() / ".cache" / "gemlint-corpus"))
PERF = Path(os.environ.get("GEMLINT_PERF", Path.home() / ".cache" / "gemlint-perf"))


def count_files(paths: list[Path]) -> int:
    return sum(1 for p in paths for _ in (p.rglob("*.py") if p.is_dir() else [p]))


def timed(command: list[str], cwd: Path, timeout: float | None = None) -> tuple[float, float, int | None]:
    """(wall seconds, peak RSS MiB of the largest process, exit code or None when stopped at ``timeout``).

    The wait blocks until the tool exits: a wait that polled every 50 ms added up to 50 ms to each run, a quarter
    of a warm run. A timer stops a tool that runs past ``timeout``."""
    started = time.monotonic()
    # Its own process group, so that a tool stopped at the timeout takes its workers with it.
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, start_new_session=True)
    stopped = threading.Event()

    def stop() -> None:
        stopped.set()
        try:
            os.killpg(process.pid, 9)
        except ProcessLookupError:  # it exited as the timer fired
            pass

    timer = threading.Timer(timeout, stop) if timeout is not None else None
    if timer is not None:
        timer.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if timer is not None:
        timer.cancel()
    if stopped.is_set():
        return wall, usage.ru_maxrss / 1024, None
    # On Linux a reaped child's ru_maxrss is the largest of it and its own reaped descendants (pool workers).
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def tools(corpus: list[Path], big_file: Path, cache_dir: Path) -> dict[str, list[str]]:
    py = sys.executable
    targets = [str(p.resolve()) for p in corpus]
    peer = lambda name, *args: [str(PERF / name / "bin" / args[0]), *args[1:]]  # noqa: E731
    found = {
        "libcst-parse-1proc": [py, str(HERE / "parse_only.py"), "libcst", *targets],
        "ast-parse-1proc": [py, str(HERE / "parse_only.py"), "ast", *targets],
        "gemlint-cold-j2": [py, "-m", "gemlint", "--no-cache", "--jobs", "2", "--exit-zero", "-q", *targets],
        "gemlint-warm-j2": [py, "-m", "gemlint", "--cache-dir", str(cache_dir), "--jobs", "2", "--exit-zero", "-q", *targets],
        "flake8-alone-bigfile": [py, str(HERE / "flake8_without_gemlint.py"), "--select", "GEM", str(big_file)],
        "gemlint-flake8-bigfile": [py, "-m", "flake8", "--select", "GEM", str(big_file)],
        "libcst-parse-bigfile": [py, str(HERE / "parse_only.py"), "libcst", str(big_file)],
        "ruff": peer("ruff", "ruff", "check", "--no-cache", "--exit-zero", "-q", *targets),
        "flake8-j2": peer("flake8", "flake8", "-j", "2", "--exit-zero", *targets),
        "fixit-j2": peer("fixit", "fixit", "lint", *targets),
        "torchfix-j2": peer("torchfix", "torchfix", "-j", "2", *targets),
    }
    return {
        name: command
        for name, command in found.items()
        if name.startswith(("gemlint", "libcst", "ast", "flake8-alone")) or Path(command[0]).exists()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, nargs="*", default=None, help="directories (default: the downloaded corpus)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated tool names")
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    parser.add_argument(
        "--timeout", type=float, default=None,
        help="stop a tool after this many seconds and report its time as at least that (for the slow peers)",
    )
    args = parser.parse_args()
    compile_gemlint()
    corpus = args.corpus or [DEFAULT_CORPUS / "transformers", DEFAULT_CORPUS / "diffusers"]
    # The large single file is transformers' modeling_utils.py, in the corpus measured (else the default corpus).
    candidates = [folder / "transformers" / "modeling_utils.py" for folder in corpus] + [DEFAULT_CORPUS / "transformers" / "transformers" / "modeling_utils.py"]
    big_file = next((path for path in candidates if path.is_file()), candidates[-1])
    cache_dir = Path(tempfile.mkdtemp(prefix="gemlint-bench-cache-"))
    selected = tools(corpus, big_file, cache_dir)
    if args.only:
        selected = {k: v for k, v in selected.items() if k in args.only.split(",")}
    if any(name.endswith("-bigfile") for name in selected) and not big_file.is_file():
        parser.error(f"{big_file} is missing: the -bigfile tools need transformers' modeling_utils.py in the corpus")
    files = count_files(corpus)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in selected}
    # Tools run where a user would run them: in the corpus's folder, which is then the project root.
    cwd = Path(os.path.commonpath([p.resolve() for p in corpus]))
    if cwd.is_file():
        cwd = cwd.parent
    if "gemlint-warm-j2" in selected:  # fill the cache once, untimed, from where the timed runs start
        subprocess.run(selected["gemlint-warm-j2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    stopped: set[str] = set()
    for run in range(args.runs):
        for name, command in selected.items():
            wall, rss, code = timed(command, cwd, args.timeout)
            samples[name].append((wall, rss))
            if code is None:
                stopped.add(name)
            status = "stopped at the timeout" if code is None else f"exit {code}"
            print(f"run {run + 1}/{args.runs} {name:<24} {wall:8.2f} s {rss:8.1f} MiB ({status})", file=sys.stderr)
    shutil.rmtree(cache_dir, ignore_errors=True)
    results = {}
    for name, values in samples.items():
        walls = [w for w, _ in values]
        results[name] = {"median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
                         "peak_rss_mib": max(r for _, r in values), "stopped_at_timeout": name in stopped}
    base = results.get("libcst-parse-1proc", {}).get("median_s")
    big = results.get("libcst-parse-bigfile", {}).get("median_s")
    print(f"corpus: {', '.join(map(str, corpus))} ({files} .py files), {args.runs} runs, medians")
    print(f"{'tool':<24} {'median s':>9} {'files/s':>8} {'peak MiB':>9} {'x LibCST parse':>15}")
    for name, r in results.items():
        reference = big if name.endswith("bigfile") else base
        at_least = ">" if r["stopped_at_timeout"] else " "  # stopped: the true time is longer
        ratio = f"{at_least}{r['median_s'] / reference:14.3f}" if reference else " " * 15
        rate = "" if name.endswith("bigfile") else f"{'<' if r['stopped_at_timeout'] else ''}{files / r['median_s']:.0f}"
        print(f"{name:<24} {at_least}{r['median_s']:8.2f} {rate:>8} {r['peak_rss_mib']:9.1f} {ratio}")
    if args.json:
        args.json.write_text(json.dumps({"files": files, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
