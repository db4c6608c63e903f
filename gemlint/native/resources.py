"""The acquire/release table of GEM3xx: one row per API call, shared by the C/C++/CUDA rules and the
Python raw-binding rules (cuda-python's runtime and driver modules use the C names; CuPy's
``cupy.cuda.runtime`` has names of its own, given in ``cupy``).

A resource has a :class:`Kind`; the kind decides which rule reports a leak and which releases
match. Releasing a resource with a release of another kind is a mismatch (GEM303).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache


#: Text a Python file that calls the raw bindings holds: one of their imports (cuda-python, CuPy).
PYTHON_BINDING_MARKERS = ("from cuda import", "cuda.bindings", "cuda.cudart", "from cuda.cuda", "import cuda.cuda", "import cupy", "from cupy", "cupy_backends")


class Kind(enum.Enum):
    #            (what it is,                  rule that reports a leak, the matching release for messages)
    DEVICE_MEMORY = ("device memory", "GEM301", "cudaFree")
    HEAP_MEMORY = ("heap memory", "GEM302", "free")
    PINNED_MEMORY = ("pinned host memory", "GEM302", "cudaFreeHost")
    NEW_OBJECT = ("an object", "GEM302", "delete")
    NEW_ARRAY = ("an array", "GEM302", "delete[]")
    GRAPH = ("a CUDA graph", "GEM304", "cudaGraphDestroy")
    GRAPH_EXEC = ("an executable CUDA graph", "GEM304", "cudaGraphExecDestroy")
    STREAM = ("a CUDA stream", "GEM306", "cudaStreamDestroy")
    EVENT = ("a CUDA event", "GEM306", "cudaEventDestroy")
    CAPTURE = ("a stream capture", "GEM305", "cudaStreamEndCapture")

    @property
    def description(self) -> str:
        return self.value[0]

    @property
    def leak_code(self) -> str:
        return self.value[1]

    @property
    def release_hint(self) -> str:
        return self.value[2]


#: Kinds whose wrong release is worth reporting (GEM303). Handle types (streams, graphs) are distinct
#: C types, so the compiler already rejects releasing one with another's destroy call.
MEMORY_KINDS = frozenset({Kind.DEVICE_MEMORY, Kind.HEAP_MEMORY, Kind.PINNED_MEMORY, Kind.NEW_OBJECT, Kind.NEW_ARRAY})
MISMATCH_CODE = "GEM303"
#: A function too deeply nested to follow: reported as an input problem, never passed over as clean.
NOT_ANALYSED = "GEM000"


@dataclass(frozen=True)
class Acquire:
    name: str
    kind: Kind
    #: Index of the out-parameter that receives the handle (``cudaMalloc(&p, n)``: 0);
    #: None when the call returns it (``malloc``).
    out: int | None
    #: For a stream capture: the argument naming the stream whose capture is begun.
    key: int | None = None
    #: cuda-python exposes the call under the same name (returning ``(err, handle, ...)``).
    cuda_python: bool = False
    #: The name in CuPy's ``cupy.cuda.runtime`` (which returns the handle and raises on error).
    cupy: str | None = None


@dataclass(frozen=True)
class Release:
    name: str
    kind: Kind
    #: The argument that is released (for a capture, the stream).
    arg: int = 0
    cuda_python: bool = False
    cupy: str | None = None


# `new`/`new[]` and `delete`/`delete[]` are operators; the C front-end maps the expressions to these rows.
ACQUIRES: tuple[Acquire, ...] = (
    # GEM301: device memory (runtime and driver API, synchronous, stream-ordered, managed)
    Acquire("cudaMalloc", Kind.DEVICE_MEMORY, 0, cuda_python=True, cupy="malloc"),
    Acquire("cudaMallocAsync", Kind.DEVICE_MEMORY, 0, cuda_python=True, cupy="mallocAsync"),
    Acquire("cudaMallocFromPoolAsync", Kind.DEVICE_MEMORY, 0, cuda_python=True, cupy="mallocFromPoolAsync"),
    Acquire("cudaMallocManaged", Kind.DEVICE_MEMORY, 0, cuda_python=True, cupy="mallocManaged"),
    Acquire("cudaMallocPitch", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    Acquire("cudaMalloc3D", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    Acquire("cuMemAlloc", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    Acquire("cuMemAlloc_v2", Kind.DEVICE_MEMORY, 0),
    Acquire("cuMemAllocPitch", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    Acquire("cuMemAllocPitch_v2", Kind.DEVICE_MEMORY, 0),
    Acquire("cuMemAllocManaged", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    Acquire("cuMemAllocAsync", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    Acquire("cuMemAllocFromPoolAsync", Kind.DEVICE_MEMORY, 0, cuda_python=True),
    # GEM302: host memory
    Acquire("malloc", Kind.HEAP_MEMORY, None),
    Acquire("calloc", Kind.HEAP_MEMORY, None),
    Acquire("realloc", Kind.HEAP_MEMORY, None),
    Acquire("strdup", Kind.HEAP_MEMORY, None),
    Acquire("strndup", Kind.HEAP_MEMORY, None),
    Acquire("aligned_alloc", Kind.HEAP_MEMORY, None),
    Acquire("posix_memalign", Kind.HEAP_MEMORY, 0),
    Acquire("cudaMallocHost", Kind.PINNED_MEMORY, 0, cuda_python=True),
    Acquire("cudaHostAlloc", Kind.PINNED_MEMORY, 0, cuda_python=True, cupy="hostAlloc"),
    Acquire("cuMemAllocHost", Kind.PINNED_MEMORY, 0, cuda_python=True),
    Acquire("cuMemAllocHost_v2", Kind.PINNED_MEMORY, 0),
    Acquire("cuMemHostAlloc", Kind.PINNED_MEMORY, 0, cuda_python=True),
    Acquire("new", Kind.NEW_OBJECT, None),
    Acquire("new[]", Kind.NEW_ARRAY, None),
    # GEM304: graphs (created, captured, instantiated)
    Acquire("cudaGraphCreate", Kind.GRAPH, 0, cuda_python=True),
    Acquire("cudaStreamEndCapture", Kind.GRAPH, 1, cuda_python=True, cupy="streamEndCapture"),
    Acquire("cudaGraphClone", Kind.GRAPH, 0, cuda_python=True),
    Acquire("cuGraphCreate", Kind.GRAPH, 0, cuda_python=True),
    Acquire("cuStreamEndCapture", Kind.GRAPH, 1, cuda_python=True),
    Acquire("cuGraphClone", Kind.GRAPH, 0, cuda_python=True),
    Acquire("cudaGraphInstantiate", Kind.GRAPH_EXEC, 0, cuda_python=True, cupy="graphInstantiate"),
    Acquire("cudaGraphInstantiateWithFlags", Kind.GRAPH_EXEC, 0, cuda_python=True),
    Acquire("cudaGraphInstantiateWithParams", Kind.GRAPH_EXEC, 0, cuda_python=True),
    Acquire("cuGraphInstantiate", Kind.GRAPH_EXEC, 0, cuda_python=True),
    Acquire("cuGraphInstantiate_v2", Kind.GRAPH_EXEC, 0),
    Acquire("cuGraphInstantiateWithFlags", Kind.GRAPH_EXEC, 0, cuda_python=True),
    Acquire("cuGraphInstantiateWithParams", Kind.GRAPH_EXEC, 0, cuda_python=True),
    # GEM305: a capture begun on a stream is a resource keyed by the stream
    Acquire("cudaStreamBeginCapture", Kind.CAPTURE, None, key=0, cuda_python=True, cupy="streamBeginCapture"),
    Acquire("cuStreamBeginCapture", Kind.CAPTURE, None, key=0, cuda_python=True),
    Acquire("cuStreamBeginCapture_v2", Kind.CAPTURE, None, key=0),
    # GEM306: streams and events
    Acquire("cudaStreamCreate", Kind.STREAM, 0, cuda_python=True, cupy="streamCreate"),
    Acquire("cudaStreamCreateWithFlags", Kind.STREAM, 0, cuda_python=True, cupy="streamCreateWithFlags"),
    Acquire("cudaStreamCreateWithPriority", Kind.STREAM, 0, cuda_python=True, cupy="streamCreateWithPriority"),
    Acquire("cuStreamCreate", Kind.STREAM, 0, cuda_python=True),
    Acquire("cuStreamCreateWithPriority", Kind.STREAM, 0, cuda_python=True),
    Acquire("cudaEventCreate", Kind.EVENT, 0, cuda_python=True, cupy="eventCreate"),
    Acquire("cudaEventCreateWithFlags", Kind.EVENT, 0, cuda_python=True, cupy="eventCreateWithFlags"),
    Acquire("cuEventCreate", Kind.EVENT, 0, cuda_python=True),
)

RELEASES: tuple[Release, ...] = (
    Release("cudaFree", Kind.DEVICE_MEMORY, cuda_python=True, cupy="free"),
    Release("cudaFreeAsync", Kind.DEVICE_MEMORY, cuda_python=True, cupy="freeAsync"),
    Release("cuMemFree", Kind.DEVICE_MEMORY, cuda_python=True),
    Release("cuMemFree_v2", Kind.DEVICE_MEMORY),
    Release("cuMemFreeAsync", Kind.DEVICE_MEMORY, cuda_python=True),
    Release("free", Kind.HEAP_MEMORY),
    Release("realloc", Kind.HEAP_MEMORY),
    Release("cudaFreeHost", Kind.PINNED_MEMORY, cuda_python=True, cupy="freeHost"),
    Release("cuMemFreeHost", Kind.PINNED_MEMORY, cuda_python=True),
    Release("delete", Kind.NEW_OBJECT),
    Release("delete[]", Kind.NEW_ARRAY),
    Release("cudaGraphDestroy", Kind.GRAPH, cuda_python=True, cupy="graphDestroy"),
    Release("cuGraphDestroy", Kind.GRAPH, cuda_python=True),
    Release("cudaGraphExecDestroy", Kind.GRAPH_EXEC, cuda_python=True, cupy="graphExecDestroy"),
    Release("cuGraphExecDestroy", Kind.GRAPH_EXEC, cuda_python=True),
    Release("cudaStreamEndCapture", Kind.CAPTURE, cuda_python=True, cupy="streamEndCapture"),
    Release("cuStreamEndCapture", Kind.CAPTURE, cuda_python=True),
    Release("cudaStreamDestroy", Kind.STREAM, cuda_python=True, cupy="streamDestroy"),
    Release("cuStreamDestroy", Kind.STREAM, cuda_python=True),
    Release("cuStreamDestroy_v2", Kind.STREAM),
    Release("cudaEventDestroy", Kind.EVENT, cuda_python=True, cupy="eventDestroy"),
    Release("cuEventDestroy", Kind.EVENT, cuda_python=True),
    Release("cuEventDestroy_v2", Kind.EVENT),
)

#: Calls after which the process does not continue, so nothing held leaks.
NO_RETURN = frozenset(
    {"exit", "_exit", "_Exit", "abort", "quick_exit", "std::exit", "std::abort", "std::terminate", "__builtin_trap",
     "__builtin_unreachable", "std::unreachable", "__trap", "__assertfail"}
)

#: Error-check macros and helpers that wrap a call; the wrapped call is analysed as if written alone.
CHECK_WRAPPERS = frozenset(
    {"CUDA_CHECK", "checkCudaErrors", "C10_CUDA_CHECK", "AT_CUDA_CHECK", "CUDA_SAFE_CALL", "CUDA_CALL", "CHECK_CUDA",
     "cudaCheck", "CUDA_RT_CALL", "CUDA_TRY", "CU_CHECK", "CUDA_DRIVER_CHECK", "CHECK_CUDA_ERROR",
     "C10_CUDA_CHECK_WARN", "TORCH_CUDA_CHECK", "CUDACHECK", "CUCHECK", "checkCudaErrorsDRV", "gpuErrchk"}
)

#: Values a status code is compared with to mean success.
SUCCESS_VALUES = frozenset({"cudaSuccess", "CUDA_SUCCESS", "0", "hipSuccess"})
NULL_VALUES = frozenset({"NULL", "nullptr", "0", "None"})


@lru_cache(maxsize=1)
def acquires_by_name() -> dict[str, Acquire]:
    return {row.name: row for row in ACQUIRES}


@lru_cache(maxsize=1)
def releases_by_name() -> dict[str, Release]:
    return {row.name: row for row in RELEASES}


def release_for(row: Acquire) -> str:
    """The release to name in a message about ``row``: the driver API's for a driver-API acquire."""
    driver = row.name.startswith("cu") and not row.name.startswith("cuda")
    for release in RELEASES:
        if release.kind is row.kind and release.name.startswith("cu") and not release.name.startswith("cuda") and driver:
            return release.name
    return row.kind.release_hint


def kinds_of(code: str) -> frozenset[Kind]:
    return frozenset(kind for kind in Kind if kind.leak_code == code)


def markers_for(code: str, *, python: bool = False) -> tuple[str, ...]:
    """Text markers without which a file cannot hold a finding of ``code`` (rule prefilters): the C names,
    or with ``python`` the names the bindings expose."""
    if code == MISMATCH_CODE:
        rows: list[Acquire | Release] = [row for row in RELEASES if row.kind in MEMORY_KINDS]
    else:
        rows = [row for row in ACQUIRES if row.kind.leak_code == code]
    if python:
        markers = {row.name for row in rows if row.cuda_python} | {row.cupy for row in rows if row.cupy}
    else:
        markers = {row.name.rstrip("[]") for row in rows} | {row.cupy for row in rows if row.cupy}
    # `cudaMalloc` already matches wherever `cudaMallocAsync` does.
    return tuple(sorted(m for m in markers if not any(other != m and other in m for other in markers)))
