from __future__ import annotations

import json
from typing import Iterable

from gemlint.diagnostics import Diagnostic


def render_json(diagnostics: Iterable[Diagnostic]) -> str:
    """A JSON array of findings with exactly the keys pinned by SPEC §6."""
    return json.dumps([d.to_json() for d in diagnostics], indent=2, ensure_ascii=False) + "\n"
