"""Rule documentation rendered from rule metadata: docs/rules.md, `gemlint explain`, and SARIF help."""

from __future__ import annotations

import importlib.metadata
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from gemlint.bench.published import benchmark_text, measured_lines
from gemlint.languages import Language
from gemlint.rule import Rule

#: The key of ``[project.urls]`` in pyproject.toml that names the repository: the one place the
#: project's URL is written. SARIF ``informationUri`` and each rule's ``helpUri`` derive from it (so
#: GitHub code scanning links every alert to its rule); the tests hold the docs, the pre-commit
#: manifest's comments and action.yml to it.
URL_KEY = "Repository"


@lru_cache(maxsize=1)
def project_url() -> str | None:
    """``[project.urls] Repository`` from the installed metadata, else from the source tree's
    pyproject.toml; None when neither says (the SARIF log then carries no links)."""
    try:
        entries = importlib.metadata.metadata("gemlint").get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        entries = []
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip() == URL_KEY and url.strip():
            return url.strip().rstrip("/")
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        with pyproject.open("rb") as handle:
            url = tomllib.load(handle).get("project", {}).get("urls", {}).get(URL_KEY)
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return url.rstrip("/") if isinstance(url, str) and url else None


def rules_doc_url() -> str | None:
    url = project_url()
    return f"{url}/blob/main/docs/rules.md" if url else None

_FAMILIES = {
    "0": "Input problems",
    "1": "Autograd and module mode",
    "2": "Tokenization and input shaping",
    "3": "Native resource pairing (C, C++, CUDA)",
    "4": "Debugging left on in production",
    "5": "Runtime configuration",
    "6": "Deployment",
}
MEASURED_INTRO = (
    "Measured by `gemlint bench` (bad vs good variant). A figure that depends on timing is the median of several "
    "runs, given with the lowest and highest run, and a ratio only when the two variants' runs do not overlap; "
    "the other figures are exact counts:"
)
_FENCE = {Language.PYTHON: "python", Language.YAML: "yaml", Language.NATIVE: "cpp", Language.DOCKERFILE: "dockerfile", Language.TRITON: "protobuf"}


def anchor(rule: type[Rule]) -> str:
    return f"{rule.code.lower()}-{rule.name}"


def rule_url(rule: type[Rule]) -> str | None:
    """The rule's section of docs/rules.md in the repository named by ``[project.urls]``."""
    base = rules_doc_url()
    return f"{base}#{anchor(rule)}" if base else None


def fix_label(rule: type[Rule]) -> str:
    return rule.fix.value if rule.fix else "none"


def name_label(rule: type[Rule]) -> str:
    """The rule's name as listings show it: preview rules are marked."""
    return f"{rule.name} (preview)" if rule.preview else rule.name


PREVIEW_NOTE = (
    "This rule is in **preview**: it is not selected by default. Enable it with `preview = true` in the "
    "configuration, `--preview` on the command line, or by selecting its code exactly (`extend-select = [\"{code}\"]`). "
    "It is promoted when a review on real code shows at least 95 % of its findings right."
)


def languages_label(rule: type[Rule]) -> str:
    if rule.languages == frozenset(Language):
        return "all"
    return ", ".join(sorted(language.value for language in rule.languages))


def checks_python(rule: type[Rule]) -> bool:
    """A rule with Python code to check, the rules that may check notebooks (GEM000 is the engine's own)."""
    return Language.PYTHON in rule.languages and rule.languages != frozenset(Language)


def notebooks_label(rule: type[Rule]) -> str:
    """Whether the rule checks notebooks: yes, no, or a dash for a rule without Python (and GEM000, always reported)."""
    if not checks_python(rule):
        return "—"
    return "yes" if rule.notebooks else "no"


def rule_markdown(rule: type[Rule], heading: str = "##") -> str:
    """One rule's page, in ruff's sections plus what the rule deliberately leaves alone."""
    fence = _FENCE.get(rule.examples_language(), "")
    lines = [
        f"{heading} {rule.code} {rule.name}",
        "",
        f"Severity: **{rule.severity.value}** · Languages: {languages_label(rule)} · Fix: {fix_label(rule)}"
        + (" · **Preview**" if rule.preview else ""),
        "",
    ]
    if rule.preview:
        lines += [PREVIEW_NOTE.format(code=rule.code) + (f" {rule.preview_reason}" if rule.preview_reason else ""), ""]
    if checks_python(rule):
        lines += [f"Notebooks: **{'checked' if rule.notebooks else 'not checked'}**. {rule.notebooks_reason}", ""]
    lines += [
        f"{heading}# What it does",
        "",
        rule.summary,
        "",
        f"{heading}# Why is this bad?",
        "",
        rule.rationale,
        "",
    ]
    if rule.not_flagged:
        lines += [f"{heading}# What it does not flag", ""]
        lines += [f"- {item}" for item in rule.not_flagged]
        lines.append("")
    lines += [f"{heading}# Example", "", f"```{fence}", rule.bad.rstrip("\n"), "```", ""]
    lines += [f"{heading}# Use instead", "", f"```{fence}", rule.good.rstrip("\n"), "```", ""]
    if rule.fix:
        lines += [f"{heading}# Fix safety", "", f"This rule's fix is **{rule.fix.value}**. {rule.fix_note}".rstrip(), ""]
    benchmark = benchmark_text(rule.code, rule.benchmark)
    if benchmark:
        lines += [f"{heading}# Benchmark", "", benchmark, ""]
        measured = measured_lines(rule.code)
        if measured:
            lines += [MEASURED_INTRO, ""] + [f"- {line}" for line in measured] + [""]
    return "\n".join(lines)


def rule_text(rule: type[Rule]) -> str:
    """Plain-text documentation, for terminals and SARIF help.text."""
    parts = [f"{rule.code} {rule.name} ({rule.severity.value}{', preview' if rule.preview else ''})", "", rule.summary]
    if rule.preview:
        parts += ["", PREVIEW_NOTE.format(code=rule.code).replace("**", "")]
    if checks_python(rule):
        parts += ["", f"Notebooks: {'checked' if rule.notebooks else 'not checked'}. {rule.notebooks_reason}"]
    parts += ["", "Why is this bad?", rule.rationale]
    if rule.not_flagged:
        parts += ["", "What it does not flag:"] + [f"  - {item}" for item in rule.not_flagged]
    parts += ["", "Example:", _indent(rule.bad), "Use instead:", _indent(rule.good)]
    if rule.fix:
        parts += [f"Fix safety: {rule.fix.value}. {rule.fix_note}".rstrip()]
    benchmark = benchmark_text(rule.code, rule.benchmark)
    if benchmark:
        parts += ["", f"Benchmark: {benchmark}"]
        parts += [f"  measured on {line}" for line in measured_lines(rule.code)]
    return "\n".join(parts).rstrip() + "\n"


_EVIDENCE_TIERS = [
    "## Evidence and precision tiers",
    "",
    "Rules that report inference code (GEM101, GEM102, GEM103, GEM201) say in each message what the inference "
    "context rests on. Two tiers, as CodeQL's `precision`:",
    "",
    "- **The rule's own precision** (SARIF `properties.precision` of the rule, usually `high`): the code is reached "
    "from an entry point — an HTTP route or RPC servicer, a serving framework's hook (TorchServe's module-level "
    "`handle(data, context)` among them), a file matching "
    "`inference-paths`, a script's `__main__` block or module level that runs a model (not a smoke test: a model built "
    "without loading weights, run on `torch.randn`/`zeros` inputs or on a tensor of sizes only, `torch.Tensor(1, 3, "
    "400, 600)`), or evaluation code (a function that puts a model "
    "in eval mode and runs its forward; in a model's own method, the model as a whole: `self.quantizer.eval()` "
    "there keeps a frozen part frozen) — directly or through its callers, across modules. Reported by default.",
    "- **`medium`**: the context rests on a name alone — a `predict*`/`infer*`/`generate*`/`evaluate*` function, or a "
    "method of a class named for inference, that no entry point in the project reaches. Often library code whose "
    "callers guard it. Not reported by default; `--strict` or `strict = true` reports these findings too, with "
    "`\"precision\": \"medium\"` in the JSON output and in the SARIF result's `properties`.",
    "",
    "`test*` functions are never inference code, wherever they are. Neither is what runs a model to measure, trace "
    "or check it, whoever calls it: FLOP and parameter counters (a package's, or the project's own copy, whose hooks "
    "are named for it: `add_flops_counting_methods(model)`, `model.start_activation_count()`, or a summary whose "
    "forward hooks count each layer's parameters, or one named for what it measures: `count_params`, `params_size`, "
    "`summary`, `get_model_summary`), exports and post-training quantization (the calibration run of ModelOpt's "
    "`mtq.quantize`, torch.ao's `prepare_fx` and `prepare_pt2e`), a factory's "
    "run of the model it builds, and a parity check that runs one input through two implementations and compares "
    "their outputs (`torch.allclose(model(x), ported(x))`, `(out - reference).norm()`), or asserts that an output "
    "equals fractional values written down, the original implementation's (`assert scores[-1].item() == 0.5799`, "
    "`torch.allclose(logits[0, :3], expected)` with `expected = torch.tensor([[0.12, -0.3]])`). Evaluation code by its body "
    "alone is not inference code where a caller in the file hands what it returns to a function that runs a "
    "training step (a policy-gradient rollout's log-probabilities passed to the update that computes the loss). "
    "Nor is a script's function that nothing names: defined at the top of a module with a `__main__` block and "
    "outside any package (a package's functions are its API, called from outside the project), undecorated, its name spelled nowhere else in the file, no other module of the project calling anything so "
    "named, and no dispatch by name (`globals()`, `fire.Fire()`): left over from an earlier version of the script, it "
    "never runs (decided with the project only: the flake8 plugin, which sees one file, cannot know it). Nor is a "
    "function the `__main__` block itself defines whose name is spelled nowhere else in the file: no import of the "
    "module runs that block, so nothing else can call it (decided from the file alone).",
]

_NOTEBOOKS = [
    "## Jupyter notebooks",
    "",
    "Notebooks (`.ipynb`) are linted by default, as ruff lints them: the code cells, in order, are one Python module "
    "(the kernel runs them in one namespace, so a model built in one cell and run in another is one program). IPython "
    "syntax that starts a statement (line magics such as `%time` or `%matplotlib inline`, shell escapes `!pip install` "
    "and `x = !ls`, help `obj?`) stands for a `pass` on its line; a cell whose cell magic hands it to another program "
    "(`%%bash`, `%%writefile`, `%%html`) is not Python and is skipped, while `%%time`, `%%timeit`, `%%capture`, "
    "`%%prun`, `%%debug` and `%%python` cells are linted. A notebook whose kernel is not Python (R, Julia) has "
    "nothing to check. A cell that does not parse on its own is reported (GEM000 on that cell) and the other cells "
    "are still checked. A notebook that is not valid JSON, or not in format 4, is one GEM000.",
    "",
    "- **Positions** are `path.ipynb:cell N:line:column` in the text output, with N counting every cell of the "
    "notebook (markdown ones too) from 1 and the line counted in the cell. In the JSON output, `cell` is N and "
    "`line`/`column`/`end_line`/`end_column` (and those of a fix's edits) are counted in the cell; `cell` is null "
    "for other files. SARIF and GitHub annotations place a finding in the notebook file's JSON text (the line and "
    "columns of the code in the cell's `source` strings), since GitHub shows a `.ipynb` as that text; the SARIF result "
    "names the cell in `properties.notebookCell` and carries no `fixes`.",
    "- **Suppression**: `# noqa` / `# noqa: GEM101` on a cell's line applies to that line; a `# gemlint: noqa` line in "
    "any cell applies to the whole notebook.",
    "- **Fixes**: `--fix` rewrites only the `source` of the cells it changed, each still parsing on its own, and keeps "
    "every other byte of the file (outputs, execution counts, metadata, key order, indentation). IPython lines are "
    "kept as written. `--diff` shows the change to the notebook's JSON.",
    "- **Which rules**: a notebook is run by hand, cell by cell, to explore; it is not a service. A rule checks "
    "notebooks when what it reports costs or misleads the person running the notebook (autograd memory held by "
    "outputs kept in globals, dropout left on, leaks in functions a cell calls again and again), and not when the cost "
    "is a deployed service's (per-request latency, start-up, probes) or the finding is debugging a notebook does on "
    "purpose (profilers, anomaly detection, verbose logging). The table's Notebooks column and each rule's page say "
    "which and why.",
    "- The project's modules are read for a notebook's imports (a model class or factory defined in the project), "
    "but a notebook is not a module of the project: nothing imports it.",
    "- `gemlint server` does not lint notebooks (docs/editors.md says why); the command line, pre-commit hook and "
    "`--stdin-filename x.ipynb` do.",
]


def rules_markdown(rules: Iterable[type[Rule]]) -> str:
    """The whole of docs/rules.md."""
    rules = list(rules)
    lines = [
        "# gemlint rules",
        "",
        "<!-- Generated by `gemlint rules --format markdown` from the rule classes in gemlint/rules/. Do not edit. -->",
        "",
        "| Code | Name | Severity | Languages | Fix | Notebooks | Summary |",
        "|---|---|---|---|---|---|---|",
    ]
    for rule in rules:
        lines.append(
            f"| [{rule.code}](#{anchor(rule)}) | {name_label(rule)} | {rule.severity.value} | {languages_label(rule)} | "
            f"{fix_label(rule)} | {notebooks_label(rule)} | {rule.summary} |"
        )
    lines += ["", *_EVIDENCE_TIERS, "", *_NOTEBOOKS, ""]
    family = None
    for rule in rules:
        if rule.code[3] != family:
            family = rule.code[3]
            lines += [f"## GEM{family}xx — {_FAMILIES.get(family, 'Other')}", ""]
        lines.append(rule_markdown(rule, heading="###"))
    return "\n".join(lines).rstrip() + "\n"


def _indent(code: str) -> str:
    return "".join(f"    {line}\n" if line.strip() else "\n" for line in code.splitlines())
