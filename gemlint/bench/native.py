"""Builds a pair's C/C++ variant with its driver and runs it under valgrind (or LeakSanitizer).

Used by the GEM3xx pairs: the variant file holds the function the rule judges, the
driver calls it like a server would, and the memory checker counts what leaked.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from gemlint.bench.pair import PairContext, SkipPair

# valgrind's "possibly lost" blocks are leaks too: only an interior pointer to them is left, by chance.
_LOST = re.compile(r"(?:definitely|possibly) lost: ([\d,]+) bytes in ([\d,]+) blocks")
# With -s valgrind lists each error context once, with how many times it occurred.
_MISMATCHES = re.compile(r"== (\d+) errors? in context \d+ of \d+:\n==\d+== Mismatched free\(\) / delete / delete \[\]")
_LSAN = re.compile(r"SUMMARY: AddressSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation")
_TIMEOUT_S = 300


@dataclass(frozen=True)
class CheckedRun:
    checker: str  # "valgrind" or "AddressSanitizer" (its LeakSanitizer counts the leaks)
    leaked_bytes: int
    leaked_blocks: int
    #: valgrind's "Mismatched free() / delete / delete []" reports (GEM303).
    mismatched_releases: int
    stdout: str

    def value(self, key: str) -> int:
        """An integer the driver printed as ``key=value``."""
        match = re.search(rf"^{re.escape(key)}=(\d+)$", self.stdout, re.MULTILINE)
        if match is None:
            raise RuntimeError(f"the driver printed no {key}= line: {self.stdout!r}")
        return int(match.group(1))


def compiler_for(sources: Sequence[Path]) -> tuple[str, list[str]]:
    """gcc for C, g++ for C++ and for CUDA host code built without nvcc."""
    if all(source.suffix == ".c" for source in sources):
        return "gcc", ["-std=c11"]
    flags = ["-std=c++17"]
    if any(source.suffix == ".cu" for source in sources):
        flags = ["-x", "c++", *flags]
    return "g++", flags


def build(ctx: PairContext, name: str, sources: Sequence[Path], *, includes: Sequence[Path] = (), sanitize: bool = False) -> Path:
    compiler, flags = compiler_for(sources)
    ctx.require_tool(compiler)
    binary = ctx.workdir / name
    command = [compiler, *flags, "-O1", "-g", "-fno-omit-frame-pointer", *(f"-I{path}" for path in includes)]
    if sanitize:
        command.append("-fsanitize=address")
    command += [str(source) for source in sources] + ["-o", str(binary)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{compiler} failed: {done.stderr.strip()[-500:]}")
    return binary


def checked_run(ctx: PairContext, name: str, sources: Sequence[Path], args: Sequence[str], *, includes: Sequence[Path] = ()) -> CheckedRun:
    """Build and run under valgrind if it is installed, else under LeakSanitizer; skip when neither works."""
    if shutil.which("valgrind"):
        binary = build(ctx, name, sources, includes=includes)
        done = subprocess.run(
            ["valgrind", "-s", "--leak-check=full", "--show-leak-kinds=definite,possible", "--error-exitcode=0", str(binary), *args],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{name} exited with {done.returncode}: {done.stderr.strip()[-500:]}")
        lost = [(int(size.replace(",", "")), int(blocks.replace(",", ""))) for size, blocks in _LOST.findall(done.stderr)]
        return CheckedRun(
            "valgrind",
            sum(size for size, _ in lost),
            sum(blocks for _, blocks in lost),
            sum(int(count) for count in _MISMATCHES.findall(done.stderr)),
            done.stdout,
        )
    try:
        binary = build(ctx, name, sources, includes=includes, sanitize=True)
    except RuntimeError as error:
        raise SkipPair(f"needs valgrind or a compiler with AddressSanitizer ({error})") from None
    done = subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
        env={"ASAN_OPTIONS": "detect_leaks=1:halt_on_error=0:alloc_dealloc_mismatch=1:exitcode=0", "PATH": "/usr/bin:/bin"},
    )
    if "LeakSanitizer does not work" in done.stderr or "LeakSanitizer has encountered a fatal error" in done.stderr:
        raise SkipPair("needs valgrind (LeakSanitizer cannot run here)")
    leaked = [(int(m.group(1)), int(m.group(2))) for m in _LSAN.finditer(done.stderr)]
    return CheckedRun(
        "AddressSanitizer",
        sum(size for size, _ in leaked),
        sum(count for _, count in leaked),
        done.stderr.count("ERROR: AddressSanitizer: alloc-dealloc-mismatch"),
        done.stdout,
    )
