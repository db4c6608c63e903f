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
        raise SourceError(f"invalid Dockerfile: {error}", _failing_line(text)) from None
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


#: Beyond this many lines a broken Dockerfile is reported on line 1 rather than searched.
_MAX_SEARCH_LINES = 2000


def _failing_line(text: str) -> int:
    """The line where the parse starts failing: BuildKit's messages carry no line, so the text is
    parsed up to each line, from the end, until a prefix parses (a prefix cut inside a heredoc that
    is closed later fails too, hence from the end)."""
    lines = text.splitlines(keepends=True)
    if len(lines) > _MAX_SEARCH_LINES:
        return 1
    for count in range(len(lines) - 1, 0, -1):
        try:
            dockerfile.parse_string("".join(lines[:count]))
            return count + 1
        except dockerfile.GoParseError as error:
            if "no instructions" in str(error):
                return count + 1
    return 1
