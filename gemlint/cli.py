"""The ``gemlint`` command line."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from gemlint.version import __version__
from gemlint.cache import Cache
from gemlint.config import Config, ConfigError, validate_codes
from gemlint.config_tree import ConfigTree, project_root_for
from gemlint.diagnostics import Diagnostic, Severity
from gemlint.registry import all_rules, known_codes, rule_by_code, rule_by_name, rule_entries
from gemlint.reporters import FORMATS
from gemlint.reporters.json import render_json
from gemlint.reporters.text import render_text, statistics as statistics_table
from gemlint.repository import find_repository_root
from gemlint.runner import FixMode, RunResult, lint_stdin, run
from gemlint.selection import Selection

if TYPE_CHECKING:
    from gemlint.bench.result import Result

OUTPUT_FORMATS = FORMATS
FAIL_LEVELS = ("error", "warning", "note")
_LEVEL_RANK = {Severity.NOTE: 0, Severity.WARNING: 1, Severity.ERROR: 2}
#: Formats that carry each finding's fingerprint: all but JUnit's (XML) can serve as a --baseline.
_FINGERPRINTED = ("json", "sarif", "gitlab", "junit")
PROGRESS_MIN_FILES = 200


def progress_wanted(quiet: bool, fmt: str, stream, environ) -> bool:
    """Only for a person watching a terminal: never in CI logs, pipes, or machine-readable output."""
    return not quiet and fmt == "text" and stream.isatty() and not environ.get("CI")


CACHE_DIRNAME = ".gemlint_cache"


class DefaultCommandGroup(click.Group):
    """``gemlint src/`` means ``gemlint check src/``; ``gemlint rules`` and ``gemlint explain`` are subcommands.

    ``gemlint --help`` shows the lint options too, since linting is what a bare ``gemlint`` does.
    """

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.commands and args[0] != self.default_command and os.path.exists(args[0]):
            click.echo(
                f"gemlint: note: running the `{args[0]}` command; to lint the path {args[0]}, "
                f"run `gemlint check {args[0]}` (or `gemlint ./{args[0]}`)",
                err=True,
            )
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        command = self.commands[self.default_command]
        with click.Context(command, info_name=self.default_command, parent=ctx) as inner:
            records = [
                record for param in command.get_params(inner) if isinstance(param, click.Option) and (record := param.get_help_record(inner))
            ]
        with formatter.section("Lint options (gemlint [OPTIONS] [PATH]... is gemlint check [OPTIONS] [PATH]...)"):
            formatter.write_dl(records)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise
        except Exception as error:
            # A bug in gemlint, not in the input: exit 2 with one line, the traceback kept in a file.
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
    ignore_noqa: bool = False,
    preview: bool = False,
    respect_gitignore: bool | None = None,
    strict: bool = False,
) -> ConfigTree:
    """Each file's config (the nearest config file above it, or ``--config``/``--isolated`` for all),
    with the command-line options on top (the command line wins)."""
    cli_select = _codes("--select", select)
    cli_ignore = _codes("--ignore", ignore)
    cli_extend = _codes("--extend-select", extend_select)

    def adjust(config: Config) -> Config:
        return config.with_overrides(
            select=cli_select,
            ignore=config.ignore + cli_ignore if cli_ignore else None,
            extend_select=config.extend_select + cli_extend if cli_extend else None,
            force_exclude=True if force_exclude else None,
            respect_noqa=False if ignore_noqa else None,
            preview=True if preview else None,
            strict=True if strict else None,
            respect_gitignore=respect_gitignore,
        )

    root = project_root if project_root is not None else project_root_for(paths, configs=not isolated and config_file is None)
    return ConfigTree(root, known_codes(), config_file=config_file, isolated=isolated, adjust=adjust)


def fails(diagnostics: list[Diagnostic], level: str) -> bool:
    """Whether a finding at or above ``level`` remains (``--fail-level``)."""
    threshold = _LEVEL_RANK[Severity(level)]
    return any(_LEVEL_RANK[d.severity] >= threshold for d in diagnostics)


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
    unchecked = report.result.unchecked
    if fmt == "json":
        # The array of findings is the JSON contract: what was not checked goes to stderr (see `run`).
        return render_json(diagnostics, report.fingerprints)
    if fmt == "sarif":
        from gemlint.reporters.sarif import render_sarif  # its object model is slow to import: SARIF runs only

        return render_sarif(
            diagnostics,
            rules=all_rules(),
            root=report.root,
            fingerprints=report.fingerprints,
            category=report.sarif_category,
            unchecked=unchecked,
        )
    # The formats below are imported when asked for: the rules' documentation they link to imports every rule.
    if fmt == "github":
        from gemlint.reporters.github import render_github

        return render_github(diagnostics, report.root, unchecked)
    if fmt == "gitlab":
        from gemlint.reporters.gitlab import render_gitlab

        # An array of issues, as the JSON report is: what was not checked goes to stderr (see `run`).
        assert report.fingerprints is not None
        return render_gitlab(diagnostics, report.root, report.fingerprints)
    if fmt == "junit":
        from gemlint.reporters.junit import render_junit

        assert report.fingerprints is not None
        return render_junit(diagnostics, report.root, report.fingerprints, unchecked)
    if fmt == "rdjson":
        from gemlint.reporters.rdjson import render_rdjson

        return render_rdjson(diagnostics, unsafe)
    return render_text(
        diagnostics,
        color=color,
        show_source=show_source,
        show_statistics=statistics,
        fixed=report.result.fixed,
        unsafe=unsafe,
        quiet=quiet,
        unchecked=unchecked,
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

    Run `gemlint [PATH]...` to lint (the same as `gemlint check [PATH]...`). To lint a folder
    named like a command (rules, bench, explain), write `gemlint check rules` or `gemlint rules/`.
    """


@main.command("check")
# readable=False: an unreadable file or folder is a GEM000 for that path, not a usage error for the run.
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, readable=False))
@click.option("--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable (replaces the config's select).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable on top of select.")
@click.option("--preview", is_flag=True, help="Enable preview rules (not yet proven on real code).")
@click.option("--strict", is_flag=True, help="Also report findings whose inference context rests on a name alone (precision medium).")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="text", show_default=True, help="Output format.")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--output-format", "extra_outputs", multiple=True, metavar="FMT:FILE", help="An extra report in the same run, e.g. sarif:gemlint.sarif.")
@click.option("--sarif-category", metavar="NAME", help="SARIF automationDetails.id, to upload several gemlint runs for one commit.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), help="Report only findings absent from this earlier JSON, SARIF or GitLab report.")
@click.option("--write-baseline", type=click.Path(path_type=Path, dir_okay=False), help="Write every current finding to FILE as a baseline and exit 0.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named explicitly (for pre-commit).")
@click.option("--respect-gitignore/--no-respect-gitignore", "respect_gitignore", default=None, help="Skip files that .gitignore files ignore (default: on, or the config's respect-gitignore).")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (with --fix) or show unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a diff instead of writing them.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel worker processes (default: all cores).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="GEMLINT_CACHE_DIR", help="Cache directory (default: .gemlint_cache/ in the project root).")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Use this config file for every file (instead of each file's nearest config).")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--project-root", type=click.Path(path_type=Path, file_okay=False), help="Root for cross-file context and the cache (default: the git work tree of the paths).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when problems are found.")
@click.option("--fail-level", type=click.Choice(FAIL_LEVELS), default="note", show_default=True, help="Exit 1 only when a finding at or above this severity remains.")
@click.option("--ignore-noqa", "--disable-noqa", "ignore_noqa", is_flag=True, help="Report findings that a `# noqa` comment suppresses.")
@click.option("--stdin-filename", type=click.Path(path_type=Path, dir_okay=False), help="Lint standard input as this file (its name decides the language and config); `-` as PATH does too.")
@click.option("--statistics", is_flag=True, help="Print a count per rule (to stderr when the format is machine-readable), and how many files had code left unanalysed.")
@click.option("--show-source", is_flag=True, help="Show the source line of each finding (text format).")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
@click.option("--verbose", "-v", is_flag=True, help="Print the config used per folder, rule counts, the time of each phase, and what was left unanalysed (code that did not parse).")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    preview: bool,
    strict: bool,
    fmt: str,
    output: Path | None,
    extra_outputs: tuple[str, ...],
    sarif_category: str | None,
    baseline: Path | None,
    write_baseline: Path | None,
    force_exclude: bool,
    respect_gitignore: bool | None,
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
    fail_level: str,
    ignore_noqa: bool,
    stdin_filename: Path | None,
    statistics: bool,
    show_source: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Lint PATHS (default: the current directory; `-` reads standard input)."""
    started = time.perf_counter()
    stdin = stdin_filename is not None or Path("-") in paths
    if stdin and any(path != Path("-") for path in paths):
        raise click.UsageError("standard input (`-` or --stdin-filename) cannot be linted together with other paths")
    targets = [stdin_filename or Path("stdin.py")] if stdin else (list(paths) or [Path(".")])
    outputs: list[tuple[str, Path]] = []
    for spec in extra_outputs:
        name, sep, file = spec.partition(":")
        if not sep or name not in OUTPUT_FORMATS or not file:
            raise click.BadParameter(f"expected FMT:FILE with FMT one of {', '.join(OUTPUT_FORMATS)}, got {spec!r}", param_hint="--output-format")
        outputs.append((name, Path(file)))
    if sarif_category is not None and not sarif_category.strip():
        raise click.BadParameter("must not be empty", param_hint="--sarif-category")
    accepted: frozenset[str] = frozenset()
    if baseline is not None:
        # The baseline and the fingerprints (and the notebook front-end they map cells with) are imported only by
        # a run that uses them: a warm run's whole cost is gemlint's start and a walk of the project.
        from gemlint.baseline import BaselineError, load_baseline

        try:
            accepted = load_baseline(baseline)
        except BaselineError as error:
            click.echo(f"gemlint: error: {error}", err=True)
            sys.exit(2)
    try:
        tree = resolve_config(
            targets, config_file, isolated, project_root, select, ignore, extend_select, force_exclude, ignore_noqa, preview,
            respect_gitignore, strict,
        )
    except ConfigError as error:
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)
    config = tree.project
    for name, given in (("--sarif-category", sarif_category is not None), ("--show-source", show_source)):
        wanted = "sarif" if name == "--sarif-category" else "text"
        if given and fmt != wanted and all(extra != wanted for extra, _ in outputs):
            click.echo(f"gemlint: note: {name} has no effect without --format {wanted}", err=True)
    if verbose:
        click.echo(f"gemlint {__version__}: project root {config.root} (config {config.source or 'defaults'})", err=True)

    if stdin:
        _check_stdin(tree, targets[0], fix=fix, unsafe=unsafe_fixes, diff=diff, fmt=fmt, quiet=quiet, exit_zero=exit_zero, fail_level=fail_level)

    show_progress = progress_wanted(quiet, fmt, sys.stderr, os.environ)

    def progress(done: int, total: int) -> None:
        if show_progress and total >= PROGRESS_MIN_FILES and (done % 50 == 0 or done == total):
            click.echo(f"\rLinting {done}/{total} files", err=True, nl=done == total)

    mode = FixMode(apply=fix and not diff, diff=diff, unsafe=unsafe_fixes)
    cache = None if no_cache else _cache(cache_dir, config.root)
    try:
        result = run(targets, tree, mode, jobs=jobs, progress=progress, cache=cache)
    except ConfigError as error:  # a nested config file found while walking
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)
    for warning in result.warnings:
        click.echo(f"gemlint: warning: {warning}", err=True)
    if fmt != "text" or quiet:
        # Text says it in its summary line; the other formats in their own way, and here for whoever reads stderr.
        for notice in result.unchecked:
            click.echo(f"gemlint: warning: {notice}", err=True)
    if verbose:
        _describe_run(result)
        _explain_unread_triton_configs(result)
        for display, note in result.notes:
            click.echo(f"gemlint: {display}: {note}", err=True)

    unsafe = unsafe_fixes
    if diff:
        diffs = "".join(report.diff for report in result.files)
        if diffs:
            click.echo(diffs, nl=False)
        would = sum(report.fixed for report in result.files if report.diff)
        if not quiet:
            click.echo(f"Would fix {would} problem{'s' if would != 1 else ''}." if would else "No fixes available.", err=True)
        sys.exit(0 if exit_zero or not would else 1)

    report_started = time.perf_counter()

    diagnostics = result.diagnostics
    root = find_repository_root()
    needs_fingerprints = baseline or write_baseline or fmt in _FINGERPRINTED or any(name in _FINGERPRINTED for name, _ in outputs)
    fingerprints = None
    if needs_fingerprints:
        from gemlint.fingerprints import fingerprint_diagnostics

        fingerprints = fingerprint_diagnostics(diagnostics, root)
    if write_baseline is not None:
        _write(write_baseline, render_json(diagnostics, fingerprints))
        if not quiet:
            click.echo(f"gemlint: wrote {len(diagnostics)} finding{'s' if len(diagnostics) != 1 else ''} to the baseline {write_baseline}", err=True)
        sys.exit(0)
    if baseline is not None:
        from gemlint.baseline import new_findings

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
    if statistics and fmt != "text" and diagnostics:
        # Machine output stays parseable: the counts go to stderr.
        click.echo(statistics_table(diagnostics, unsafe), err=True)
    noted = len({display for display, _ in result.notes})
    if statistics and noted:
        click.echo(f"{noted:>5}\tfile{'s' if noted != 1 else ''} with code left unanalysed (parse errors; --verbose says where)", err=True)
    for name, file in outputs:
        _write(file, render(name, report, color=False, show_source=False, statistics=False, unsafe=unsafe, quiet=False))
    if verbose:
        click.echo(f"gemlint: report {time.perf_counter() - report_started:.2f}s; total {time.perf_counter() - started:.2f}s", err=True)
    sys.exit(0 if exit_zero or not fails(diagnostics, fail_level) else 1)


def _cache(named: Path | None, root: Path) -> Cache | None:
    """The result cache: the folder named, else ``.gemlint_cache`` at the project root, unless that is a
    link (the repository is untrusted: a link would point reads and writes out of it)."""
    if named is not None:
        return Cache(named)
    default = root / CACHE_DIRNAME
    if os.path.islink(default):
        click.echo(f"gemlint: warning: cache disabled: {default} is a symbolic link (pass --cache-dir to use it)", err=True)
        return None
    return Cache(default)


def _describe_run(result: RunResult) -> None:
    """``--verbose``: which config governed how many files with how many rules, and each phase's time."""
    cwd = Path.cwd()
    for config, count in result.configs:
        source = config.source
        where = os.path.relpath(source, cwd) if source is not None else "defaults"
        folder = os.path.relpath(config.glob_root, cwd)
        rules = len(Selection.from_config(config, rule_entries()).rules)
        click.echo(f"gemlint: {folder}/: config {where}; {count} file{'s' if count != 1 else ''}, {rules} rules selected", err=True)
    phases = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in result.timings.items())
    click.echo(f"gemlint: {phases}", err=True)


def _check_stdin(tree: ConfigTree, path: Path, *, fix: bool, unsafe: bool, diff: bool, fmt: str, quiet: bool, exit_zero: bool, fail_level: str) -> None:
    """Lint standard input as ``path`` (editors); with --fix the fixed text goes to stdout, the
    findings that remain to stderr."""
    data = sys.stdin.buffer.read()
    outcome = lint_stdin(data, path, tree, FixMode(apply=fix and not diff, diff=diff, unsafe=unsafe))
    for warning in outcome.warnings:
        click.echo(f"gemlint: warning: {warning}", err=True)
    if fix and not diff:
        sys.stdout.buffer.write(outcome.fixed if outcome.fixed is not None else data)
        sys.stdout.flush()
        if outcome.diagnostics and not quiet:
            click.echo(render_text(outcome.diagnostics, color=False, show_source=False, show_statistics=False, fixed=outcome.applied, unsafe=unsafe, quiet=True), err=True, nl=False)
    elif diff:
        click.echo(outcome.diff, nl=False)
    else:
        report = Report(RunResult(), outcome.diagnostics, find_repository_root())
        if fmt in _FINGERPRINTED:
            from gemlint.fingerprints import fingerprint_diagnostics

            report.fingerprints = fingerprint_diagnostics(outcome.diagnostics, report.root)
        click.echo(render(fmt, report, color=False, show_source=False, statistics=False, unsafe=unsafe, quiet=quiet), nl=False)
    sys.exit(0 if exit_zero or not fails(outcome.diagnostics, fail_level) else 1)


def _explain_unread_triton_configs(result: RunResult) -> None:
    """Without Triton's schema (an optional dependency) config.pbtxt files are skipped: say so, and what is lost."""
    notice = result.unread_triton_configs
    if notice:
        click.echo(f"gemlint: {notice}; GEM603 did not run and GEM201 cannot see Triton models' declared output shapes", err=True)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "markdown")), default="table", show_default=True)
def rules_command(fmt: str) -> None:
    """List every rule (markdown is docs/rules.md)."""
    from gemlint.docs import fix_label, languages_label, name_label, rules_markdown  # the rule commands' only

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
                        "notebooks": r.notebooks,
                    }
                    for r in rules
                ],
                indent=2,
            )
        )
    else:
        rows = [(r.code, name_label(r), r.severity.value, fix_label(r), languages_label(r), r.summary) for r in rules]
        widths = [max(len(row[column]) for row in rows) for column in range(5)]
        for row in rows:
            click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[5])


@main.command("explain")
@click.argument("code")
def explain(code: str) -> None:
    """Show one rule's full documentation (CODE is a rule's code or name: GEM201, static-max-length-padding)."""
    rule = rule_by_code(code.upper()) or rule_by_name(code)
    if rule is None:
        click.echo(f"gemlint: error: unknown rule {code!r} (see `gemlint rules`)", err=True)
        sys.exit(2)
    from gemlint.docs import rule_text

    click.echo(rule_text(rule), nl=False)


@main.command("server")
def server_command() -> None:
    """Run the language server (LSP over stdin/stdout) for editors: live findings, quick fixes, hover docs."""
    from gemlint import server

    if not server.available():
        click.echo(f"gemlint: error: {server.MISSING}", err=True)
        sys.exit(2)
    server.main()


def _chart_path(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """--plot FILE: its suffix chooses the format, checked before any pair runs."""
    if value is not None:
        from gemlint.bench.plot import chart_format

        try:
            chart_format(value)
        except ValueError as error:
            raise click.BadParameter(str(error)) from None
    return value


@main.command("bench")
@click.option("--rule", "rules", multiple=True, metavar="CODE", help="Benchmark these rules only (codes or prefixes, repeatable).")
@click.option("--device", type=click.Choice(("auto", "cpu", "cuda")), default="auto", show_default=True, help="Where the pairs run.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True, help="Output format.")
@click.option("--quick", is_flag=True, help="Small sizes and few repetitions (for tests and smoke runs).")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option("--plot", type=click.Path(path_type=Path, dir_okay=False), callback=_chart_path, metavar="FILE", help="Also draw the results as a chart, bad vs good per pair (.svg or .png; needs matplotlib, from the bench extra).")
@click.option("--from", "from_file", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="RESULTS", help="Report (and --plot) the results of an earlier `--format json` run instead of running the pairs, e.g. gemlint/bench/results/cpu.json.")
def bench(rules: tuple[str, ...], device: str, fmt: str, quick: bool, output: Path | None, plot: Path | None, from_file: Path | None) -> None:
    """Run each rule's bad and good variant and measure what the rule's claim is about.

    Rules whose device, library or toolchain is missing are reported as skipped, with the reason.
    The measuring libraries come with the `bench` extra: `pip install -e '.[bench]'` in a checkout (see the README for the CPU build of torch).
    With --from, nothing runs: the results of that file are reported (and drawn with --plot), and the exit status is 0.
    """
    from gemlint.bench.render import render_table
    from gemlint.bench.result import Status
    from gemlint.bench.runner import INSTALL_HINT, select_codes

    try:
        codes = select_codes([code for value in rules for code in value.split(",") if code.strip()]) if rules else None
    except ValueError as error:
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)
    if from_file is not None and (quick or click.get_current_context().get_parameter_source("device") is not ParameterSource.DEFAULT):
        raise click.UsageError("--quick and --device choose how the pairs run; with --from nothing runs")
    if plot is not None:
        _require_plotting()
    if from_file is not None:
        results = _earlier_results(from_file, codes)
    else:
        results = _run_bench(codes, device, quick)
    text = json.dumps([result.to_json() for result in results], indent=2) + "\n" if fmt == "json" else render_table(results)
    if output is not None:
        _write(output, text)
    else:
        click.echo(text, nl=False)
    if plot is not None:
        _write_chart(results, plot)
    if from_file is not None:
        return
    if any(result.status is Status.SKIPPED and INSTALL_HINT in (result.reason or "") for result in results):
        click.echo(f"gemlint: some pairs need the benchmark dependencies: {INSTALL_HINT}", err=True)
    sys.exit(1 if any(result.status is Status.ERROR for result in results) else 0)


def _require_plotting() -> None:
    """A missing matplotlib is reported before the pairs run (minutes), not after."""
    from gemlint.bench.plot import PlotUnavailable, require_matplotlib

    try:
        require_matplotlib()
    except PlotUnavailable as error:
        click.echo(f"gemlint: error: {error}", err=True)
        sys.exit(2)


def _earlier_results(path: Path, codes: list[str] | None) -> list[Result]:
    """The results of an earlier JSON report, those of ``codes`` only when --rule chose some."""
    from gemlint.bench.result import read_results

    try:
        results = read_results(path)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--from") from None
    return results if codes is None else [result for result in results if result.code in codes]


def _run_bench(codes: list[str] | None, device: str, quick: bool) -> list[Result]:
    from gemlint.bench.runner import run_benchmarks

    terminal = sys.stderr.isatty()

    def progress(code: str) -> None:
        # A terminal gets one line rewritten in place; a CI log (or any pipe) a line per pair.
        if terminal:
            click.echo(f"\rbenchmarking {code}...", err=True, nl=False)
        else:
            click.echo(f"gemlint bench: {code}...", err=True)

    results = run_benchmarks(codes, device=device, quick=quick, progress=progress)
    if terminal:
        click.echo("\r" + " " * 30 + "\r", err=True, nl=False)
    return results


def _write_chart(results: list[Result], path: Path) -> None:
    from gemlint.bench.plot import plot_results

    try:
        plot_results(results, path)
    except OSError as error:
        raise click.ClickException(f"cannot write {path}: {error.strerror or error}") from None


def entry() -> None:
    """The ``gemlint`` program: :func:`main`, then an exit that leaves freeing what the run built to the system.

    At a normal exit the interpreter frees every object one at a time: a large project's index records, facts
    and ledger took about 0.1 s of a pre-commit run over one edited file. Every file gemlint writes is written
    and closed before :func:`main` returns, and no pool outlives a run; the standard streams are flushed here
    (mypy exits the same way)."""
    try:
        main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a reader that went away (`gemlint | head`) or a closed stream: nothing more can be said
    os._exit(code)
