"""The ``gemlint`` command line (SPEC §3)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from gemlint.version import __version__
from gemlint.baseline import BaselineError, load_baseline, new_findings
from gemlint.cache import Cache
from gemlint.config import Config, ConfigError, default_config, find_config_file, load_config, validate_codes
from gemlint.diagnostics import Diagnostic
from gemlint.docs import fix_label, languages_label, name_label, rule_text, rules_markdown
from gemlint.fingerprints import fingerprint_diagnostics
from gemlint.registry import all_rules, known_codes, rule_by_code
from gemlint.reporters.github import render_github
from gemlint.reporters.json import render_json
from gemlint.reporters.sarif import render_sarif
from gemlint.reporters.text import render_text
from gemlint.repository import find_repository_root
from gemlint.runner import FixMode, RunResult, run

OUTPUT_FORMATS = ("text", "json", "sarif", "github")
#: Formats that carry each finding's fingerprint (and so can serve as a --baseline).
_FINGERPRINTED = ("json", "sarif")
PROGRESS_MIN_FILES = 200


def progress_wanted(quiet: bool, fmt: str, stream, environ) -> bool:
    """Only for a person watching a terminal: never in CI logs, pipes, or machine-readable output."""
    return not quiet and fmt == "text" and stream.isatty() and not environ.get("CI")
CACHE_DIRNAME = ".gemlint_cache"


class DefaultCommandGroup(click.Group):
    """``gemlint src/`` means ``gemlint check src/``; ``gemlint rules`` and ``gemlint explain`` are subcommands."""

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise
        except Exception as error:
            # A bug in gemlint, not in the input: exit 2 (SPEC §3) with one line, the traceback kept in a file.
            click.echo(f"gemlint: internal error: {type(error).__name__}: {error}; {_save_traceback()} please report it", err=True)
            ctx.exit(2)


def _save_traceback() -> str:
    import tempfile
    import traceback

    try:
        handle, path = tempfile.mkstemp(prefix="gemlint-crash-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(traceback.format_exc())
        return f"the traceback is in {path};"
    except OSError:
        return ""


def _codes(option: str, values: tuple[str, ...]) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = [code.strip().upper() for value in values for code in value.split(",") if code.strip()]
    return validate_codes(f"option '{option}'", codes, known_codes())


def resolve_config(
    paths: list[Path],
    config_file: Path | None,
    isolated: bool,
    project_root: Path | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    force_exclude: bool,
    preview: bool = False,
) -> Config:
    """Config file first, then command-line options on top of it (the command line wins)."""
    codes = known_codes()
    if isolated:
        config = default_config(project_root or Path.cwd())
    elif config_file is not None:
        config = load_config(config_file, codes)
    else:
        start = Path(os.path.abspath(paths[0])) if paths else Path.cwd()
        found = find_config_file(start if os.path.exists(start) else Path.cwd())
        config = load_config(found, codes) if found else default_config(Path.cwd())
    cli_select = _codes("--select", select)
    cli_ignore = _codes("--ignore", ignore)
    cli_extend = _codes("--extend-select", extend_select)
    return config.with_overrides(
        select=cli_select,
        ignore=config.ignore + cli_ignore if cli_ignore else None,
        extend_select=config.extend_select + cli_extend if cli_extend else None,
        force_exclude=True if force_exclude else None,
        preview=True if preview else None,
        root=project_root.resolve() if project_root else None,
    )


@dataclass
class Report:
    """What every output format of one run is rendered from."""

    result: RunResult
    diagnostics: list[Diagnostic]  # after --baseline
    root: Path  # the repository root that paths and fingerprints are anchored at
    fingerprints: dict[Diagnostic, str] | None = None
    sarif_category: str | None = None


def render(fmt: str, report: Report, *, color: bool, show_source: bool, statistics: bool, unsafe: bool, quiet: bool) -> str:
    diagnostics = report.diagnostics
    if fmt == "json":
        return render_json(diagnostics, report.fingerprints)
    if fmt == "sarif":
        return render_sarif(
            diagnostics, rules=all_rules(), root=report.root, fingerprints=report.fingerprints, category=report.sarif_category
        )
    if fmt == "github":
        return render_github(diagnostics, report.root)
    return render_text(
        diagnostics,
        color=color,
        show_source=show_source,
        show_statistics=statistics,
        fixed=report.result.fixed,
        unsafe=unsafe,
        quiet=quiet,
    )


def _write(path: Path, content: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", errors="backslashreplace")
    except OSError as error:
        raise click.ClickException(f"cannot write {path}: {error.strerror or error}") from None


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gemlint")
def main() -> None:
    """gemlint: static analysis for ML inference code.

    Run `gemlint [PATH]...` to lint (the same as `gemlint check`).
    """


@main.command("check")
# readable=False: an unreadable file or folder is a GEM000 for that path, not a usage error for the run.
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, readable=False))
@click.option("--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable (replaces the config's select).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable on top of select.")
@click.option("--preview", is_flag=True, help="Enable preview rules (not yet proven on real code).")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="text", show_default=True, help="Output format.")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--output-format", "extra_outputs", multiple=True, metavar="FMT:FILE", help="An extra report in the same run, e.g. sarif:gemlint.sarif.")
@click.option("--sarif-category", metavar="NAME", help="SARIF automationDetails.id, to upload several gemlint runs for one commit.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), help="Report only findings absent from this earlier JSON or SARIF report.")
@click.option("--write-baseline", type=click.Path(path_type=Path, dir_okay=False), help="Write every current finding to FILE as a baseline and exit 0.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named explicitly (for pre-commit).")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (with --fix) or show unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a diff instead of writing them.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel worker processes (default: all cores).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="GEMLINT_CACHE_DIR", help="Cache directory (default: .gemlint_cache/ in the project root).")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Use this config file.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--project-root", type=click.Path(path_type=Path, file_okay=False), help="Root for globs and cross-file context.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when problems are found.")
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of each finding.")
@click.option("--show-source", is_flag=True, help="Show the source line of each finding.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
@click.option("--verbose", "-v", is_flag=True, help="Print what gemlint reads and decides.")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    preview: bool,
    fmt: str,
    output: Path | None,
    extra_outputs: tuple[str, ...],
    sarif_category: str | None,
    baseline: Path | None,
    write_baseline: Path | None,
    force_exclude: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    jobs: int | None,
    no_cache: bool,
    cache_dir: Path | None,
    config_file: Path | None,
    isolated: bool,
    project_root: Path | None,
    exit_zero: bool,
    statistics: bool,
    show_source: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Lint PATHS (default: the current directory)."""
    targets = list(paths) or [Path(".")]
    outputs: list[tuple[str, Path]] = []
    for spec in extra_outputs:
        name, sep, file = spec.partition(":")
        if not sep or name not in OUTPUT_FORMATS or not file:
            raise click.BadParameter(f"expected FMT:FILE with FMT one of {', '.join(OUTPUT_FORMATS)}, got {spec!r}", param_hint="--output-format")
        outputs.append((name, Path(file)))
    if sarif_category is not None and not sarif_category.strip():
        raise click.BadParameter("must not be empty", param_hint="--sarif-category")
    try:
        accepted = load_baseline(baseline) if baseline is not None else frozenset()
    except BaselineError as error:
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)
    try:
        config = resolve_config(targets, config_file, isolated, project_root, select, ignore, extend_select, force_exclude, preview)
    except ConfigError as error:
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)
    if verbose:
        click.echo(f"gemlint {__version__}: config {config.source or '(defaults)'}, root {config.root}", err=True)

    show_progress = progress_wanted(quiet, fmt, sys.stderr, os.environ)

    def progress(done: int, total: int) -> None:
        if show_progress and total >= PROGRESS_MIN_FILES and (done % 50 == 0 or done == total):
            click.echo(f"\rLinting {done}/{total} files", err=True, nl=done == total)

    mode = FixMode(apply=fix and not diff, diff=diff, unsafe=unsafe_fixes)
    cache = None if no_cache else Cache(cache_dir or config.root / CACHE_DIRNAME)
    result = run(targets, config, mode, jobs=jobs, progress=progress, cache=cache)
    for warning in result.warnings:
        click.echo(f"gemlint: warning: {warning}", err=True)
    if verbose:
        _explain_unread_triton_configs(result)

    unsafe = unsafe_fixes
    if diff:
        diffs = "".join(report.diff for report in result.files)
        if diffs:
            click.echo(diffs, nl=False)
        would = sum(report.fixed for report in result.files if report.diff)
        if not quiet:
            click.echo(f"Would fix {would} problem{'s' if would != 1 else ''}." if would else "No fixes available.", err=True)
        sys.exit(0 if exit_zero or not would else 1)

    diagnostics = result.diagnostics
    root = find_repository_root()
    needs_fingerprints = baseline or write_baseline or fmt in _FINGERPRINTED or any(name in _FINGERPRINTED for name, _ in outputs)
    fingerprints = fingerprint_diagnostics(diagnostics, root) if needs_fingerprints else None
    if write_baseline is not None:
        _write(write_baseline, render_json(diagnostics, fingerprints))
        if not quiet:
            click.echo(f"gemlint: wrote {len(diagnostics)} finding{'s' if len(diagnostics) != 1 else ''} to the baseline {write_baseline}", err=True)
        sys.exit(0)
    if baseline is not None:
        assert fingerprints is not None
        reported = new_findings(diagnostics, fingerprints, accepted)
        if not quiet and len(reported) < len(diagnostics):
            hidden = len(diagnostics) - len(reported)
            click.echo(f"gemlint: {hidden} finding{'s' if hidden != 1 else ''} in the baseline {baseline} not reported", err=True)
        diagnostics = reported
    report = Report(result, diagnostics, root, fingerprints, sarif_category)

    stdout_color = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    primary = render(fmt, report, color=stdout_color, show_source=show_source, statistics=statistics, unsafe=unsafe, quiet=quiet)
    if output is not None:
        _write(output, primary)
    else:
        click.echo(primary, nl=False, color=stdout_color)
    for name, file in outputs:
        _write(file, render(name, report, color=False, show_source=False, statistics=False, unsafe=unsafe, quiet=False))
    sys.exit(0 if exit_zero or not diagnostics else 1)


def _explain_unread_triton_configs(result: RunResult) -> None:
    """Without Triton's schema (an optional dependency) config.pbtxt files are skipped: say so, and why."""
    from gemlint.frontends.triton_config import schema_problem
    from gemlint.languages import TRITON_CONFIG_NAME

    count = sum(1 for report in result.files if report.display.rsplit("/", 1)[-1] == TRITON_CONFIG_NAME)
    problem = schema_problem() if count else None
    if problem:
        click.echo(
            f"gemlint: {count} Triton model configuration{'s' if count != 1 else ''} ({TRITON_CONFIG_NAME}) not checked: "
            f"{problem}; GEM603 did not run and GEM201 cannot see Triton models' declared output shapes",
            err=True,
        )


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "markdown")), default="table", show_default=True)
def rules_command(fmt: str) -> None:
    """List every rule (markdown is docs/rules.md)."""
    rules = all_rules()
    if fmt == "markdown":
        click.echo(rules_markdown(rules), nl=False)
    elif fmt == "json":
        click.echo(
            json.dumps(
                [
                    {
                        "code": r.code,
                        "name": r.name,
                        "severity": r.severity.value,
                        "languages": sorted(language.value for language in r.languages),
                        "summary": r.summary,
                        "fix": r.fix.value if r.fix else None,
                        "tags": list(r.tags),
                        "precision": r.reported_precision(),
                        "preview": r.preview,
                    }
                    for r in rules
                ],
                indent=2,
            )
        )
    else:
        width = max(len(name_label(r)) for r in rules)
        for r in rules:
            click.echo(f"{r.code}  {name_label(r):<{width}}  {r.severity.value:<7}  {fix_label(r):<6}  {languages_label(r):<10}  {r.summary}")


@main.command("explain")
@click.argument("code")
def explain(code: str) -> None:
    """Show one rule's full documentation."""
    rule = rule_by_code(code)
    if rule is None:
        click.echo(f"gemlint: error: unknown rule code {code!r} (see `gemlint rules`)", err=True)
        sys.exit(2)
    click.echo(rule_text(rule), nl=False)


@main.command("bench")
@click.option("--rule", "rules", multiple=True, metavar="CODE", help="Benchmark these rules only (codes or prefixes, repeatable).")
@click.option("--device", type=click.Choice(("auto", "cpu", "cuda")), default="auto", show_default=True, help="Where the pairs run.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True, help="Output format.")
@click.option("--quick", is_flag=True, help="Small sizes and few repetitions (for tests and smoke runs).")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to FILE instead of stdout.")
def bench(rules: tuple[str, ...], device: str, fmt: str, quick: bool, output: Path | None) -> None:
    """Run each rule's bad and good variant and measure what the rule's claim is about.

    Rules whose device, library or toolchain is missing are reported as skipped, with the reason.
    The measuring libraries come with the `bench` extra: pip install 'gemlint[bench]'.
    """
    from gemlint.bench.render import render_table
    from gemlint.bench.result import Status
    from gemlint.bench.runner import INSTALL_HINT, run_benchmarks, select_codes

    try:
        codes = select_codes([code for value in rules for code in value.split(",") if code.strip()]) if rules else None
    except ValueError as error:
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)
    show_progress = sys.stderr.isatty()

    def progress(code: str) -> None:
        if show_progress:
            click.echo(f"\rbenchmarking {code}...", err=True, nl=False)

    results = run_benchmarks(codes, device=device, quick=quick, progress=progress)
    if show_progress:
        click.echo("\r" + " " * 30 + "\r", err=True, nl=False)
    text = json.dumps([result.to_json() for result in results], indent=2) + "\n" if fmt == "json" else render_table(results)
    if output is not None:
        _write(output, text)
    else:
        click.echo(text, nl=False)
    if any(result.status is Status.SKIPPED and INSTALL_HINT in (result.reason or "") for result in results):
        click.echo(f"gemlint: some pairs need the benchmark dependencies: {INSTALL_HINT}", err=True)
    sys.exit(1 if any(result.status is Status.ERROR for result in results) else 0)


def entry() -> None:  # pragma: no cover - console script wrapper
    main()
