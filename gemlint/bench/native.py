"""Builds a pair's C/C++/CUDA variant with its driver and runs it: under valgrind (or LeakSanitizer),
against the host stand-in of the CUDA runtime, or with nvcc against the real one.

Used by the GEM3xx pairs: the variant file holds the function the rule judges, the
driver calls it like a server would, and the memory checker, the stand-in's bookkeeping
or the CUDA runtime says what it cost.
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
_CUDA_TIMEOUT_S = 600
#: The host stand-in of the CUDA runtime (``cuda_runtime.h``) that g++ builds the CUDA pairs against.
HOST_RUNTIME = Path(__file__).parent / "pairs" / "_cuda_host"
#: What the CUDA pairs' drivers share (``gemlint_driver.h``), for both builds.
DRIVER_SUPPORT = Path(__file__).parent / "pairs" / "_cuda_driver"
# `kernel<<<grid, block[, shared[, stream]]>>>(` (a template kernel's arguments included), for g++.
_LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:<[^<>;()]*>)?)\s*<<<(.*?)>>>\s*\(", re.DOTALL)


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
        return printed_value(self.stdout, key)


@dataclass(frozen=True)
class DriverRun:
    """A driver run without a memory checker: what it printed is the measurement."""

    stdout: str

    def value(self, key: str) -> int:
        return printed_value(self.stdout, key)

    def number(self, key: str) -> float:
        return printed_number(self.stdout, key)

    def has(self, key: str) -> bool:
        return re.search(rf"^{re.escape(key)}=", self.stdout, re.MULTILINE) is not None


def printed_value(stdout: str, key: str) -> int:
    """An integer the driver printed as ``key=value``."""
    match = re.search(rf"^{re.escape(key)}=(\d+)$", stdout, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"the driver printed no {key}= line: {stdout[-500:]!r}")
    return int(match.group(1))


def printed_number(stdout: str, key: str) -> float:
    """A number the driver printed as ``key=value``."""
    match = re.search(rf"^{re.escape(key)}=([-+\d.eE]+)$", stdout, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"the driver printed no {key}= line: {stdout[-500:]!r}")
    return float(match.group(1))


def compiler_for(sources: Sequence[Path]) -> tuple[str, list[str]]:
    """gcc for C, g++ for C++ and for CUDA host code built without nvcc."""
    if all(source.suffix == ".c" for source in sources):
        return "gcc", ["-std=c11"]
    flags = ["-std=c++17"]
    if any(source.suffix == ".cu" for source in sources):
        flags = ["-x", "c++", *flags]
    return "g++", flags


def host_source(ctx: PairContext, source: Path) -> Path:
    """``source`` as g++ can build it against the stand-in: kernel launches become ``gemlint_launch`` calls.

    Other files are built as they are. The copy keeps the original's line numbers and name (``#line``)."""
    if source.suffix != ".cu":
        return source
    text = source.read_text(encoding="utf-8")
    if "<<<" not in text:
        return source
    rewritten = _LAUNCH.sub(lambda m: f"gemlint_launch({m.group(1)}, {m.group(2)})(", text)
    folder = ctx.workdir / "host-sources"
    folder.mkdir(exist_ok=True)
    copy = folder / source.name
    copy.write_text(f'#line 1 "{source}"\n{rewritten}', encoding="utf-8")
    return copy


def build(ctx: PairContext, name: str, sources: Sequence[Path], *, includes: Sequence[Path] = (), sanitize: bool = False) -> Path:
    compiler, flags = compiler_for(sources)
    ctx.require_tool(compiler)
    binary = ctx.workdir / name
    # Quoted includes resolve from each original's folder, not from the rewritten copy's.
    includes = [*includes, *dict.fromkeys(source.parent for source in sources)]
    sources = [host_source(ctx, source) for source in sources]
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


def emulated_run(ctx: PairContext, name: str, sources: Sequence[Path], args: Sequence[str], *, includes: Sequence[Path] = ()) -> DriverRun:
    """Build with g++ against the host stand-in of the CUDA runtime and run; the driver prints the stand-in's counts."""
    binary = build(ctx, name, sources, includes=[HOST_RUNTIME, *includes])
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{name} exited with {done.returncode}: {done.stdout.strip()[-300:]} {done.stderr.strip()[-300:]}")
    return DriverRun(done.stdout)


def nvcc_build(ctx: PairContext, name: str, sources: Sequence[Path], *, includes: Sequence[Path] = ()) -> Path:
    """Build with nvcc against the real CUDA runtime; skips the pair when nvcc is missing."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise SkipPair("needs nvcc (the CUDA toolkit) to build the CUDA variant")
    binary = ctx.workdir / name
    command = [nvcc, "-std=c++17", "-O1", *(f"-I{path}" for path in [*includes, *dict.fromkeys(s.parent for s in sources)])]
    command += [str(source) for source in sources] + ["-o", str(binary)]
    built = subprocess.run(command, capture_output=True, text=True, timeout=_CUDA_TIMEOUT_S)
    if built.returncode != 0:
        raise RuntimeError(f"nvcc failed: {built.stderr.strip()[-500:]}")
    return binary


def cuda_run(ctx: PairContext, name: str, sources: Sequence[Path], args: Sequence[str], *, includes: Sequence[Path] = ()) -> DriverRun:
    """Build with nvcc and run on the GPU. The drivers print ``cuda_error=...`` and exit 3 when the runtime
    cannot start (no device, a driver too old for the toolkit): the pair is then skipped, not failed."""
    return _run_on_gpu(nvcc_build(ctx, name, sources, includes=includes), name, args)


def _run_on_gpu(binary: Path, name: str, args: Sequence[str]) -> DriverRun:
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=_CUDA_TIMEOUT_S)
    if done.returncode == 3 and "cuda_error=" in done.stdout:
        raise SkipPair(f"the CUDA runtime cannot start here: {done.stdout.strip().splitlines()[-1]}")
    if done.returncode != 0:
        raise RuntimeError(f"{name} exited with {done.returncode}: {done.stdout.strip()[-300:]} {done.stderr.strip()[-300:]}")
    return DriverRun(done.stdout)


def run_cuda_variants(ctx: PairContext, args: Sequence[str], *, driver: str = "driver.cu") -> dict[str, DriverRun]:
    """Both variants of a CUDA pair with their driver: with nvcc on ``cuda``, against the host stand-in on ``cpu``."""
    run = cuda_run if ctx.device == "cuda" else emulated_run
    return {variant: run(ctx, variant, _sources(ctx, variant, driver), args, includes=[DRIVER_SUPPORT]) for variant in ("bad", "good")}


def alternated_gpu_runs(ctx: PairContext, args: Sequence[str], rounds: int, *, driver: str = "driver.cu") -> dict[str, list[DriverRun]]:
    """``rounds`` runs of each variant on the GPU, alternated (bad, good, bad, ...), each built once: what a run
    reads there (a latency, whether a race showed) varies from run to run, so one run is not a measurement."""
    binaries = {variant: nvcc_build(ctx, variant, _sources(ctx, variant, driver), includes=[DRIVER_SUPPORT]) for variant in ("bad", "good")}
    runs: dict[str, list[DriverRun]] = {variant: [] for variant in binaries}
    for _ in range(rounds):
        for variant, binary in binaries.items():
            runs[variant].append(_run_on_gpu(binary, variant, args))
    return runs


def _sources(ctx: PairContext, variant: str, driver: str) -> list[Path]:
    """A variant of a CUDA pair and the driver that runs it."""
    return [ctx.pair.variant_path(variant), ctx.path(driver)]


def check_clean(runs: dict[str, DriverRun], *keys: str) -> None:
    """Both variants did the same work: none of ``keys`` (failed requests, wrong outputs) is above 0."""
    for variant, run in runs.items():
        for key in keys:
            if run.value(key):
                raise RuntimeError(f"the {variant} variant printed {key}={run.value(key)}: {run.stdout[-300:]}")
