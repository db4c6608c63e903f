"""What the project's call graph answers: the steps from a function to a forward pass it runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gemlint.diagnostics import Position

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.project.files import ParsedFile

#: Calls that hand the function they are given to something that runs it (a thread, an executor).
OFFLOAD_NAMES = frozenset({"to_thread", "run_in_threadpool", "run_sync", "run_in_executor", "submit"})


@dataclass(frozen=True)
class Step:
    file: "ParsedFile"
    line: int  # def line of the function (0: the module's top level)
    name: str


@dataclass(frozen=True)
class ForwardPath:
    """How a function reaches a forward pass: the functions on the way and the call that runs the model."""

    steps: tuple[Step, ...]  # from the start function to the one that runs the forward
    file: "ParsedFile"
    start: Position
    end: Position
    text: str  # "`self.model.generate(...)`"
    family: str = ""  # the forward's family (analysis.forward.ForwardCall.family); "engine": a generation request

    @property
    def via(self) -> tuple[Step, ...]:
        return self.steps[1:]
