"""The contract of a benchmark pair.

A pair lives in its own package ``gemlint/bench/pairs/<code>/``:

- ``__init__.py`` defines ``PAIR = Pair(...)``: the rule code, the bad and good
  variant files, the Python packages and devices it needs. It imports nothing heavy.
- the variant files (``bad.py``/``good.py``, ``bad.c``/``good.c``, ...) are the
  code the rule flags and accepts; the tests lint them.
- ``measure.py`` defines ``measure(ctx: PairContext) -> list[Measurement]``; it runs
  both variants on ``ctx.device`` and may raise :class:`SkipPair`.

Adding a pair is adding such a package: the registry finds it.
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

DEVICES = ("cpu", "cuda")


class SkipPair(Exception):
    """The pair cannot run here (a missing device, toolchain or library); the message says why."""


@dataclass(frozen=True)
class Measurement:
    metric: str
    unit: str
    bad: float | None
    good: float | None
    deterministic: bool = False
    #: Set when this one metric cannot be measured on this device (the pair's other metrics still are).
    skipped: str | None = None
    #: For a timing: the runs ``bad`` and ``good`` are the medians of (taken from a
    #: :class:`~gemlint.bench.timing.Median` when not given).
    bad_runs: tuple[float, ...] = ()
    good_runs: tuple[float, ...] = ()


@dataclass(frozen=True)
class Pair:
    code: str
    #: The variant files, relative to the pair's folder.
    bad: str
    good: str
    #: Importable modules the measurement needs (checked before ``measure`` is imported).
    requires: tuple[str, ...] = ()
    devices: tuple[str, ...] = ("cpu",)
    #: Run in a fresh interpreter: the variants change process-wide state (environment, logging).
    isolated: bool = False
    #: The rule judges the variants with the rest of the pair's folder (a manifest and the code it
    #: probes): the tests lint the folder as one project instead of each file alone.
    lint_as_project: bool = False
    #: Filled in by the registry: the pair's package.
    package: str = field(default="", compare=False)

    @property
    def folder(self) -> Path:
        module = importlib.import_module(self.package)
        return Path(module.__file__).parent

    def variant_path(self, variant: str) -> Path:
        return self.folder / (self.bad if variant == "bad" else self.good)

    def description(self) -> str:
        """What the pair measures, in its own words (the rule docs quote it): its package's docstring after
        ``GEMxxx name:``, then the first paragraph of its measure module's docstring (how it runs). Read
        from the source: the measure module imports the libraries it measures."""
        summary = " ".join((importlib.import_module(self.package).__doc__ or "").split())
        summary = re.sub(r"^GEM\d{3} [a-z0-9-]+: ", "", summary)
        method = ast.get_docstring(ast.parse((self.folder / "measure.py").read_text(encoding="utf-8"))) or ""
        method = " ".join(method.split("\n\n")[0].split())
        text = " ".join(part for part in (summary[:1].upper() + summary[1:], method) if part)
        return text.replace("``", "`")


@dataclass
class PairContext:
    pair: Pair
    device: str
    quick: bool
    #: A scratch folder for builds and exported models, removed after the pair ran.
    workdir: Path

    def load(self, variant: str) -> ModuleType:
        """Import the ``bad`` or ``good`` Python variant of this pair."""
        name = (self.pair.bad if variant == "bad" else self.pair.good).removesuffix(".py")
        return importlib.import_module(f"{self.pair.package}.{name}")

    def path(self, name: str) -> Path:
        """A file of the pair's folder (C sources, drivers)."""
        return self.pair.folder / name

    def require_tool(self, *names: str) -> str:
        """The first of ``names`` found on PATH; skips the pair when none is."""
        for name in names:
            found = shutil.which(name)
            if found:
                return found
        raise SkipPair(f"needs {' or '.join(names)} on PATH")

    def scale(self, quick: int, full: int) -> int:
        return quick if self.quick else full
