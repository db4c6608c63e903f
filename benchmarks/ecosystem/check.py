"""The ecosystem check: gemlint over whole real repositories, against a ledger of judged findings.

    python benchmarks/ecosystem/check.py --src DIR [--half HALF|all] [--category C ...]
        [--repo OWNER/NAME ...] [--preview] [--jobs N] [--parse] [--repeat N] [--save FILE] [--unjudged FILE]

Like ruff's ``scripts/check_ecosystem.py`` and mypy_primer, it answers "what does this change do to
code nobody here wrote?". Each repository of ``repositories.tsv`` is expected, checked out at its pinned
commit, in ``DIR/<owner>__<name>`` (fetched outside this repository: no third-party code is committed).
Each is linted whole from its root, as users run it (``gemlint --format json --no-cache --exit-zero .``),
and its findings are matched on fingerprints against ``ledger.csv``: the verdict a maintainer of that
project would give each finding (right / wrong / debatable), with a one-line reason.

Printed: per repository the findings now, the new (unjudged) and gone ones, the run time and the peak memory
of the largest process (with ``--parse``, also the time LibCST takes to parse the repository's Python files in one
process, ``benchmarks/parse_only.py``, and gemlint's time as a multiple of it, then as a multiple of its
front-ends' parse: every file it reads parsed by the parser its front-end uses, LibCST, tree-sitter or YAML);
per rule the findings, right, wrong, debatable, unjudged and the precision right / (right + wrong). With
``--parse``, the last lines count the repositories gemlint is slower on than each parse and name the five
slowest, each with its parse time and what it holds that the LibCST parse does not read (notebooks,
C/C++/CUDA, manifests). A
repository of a few files is linted in a few tenths of a second, where one run's noise decides the comparison:
``--repeat N`` runs gemlint and the parse N times each, alternately, and takes the medians (and reports a
repository whose findings differ between runs). ``--unjudged`` writes the unjudged findings as ledger rows
without a verdict, ready to be judged and appended.

Not run in CI: CI has no network to fetch the repositories.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from statistics import median
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from bytecode import compile_gemlint  # noqa: E402  (benchmarks/, beside this folder)

PARSE_ONLY = HERE.parent / "parse_only.py"
REPOSITORIES = HERE / "repositories.tsv"
LEDGER = HERE / "ledger.csv"
LEDGER_FIELDS = ("repo", "commit", "path", "line", "rule", "fingerprint", "verdict", "reason")
VERDICTS = ("right", "wrong", "debatable")


@dataclass(frozen=True)
class Repository:
    name: str
    commit: str
    category: str
    half: str

    @property
    def folder_name(self) -> str:
        return self.name.replace("/", "__")


@dataclass
class Outcome:
    repository: Repository
    seconds: float
    findings: list[dict] = field(default_factory=list)
    error: str = ""
    peak_mib: float = 0.0  # the largest process's resident memory (gemlint's and its workers')
    parse_seconds: float | None = None  # LibCST parsing every .py file of the repository, one process
    #: Every file gemlint reads parsed with its front-end's parser (LibCST, tree-sitter, YAML), one process:
    #: the parse gemlint cannot avoid in a repository that is mostly C++ or manifests.
    frontends_seconds: float | None = None
    #: Bytes gemlint reads that the parse does not, by language (notebooks, C/C++/CUDA, manifests): what a
    #: repository slower than its parse spends on besides Python.
    other_bytes: dict[str, int] = field(default_factory=dict)


def read_repositories(path: Path = REPOSITORIES) -> list[Repository]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    rows = csv.DictReader(lines, delimiter="\t")
    return [Repository(row["repo"], row["commit"], row["category"], row["half"]) for row in rows]


def read_ledger(path: Path = LEDGER) -> dict[tuple[str, str], dict]:
    """(repo, fingerprint) -> ledger row. A verdict outside right/wrong/debatable is an error."""
    if not path.exists():
        return {}
    ledger = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            if row["verdict"] not in VERDICTS:
                raise SystemExit(f"{path}:{number}: verdict {row['verdict']!r} is not one of {', '.join(VERDICTS)}")
            ledger[(row["repo"], row["fingerprint"])] = row
    return ledger


def lint(repository: Repository, folder: Path, preview: bool, jobs: int | None) -> Outcome:
    command = [sys.executable, "-m", "gemlint", "--format", "json", "--no-cache", "--exit-zero", "."]
    if preview:
        command.append("--preview")
    if jobs:
        command += ["--jobs", str(jobs)]
    code, stdout, stderr, seconds, peak = measured(command, folder)
    if code not in (0, 1):
        return Outcome(repository, seconds, error=stderr.strip().splitlines()[-1:][0] if stderr.strip() else f"exit {code}", peak_mib=peak)
    return Outcome(repository, seconds, json.loads(stdout or "[]"), peak_mib=peak)


def measured(command: list[str], folder: Path) -> tuple[int, str, str, float, float]:
    """Run ``command`` in ``folder``: exit code, output, error output, wall seconds and the peak RSS (MiB) of
    the largest process (on Linux a reaped child's ``ru_maxrss`` covers its own reaped workers)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with ThreadPoolExecutor(max_workers=2) as readers:
        stdout, stderr = readers.submit(process.stdout.read), readers.submit(process.stderr.read)  # type: ignore[union-attr]
        _, status, usage = os.wait4(process.pid, 0)
        out, err = stdout.result(), stderr.result()
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, out, err, time.perf_counter() - started, usage.ru_maxrss / 1024


def parse_time(folder: Path, mode: str = "libcst") -> float:
    return measured([sys.executable, str(PARSE_ONLY), mode, "."], folder)[3]


def timed_outcome(repository: Repository, folder: Path, preview: bool, jobs: int | None, parse: bool, repeat: int) -> Outcome:
    """Lint (and parse) ``repeat`` times, alternately, so that both see the same machine: the median times, the
    largest process, and the first run's findings (an error when a later run finds otherwise)."""
    runs: list[Outcome] = []
    parses: list[float] = []
    frontends: list[float] = []
    for _ in range(repeat):
        runs.append(lint(repository, folder, preview, jobs))
        if parse:
            parses.append(parse_time(folder))
            frontends.append(parse_time(folder, "frontends"))
        if runs[-1].error:
            break
    first = runs[0]
    outcome = Outcome(repository, median([r.seconds for r in runs]), first.findings, first.error, max(r.peak_mib for r in runs))
    if parses:
        outcome.parse_seconds = median(parses)
        outcome.frontends_seconds = median(frontends)
        outcome.other_bytes = other_bytes(folder)
    if not outcome.error and any(_fingerprints(r) != _fingerprints(first) for r in runs[1:]):
        outcome.error = "the findings differ between runs"
    return outcome


def other_bytes(folder: Path) -> dict[str, int]:
    """The bytes of the files under ``folder`` that gemlint lints and the parse does not, by language (the
    walk's own skips, such as virtualenvs and vendored folders, not applied: an upper bound)."""
    from gemlint.languages import Language, language_of_name

    found: Counter = Counter()
    for top, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if name != ".git"]
        for name in names:
            language = language_of_name(name)
            if language is not None and language is not Language.PYTHON:
                try:
                    found[language.value] += os.path.getsize(os.path.join(top, name))
                except OSError:
                    continue
    return dict(found)


def _besides_python(outcome: Outcome) -> str:
    """``"4.1 MB native"``: what the repository holds besides Python, the largest first (empty when little)."""
    parts = [f"{size / 1e6:.1f} MB {language}" for language, size in sorted(outcome.other_bytes.items(), key=lambda item: -item[1]) if size >= 100_000]
    return f" ({', '.join(parts)})" if parts else ""


def _fingerprints(outcome: Outcome) -> list[str]:
    return sorted(finding.get("fingerprint", "") for finding in outcome.findings)


def precision(counts: Counter) -> str:
    judged = counts["right"] + counts["wrong"]
    return f"{counts['right'] / judged:.0%}" if judged else "–"


def report(outcomes: list[Outcome], ledger: dict[tuple[str, str], dict]) -> tuple[str, list[dict]]:
    lines = [f"{'repository':44} {'half':8} {'findings':>8} {'new':>5} {'gone':>5} {'seconds':>8} {'peak MiB':>8} {'x parse':>7} {'x front-ends':>12}"]
    per_rule: dict[str, Counter] = defaultdict(Counter)
    unjudged: list[dict] = []
    for outcome in outcomes:
        name = outcome.repository.name
        if outcome.error:
            lines.append(f"{name:44} {outcome.repository.half:8} error: {outcome.error}")
            continue
        seen = set()
        new = 0
        for finding in outcome.findings:
            key = (name, finding.get("fingerprint", ""))
            seen.add(key)
            row = ledger.get(key)
            counts = per_rule[finding["code"]]
            counts["findings"] += 1
            if row is None:
                new += 1
                counts["unjudged"] += 1
                unjudged.append(
                    {"repo": name, "commit": outcome.repository.commit, "path": finding["path"], "line": finding["line"],
                     "rule": finding["code"], "fingerprint": key[1], "verdict": "", "reason": finding["message"]}
                )
            else:
                counts[row["verdict"]] += 1
        gone = [row for key, row in ledger.items() if key[0] == name and key not in seen]
        for row in gone:
            per_rule[row["rule"]]["gone " + row["verdict"]] += 1
        ratio = f"{outcome.seconds / outcome.parse_seconds:7.2f}" if outcome.parse_seconds else f"{'–':>7}"
        ratio += f" {outcome.seconds / outcome.frontends_seconds:12.2f}" if outcome.frontends_seconds else ""
        lines.append(f"{name:44} {outcome.repository.half:8} {len(outcome.findings):>8} {new:>5} {len(gone):>5} {outcome.seconds:>8.1f} {outcome.peak_mib:>8.0f} {ratio}")
    lines.append("")
    lines.append(f"{'rule':8} {'findings':>8} {'right':>6} {'wrong':>6} {'debat.':>6} {'unjudged':>8} {'precision':>9}   gone (right/wrong/debatable)")
    for rule in sorted(per_rule):
        c = per_rule[rule]
        gone = "/".join(str(c["gone " + v]) for v in VERDICTS)
        lines.append(f"{rule:8} {c['findings']:>8} {c['right']:>6} {c['wrong']:>6} {c['debatable']:>6} {c['unjudged']:>8} {precision(c):>9}   {gone}")
    timed = [o for o in outcomes if not o.error and o.parse_seconds]
    if timed:
        slower = sorted((o for o in timed if o.seconds > o.parse_seconds), key=lambda o: o.parse_seconds / o.seconds)
        ratios = sorted(o.seconds / o.parse_seconds for o in timed)
        worst = ", ".join(
            f"{o.repository.name} {o.seconds / o.parse_seconds:.2f}x, parse {o.parse_seconds:.2f} s{_besides_python(o)}" for o in slower[:5]
        )
        lines.append("")
        lines.append(
            f"slower than their parse: {len(slower)} of {len(timed)} (median {median(ratios):.2f}x, "
            f"total {sum(o.seconds for o in timed) / sum(o.parse_seconds for o in timed):.2f}x)" + (f"; slowest: {worst}" if worst else "")
        )
        parsed = [o for o in timed if o.frontends_seconds]
        if parsed:
            slower = sorted((o for o in parsed if o.seconds > o.frontends_seconds), key=lambda o: o.frontends_seconds / o.seconds)  # type: ignore[operator]
            worst = ", ".join(f"{o.repository.name} {o.seconds / o.frontends_seconds:.2f}x, front-ends {o.frontends_seconds:.2f} s" for o in slower[:5])  # type: ignore[operator]
            lines.append(
                f"slower than their front-ends' parse (LibCST, tree-sitter, YAML): {len(slower)} of {len(parsed)} "
                f"(median {median(sorted(o.seconds / o.frontends_seconds for o in parsed)):.2f}x)" + (f"; slowest: {worst}" if worst else "")  # type: ignore[operator]
            )
    return "\n".join(lines), unjudged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, required=True, help="folder holding <owner>__<name> checkouts")
    halves = sorted({r.half for r in read_repositories()})
    parser.add_argument("--half", choices=(*halves, "all"), default="all", help="a half of repositories.tsv")
    parser.add_argument("--category", action="append", help="python, training, native, deployment (repeatable)")
    parser.add_argument("--repo", action="append", help="owner/name (repeatable)")
    parser.add_argument("--preview", action="store_true")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--parse", action="store_true", help="also time LibCST parsing each repository (parse_only.py)")
    parser.add_argument("--repeat", type=int, default=1, help="run each N times, alternately with the parse; medians")
    parser.add_argument("--save", type=Path, help="write every finding of the run as JSON")
    parser.add_argument("--unjudged", type=Path, help="write the unjudged findings as ledger rows (CSV)")
    args = parser.parse_args(argv)
    compile_gemlint()
    ledger = read_ledger()
    chosen = [
        r for r in read_repositories()
        if (args.half == "all" or r.half == args.half)
        and (not args.category or r.category in args.category)
        and (not args.repo or r.name in args.repo)
    ]
    outcomes = []
    for repository in chosen:
        folder = args.src / repository.folder_name
        if repository.commit == "-" or not folder.is_dir():
            print(f"{repository.name}: not checked out in {args.src}; skipped", file=sys.stderr)
            continue
        outcomes.append(timed_outcome(repository, folder, args.preview, args.jobs, args.parse, max(1, args.repeat)))
        print(f"{repository.name}: {len(outcomes[-1].findings)} findings in {outcomes[-1].seconds:.1f}s, {outcomes[-1].peak_mib:.0f} MiB", file=sys.stderr)
    text, unjudged = report(outcomes, ledger)
    print(text)
    if args.save:
        args.save.write_text(json.dumps([
            {"repo": o.repository.name, "seconds": o.seconds, "peak_mib": o.peak_mib, "parse_seconds": o.parse_seconds, "frontends_seconds": o.frontends_seconds, "error": o.error, "findings": o.findings}
            for o in outcomes
        ], indent=1))
    if args.unjudged:
        with args.unjudged.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, LEDGER_FIELDS)
            writer.writeheader()
            writer.writerows(unjudged)
    return 0


if __name__ == "__main__":
    sys.exit(main())
