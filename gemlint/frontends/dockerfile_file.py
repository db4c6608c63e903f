"""The Dockerfile front-end: instructions with their lines, parsed by BuildKit's own parser.

The ``dockerfile`` package wraps the Go parser Docker itself uses, so line
continuations, the ``# escape=`` directive, JSON (exec) forms and heredocs are
read exactly as ``docker build`` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import dockerfile

from gemlint.text import SourceError


@dataclass(frozen=True)
class Instruction:
    command: str  # upper case: ENV, HEALTHCHECK, CMD, ...
    value: tuple[str, ...]
    flags: tuple[str, ...]
    json: bool  # exec form (["a", "b"])
    start_line: int
    end_line: int
    original: str

    def flag(self, name: str) -> str | None:
        """The value of ``--name=value`` (the last one given)."""
        found = None
        for flag in self.flags:
            key, sep, value = flag.partition("=")
            if key == f"--{name}" and sep:
                found = value
        return found


@dataclass(frozen=True)
class DockerfileDocument:
    instructions: tuple[Instruction, ...]


def parse(source, text: str) -> DockerfileDocument:
    """Front-end entry point (see :mod:`gemlint.frontends`)."""
    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError as error:
        if "no instructions" in str(error):
            return DockerfileDocument(())
        raise SourceError(f"invalid Dockerfile: {error}") from None
    instructions = tuple(
        Instruction(
            command.cmd.upper(),
            tuple(command.value),
            tuple(command.flags),
            bool(command.json),
            command.start_line,
            command.end_line,
            command.original or "",
        )
        for command in commands
        if command.cmd
    )
    return DockerfileDocument(instructions)
