from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rule import Rule


class ParseError(Rule):
    """Reported by the engine itself, never by a visitor."""

    code = "GEM000"
    name = "parse-error"
    severity = Severity.ERROR
    languages = frozenset(Language)
    summary = "A file could not be read, decoded or parsed, so no rule could check it."
    rationale = (
        "gemlint reports the file instead of stopping: every other file is still linted, and the "
        "problem shows up in the report (and as a tool execution notification in SARIF) rather than "
        "as a crash that blocks a pre-commit hook or a CI job."
    )
    not_flagged = ("Files that parse: GEM000 is never reported together with another finding for the same file.",)
    bad = "def predict(x:\n    return model(x)\n"
    good = "def predict(x):\n    return model(x)\n"
    tags = ("reliability",)
    precision = "very-high"
