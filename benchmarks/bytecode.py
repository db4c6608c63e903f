"""Time gemlint as an install runs it: with its modules compiled to bytecode.

``pip install`` compiles a package's modules; a checkout (or an editable install in an environment that sets
``PYTHONDONTWRITEBYTECODE``) compiles every edited module again in every process: a few tenths of a second
that a user never pays, and that would swamp the timings of small repositories."""

from __future__ import annotations

import compileall
import importlib.util
import os


def compile_gemlint() -> None:
    """Compile the gemlint package this interpreter imports (the timed runs inherit its environment)."""
    spec = importlib.util.find_spec("gemlint")
    if spec is None or spec.origin is None:
        raise SystemExit("gemlint is not importable here: install it, or set PYTHONPATH to a checkout")
    # force: compileall trusts a bytecode file whose recorded mtime matches its source's, and a module edited twice
    # within a second keeps a stale one that every import then recompiles (tens of milliseconds per process).
    compileall.compile_dir(os.path.dirname(spec.origin), quiet=1, force=True)
