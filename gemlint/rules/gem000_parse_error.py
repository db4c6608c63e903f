from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rule import Rule


class ParseError(Rule):
    """Reported by the engine itself, never by a visitor."""

    code = "GEM000"
    name = "parse-error"
    severity = Severity.ERROR
    languages = frozenset(Language)
    summary = "A file could not be read, decoded or parsed (or a folder could not be listed), so no rule could check it."
    rationale = (
        "gemlint reports the file instead of stopping: every other file is still linted, and the "
        "problem shows up in the report (and as a tool execution notification in SARIF) rather than "
        "as a crash that blocks a pre-commit hook or a CI job. The causes: a file or folder the user "
        "may not read (one GEM000 for the folder, whose files are then not linted), a dangling symlink, "
        "a FIFO or device, bytes that are not text (NUL bytes; invalid UTF-8 in Python without a coding "
        "cookie and in YAML -- C/C++/CUDA and Dockerfiles fall back to Latin-1 as their tools do), a syntax error (in a "
        "notebook, one per cell that does not parse), a notebook that is not JSON or not in format 4, nesting "
        "too deep to parse, a YAML bomb, and a C/C++/CUDA file whose parse runs past its time limit "
        "(5 s plus 2 s per MB; real files need a small fraction of it)."
    )
    not_flagged = (
        "Files that parse: GEM000 is never reported together with another finding for the same file, except in a "
        "notebook, whose cells that parse are checked although another cell does not parse.",
        "YAML, C/C++/CUDA and Dockerfiles that mention nothing any selected rule looks for: they are "
        "never parsed, so their syntax errors are not reported (Python files are always syntax-checked).",
        "A Python file whose syntax error is a build step's placeholder (`##NAME##`, CMake's `@NAME@` and "
        "`${NAME}`, Jinja's `{{ name }}`) on that line or the one before: a template, which is Python only once "
        "rendered; it is not linted, and the run says so (counted among the files checked only in part; "
        "`--verbose` names the placeholder).",
        "A Python 2 file, whose first error is a statement only Python 2 has (`print x`, `exec code`, "
        "`except E, e:`): another language, not a broken file; not linted, and counted and named the same way.",
        "A Python file indented with tabs and spaces mixed as CPython accepts them, which LibCST's tokenizer "
        "rejects: it is valid Python, linted as CPython reads it (its tabs expanded to the next multiple of eight "
        "columns), with its findings placed in the text as written and offered without fixes.",
    )
    bad = "def predict(x:\n    return model(x)\n"
    good = "def predict(x):\n    return model(x)\n"
    tags = ("reliability",)
    precision = "very-high"
