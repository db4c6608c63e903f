"""Real-corpus smoke run: lint real packages and report crashes, GEM000s, findings, time and memory.

    python benchmarks/smoke_corpus.py [TARGET ...] [--jobs N] [--json FILE] [--show N]

A TARGET is a package directory (an unpacked wheel or sdist) or an archive (.whl, .zip, .tar.gz,
.tgz, .tar.bz2, .tar.xz), which is unpacked into a scratch directory outside the repository.
Default: every package of benchmarks/corpus.sh (``$GEMLINT_CORPUS``, else
~/.cache/gemlint-corpus). Each target is linted as its own project, the way a user runs gemlint
in a checkout (``cd TARGET && gemlint .``), so cross-file rules take their context from that package.

Not run in CI (too large). A crash is a GEM000 that reports an internal error, an exit code other
than 0/1, or a traceback on stderr; a run must show 0 of them. The exit status is 1 when it does not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gemlint.config import default_config
from gemlint.discovery import Discovery
from gemlint.bad_input import INTERNAL_ERROR_PREFIX

DEFAULT = Path(os.environ.get("GEMLINT_CORPUS", Path.home() / ".cache" / "gemlint-corpus"))
ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


@dataclass
class TargetResult:
    name: str
    files: Counter  # lintable files by language
    returncode: int
    wall: float
    peak_rss_kib: int
    stderr: str
    findings: list[dict] = field(default_factory=list)

    @property
    def internal(self) -> list[dict]:
        return [f for f in self.findings if f["code"] == "GEM000" and INTERNAL_ERROR_PREFIX in f["message"]]

    @property
    def parse_errors(self) -> list[dict]:
        return [f for f in self.findings if f["code"] == "GEM000" and INTERNAL_ERROR_PREFIX not in f["message"]]

    @property
    def crashed(self) -> bool:
        return self.returncode not in (0, 1) or "Traceback" in self.stderr


def unpack(archive: Path, scratch: Path) -> Path:
    """Unpack an archive into ``scratch``; returns the package directory (the single top folder of an sdist)."""
    destination = scratch / archive_stem(archive)
    destination.mkdir(parents=True)
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(destination)
    else:
        with tarfile.open(archive) as bundle:
            if hasattr(tarfile, "data_filter"):
                bundle.extractall(destination, filter="data")  # no links or paths out of the destination
            else:  # Python < 3.11.4
                bundle.extractall(destination)
    entries = list(destination.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else destination


def lintable_files(target: Path) -> Counter:
    """What gemlint will read in ``target``, by language (the same discovery and default excludes)."""
    cwd = Path.cwd()
    try:
        os.chdir(target)
        discovery = Discovery(default_config(target), cwd=target)
        return Counter(source.language.value for source in discovery.files([Path(".")]))
    finally:
        os.chdir(cwd)


def archive_stem(archive: Path) -> str:
    return re.sub(r"(\.tar)?\.[^.]+$", "", archive.name)


def lint(target: Path, name: str, jobs: int | None, scratch: Path, index: int = 0) -> TargetResult:
    report = scratch / f"{index}.json"
    errors = scratch / f"{index}.stderr"
    command = [sys.executable, "-m", "gemlint", ".", "--no-cache", "--format", "json", "--output", str(report)]
    if jobs:
        command += ["--jobs", str(jobs)]
    started = time.monotonic()
    with errors.open("w") as stream:
        process = subprocess.Popen(command, cwd=target, stdout=subprocess.DEVNULL, stderr=stream)
        _, status, usage = os.wait4(process.pid, 0)  # ru_maxrss covers the reaped worker processes too
    wall = time.monotonic() - started
    stderr = errors.read_text(errors="replace")
    findings = json.loads(report.read_text()) if report.exists() else []
    files = lintable_files(target)
    return TargetResult(name, files, os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss, stderr, findings)


def reason(message: str) -> str:
    """A GEM000 message without its file-specific details (byte offsets, names), for grouping."""
    return re.sub(r"\d+", "N", message.split(";")[0])[:90]


def summary(results: list[TargetResult]) -> dict:
    findings = [f for r in results for f in r.findings]
    files = sum((r.files for r in results), Counter())
    return {
        "targets": [
            {
                "name": r.name,
                "files": dict(r.files),
                "exit_code": r.returncode,
                "wall_s": round(r.wall, 1),
                "peak_rss_mib": round(r.peak_rss_kib / 1024),
                "crashes": len(r.internal) + int(r.crashed),
                "gem000": len(r.parse_errors),
                "findings": dict(sorted(Counter(f["code"] for f in r.findings).items())),
            }
            for r in results
        ],
        "files": dict(files),
        "files_total": sum(files.values()),
        "crashes": sum(len(r.internal) + int(r.crashed) for r in results),
        "gem000": sum(len(r.parse_errors) for r in results),
        "gem000_reasons": dict(Counter(reason(f["message"]) for r in results for f in r.parse_errors).most_common()),
        "findings_by_code": dict(sorted(Counter(f["code"] for f in findings).items())),
        "wall_s": round(sum(r.wall for r in results), 1),
        "peak_rss_mib": round(max((r.peak_rss_kib for r in results), default=0) / 1024),
    }


def print_report(results: list[TargetResult], data: dict, show: int) -> None:
    width = max((len(r.name) for r in results), default=6)
    print(f"{'target':<{width}}  {'files':>6}  {'wall s':>7}  {'RSS MiB':>7}  crashes  GEM000  findings")
    for row in data["targets"]:
        found = ", ".join(f"{code} {n}" for code, n in row["findings"].items() if code != "GEM000") or "-"
        print(
            f"{row['name']:<{width}}  {sum(row['files'].values()):>6}  {row['wall_s']:>7.1f}  {row['peak_rss_mib']:>7}"
            f"  {row['crashes']:>7}  {row['gem000']:>6}  {found}"
        )
    languages = ", ".join(f"{language} {n}" for language, n in sorted(data["files"].items()))
    print(f"\nfiles linted: {data['files_total']} ({languages})")
    print(f"wall {data['wall_s']:.1f} s in total; peak RSS {data['peak_rss_mib']} MiB")
    print(f"crashes: {data['crashes']}")
    print(f"GEM000 (input gemlint cannot read or parse): {data['gem000']}")
    for why, count in list(data["gem000_reasons"].items())[:show]:
        print(f"  {count:>5}  {why}")
    print("findings by code: " + (", ".join(f"{code} {n}" for code, n in data["findings_by_code"].items()) or "none"))
    for result in results:
        for finding in result.internal[:show]:
            print(f"  internal error: {result.name}/{finding['path']}:{finding['line']}: {finding['message'][:300]}")
        if result.crashed:
            print(f"  {result.name}: exit code {result.returncode}\n{result.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", type=Path, help="package directories or archives (default: the corpus.sh corpus)")
    parser.add_argument("--jobs", type=int, help="gemlint --jobs (default: gemlint's, all cores)")
    parser.add_argument("--json", type=Path, help="also write the summary as JSON to FILE")
    parser.add_argument("--show", type=int, default=10, help="GEM000 reasons and internal errors to list")
    args = parser.parse_args(argv)
    targets = args.targets or sorted(p for p in DEFAULT.iterdir() if p.is_dir() and p.name != "dl")
    results = []
    with tempfile.TemporaryDirectory(prefix="gemlint-smoke-") as scratch_name:
        scratch = Path(scratch_name)
        for index, given in enumerate(targets):
            archive = given.is_file() and given.name.endswith(ARCHIVES)
            target = unpack(given, scratch / "unpacked" / str(index)) if archive else given
            print(f"linting {given} ...", file=sys.stderr, flush=True)
            name = archive_stem(given) if archive else given.resolve().name
            results.append(lint(target.resolve(), name, args.jobs, scratch, index))
    data = summary(results)
    print_report(results, data, args.show)
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 1 if data["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
