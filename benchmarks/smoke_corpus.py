"""Real-corpus smoke run (SPEC §10): lint downloaded packages and report crashes, GEM000s, time and memory.

    python benchmarks/smoke_corpus.py [DIR ...]    default: the corpus of ../shared/perf/corpus.sh

Not run in CI (too large). A crash is any GEM000 that reports an internal error, a non-0/1 exit
code, or a traceback on stderr; the run must show 0 of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from gemlint.engine import INTERNAL_ERROR_PREFIX

DEFAULT = Path(os.environ.get("GEMLINT_CORPUS", Path.home() / ".cache" / "gemlint-corpus"))


def main() -> int:
    targets = [Path(p) for p in sys.argv[1:]] or sorted(p for p in DEFAULT.iterdir() if p.is_dir() and p.name != "dl")
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "gemlint", "--no-cache", "--format", "json", "--output", str(report), *map(str, targets)]
        errors = Path(scratch) / "stderr.txt"
        started = time.monotonic()
        with errors.open("w") as stream:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stream)
            _, status, usage = os.wait4(process.pid, 0)  # ru_maxrss covers the reaped worker processes too
        wall = time.monotonic() - started
        returncode = os.waitstatus_to_exitcode(status)
        stderr = errors.read_text(errors="replace")
        findings = json.loads(report.read_text()) if report.exists() else []
    internal = [f for f in findings if f["code"] == "GEM000" and INTERNAL_ERROR_PREFIX in f["message"]]
    parse_errors = [f for f in findings if f["code"] == "GEM000" and f not in internal]
    crashed = returncode not in (0, 1) or "Traceback" in stderr
    files = sum(1 for t in targets for p in t.rglob("*") if p.is_file())
    print(f"targets: {', '.join(map(str, targets))} ({files} files)")
    print(f"exit code {returncode}; wall {wall:.1f} s; peak RSS {usage.ru_maxrss / 1024:.0f} MiB")
    print(f"crashes: {len(internal) + int(crashed)} (internal errors {len(internal)}, process crash {crashed})")
    print(f"GEM000 parse errors: {len(parse_errors)}")
    print("findings by code: " + ", ".join(f"{code} {count}" for code, count in sorted(Counter(f['code'] for f in findings).items())))
    for finding in internal[:20]:
        print(f"  internal: {finding['path']}:{finding['line']}: {finding['message'][:200]}")
    if crashed:
        print(stderr[-2000:])
    return 1 if internal or crashed else 0


if __name__ == "__main__":
    sys.exit(main())
