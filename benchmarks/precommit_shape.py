"""The pre-commit shape: what linting a few files of a large project costs, against linting them alone.

    python benchmarks/precommit_shape.py [--corpus DIR] [--runs N] [--edit comment|code] [--no-fresh] [--json FILE] FILE [FILE ...]

FILE are paths inside the corpus (the first is the one edited). Measured, each a whole process started
in the corpus folder, as pre-commit starts it:

- ``warm-edited``: the project's cache is full (one untimed run over the corpus first); the first file is
  edited and linted alone, as a hook passes it, then restored. ``--edit comment`` (the default) appends a
  comment: the module defines, imports and calls what it did, and the facts derived from every module are
  read back. ``--edit code`` appends a function that calls another: those facts are derived afresh.
- ``alone``: the same edited file copied into an empty folder and linted there (no project around it).
- ``fresh-three``: the files linted with an empty cache, as on a fresh clone (the project index included); left out
  with ``--no-fresh`` (on transformers, each takes about 8 s).

A YAML file takes ``--edit comment`` (a ``#`` line is a comment in YAML too): the pre-commit shape of a deployment
repository.

The targets compare ``warm-edited`` with ``alone`` and ``fresh-three`` with the LibCST parse of the whole
corpus (``benchmarks/compare.py --only libcst-parse-1proc``).
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
import time
from pathlib import Path

from bytecode import compile_gemlint

DEFAULT_CORPUS = Path(os.environ.get("GEMLINT_CORPUS", Path.home() / ".cache" / "gemlint-corpus"))


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS / "transformers")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--edit", choices=("comment", "code"), default="comment")
    parser.add_argument("--no-fresh", action="store_true", help="leave out the fresh clone's run")
    parser.add_argument("--json", type=Path)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    compile_gemlint()
    corpus = args.corpus.resolve()
    gemlint = [sys.executable, "-m", "gemlint", "--exit-zero", "-q"]
    edited = corpus / args.files[0]
    original = edited.read_bytes()
    cache = Path(tempfile.mkdtemp(prefix="gemlint-precommit-cache-"))
    alone = Path(tempfile.mkdtemp(prefix="gemlint-precommit-alone-"))
    samples: dict[str, list[float]] = {"warm-edited": [], "alone": [], "fresh-three": []}
    try:
        subprocess.run([*gemlint, "--cache-dir", str(cache), "."], cwd=corpus, stdout=subprocess.DEVNULL, check=False)
        for run in range(args.runs):
            marker = f"\n# edited {run}\n" if args.edit == "comment" else f"\n\ndef _edited_{run}(values):\n    return sorted(values)\n"
            marker = marker.encode()
            edited.write_bytes(original + marker)
            samples["warm-edited"].append(timed([*gemlint, "--cache-dir", str(cache), str(args.files[0])], corpus))
            (alone / edited.name).write_bytes(original + marker)
            samples["alone"].append(timed([*gemlint, "--no-cache", edited.name], alone))
            edited.write_bytes(original)
            if args.no_fresh:
                continue
            fresh = Path(tempfile.mkdtemp(prefix="gemlint-precommit-fresh-"))
            samples["fresh-three"].append(timed([*gemlint, "--cache-dir", str(fresh), *map(str, args.files)], corpus))
            shutil.rmtree(fresh, ignore_errors=True)
    finally:
        edited.write_bytes(original)
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(alone, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in samples.items() if values}
    for name, value in medians.items():
        print(f"{name:<12} {value:8.3f} s  (runs: {', '.join(f'{v:.3f}' for v in samples[name])})")
    print(f"warm-edited / alone: {medians['warm-edited'] / medians['alone']:.2f} x")
    if args.json:
        args.json.write_text(json.dumps({"files": [str(f) for f in args.files], "edit": args.edit, "samples": samples, "medians": medians}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
