"""GEM307: an async copy or memset on the default stream in a function whose kernels run on another stream,
which it is the only one to synchronize.

The legacy default stream serializes with every blocking stream (the copy waits for the kernels and the
kernels for the copy, so the overlap the stream was created for is gone); with a non-blocking stream or
per-thread default streams it does not serialize at all, and synchronizing only the kernels' stream does
not wait for the copy, so the host reads a buffer that may still be in flight. Either way the copy belongs
on the kernels' stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gemlint.native import c_syntax as syn

if TYPE_CHECKING:
    from gemlint.frontends.native import NativeDocument, Node

#: Async copies and memsets, with the index of their stream argument (omitted means the default stream).
#: Prefetches (``cudaMemPrefetchAsync``) are not among them: a migration hint, whose completion no result
#: depends on.
ASYNC_COPIES: dict[str, int] = {
    "cudaMemcpyAsync": 4,
    "cudaMemsetAsync": 3,
    "cudaMemcpy2DAsync": 7,
    "cudaMemset2DAsync": 5,
    "cudaMemcpy3DAsync": 1,
    "cudaMemset3DAsync": 3,
    "cudaMemcpyToSymbolAsync": 5,
    "cudaMemcpyFromSymbolAsync": 5,
    "cudaMemcpyPeerAsync": 5,
    "cudaMemcpy2DToArrayAsync": 8,
    "cudaMemcpy2DFromArrayAsync": 8,
    "cuMemcpyAsync": 3,
    "cuMemcpyHtoDAsync": 3,
    "cuMemcpyDtoHAsync": 3,
    "cuMemcpyDtoDAsync": 3,
    "cuMemsetD8Async": 3,
    "cuMemsetD16Async": 3,
    "cuMemsetD32Async": 3,
}
#: Launch APIs with the index of their stream argument (triple-chevron launches use the fourth config value).
LAUNCHES: dict[str, int] = {"cudaLaunchKernel": 5, "cudaLaunchCooperativeKernel": 5, "cuLaunchKernel": 9}
STREAM_SYNCS = frozenset({"cudaStreamSynchronize", "cuStreamSynchronize"})
DEVICE_SYNCS = frozenset({"cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize"})
DEFAULT_STREAMS = frozenset({"0", "NULL", "nullptr", "cudaStreamLegacy", "cudaStreamDefault", "CU_STREAM_LEGACY", "{}", "0x0"})
MARKERS = tuple(ASYNC_COPIES)


@dataclass(frozen=True)
class DefaultStreamCopy:
    call: Node
    name: str
    stream: Node  # the stream the function's kernels run on and synchronize (at a launch)
    omitted: bool

    def streams(self) -> tuple[str, str]:
        """What the kernels run on, and what to pass instead, as a message says them. A stream written with a
        side effect (``streams[i++]``) is another stream each time it is evaluated: the message names the array
        (or the expression) and never offers the expression itself as the argument to pass."""
        written = syn.normalized(self.stream)
        if not _has_side_effects(self.stream):
            return f"`{written}` and only `{written}` is", f"pass `{written}`"
        if self.stream.type == "subscript_expression" and not _has_side_effects(self.stream.child_by_field_name("argument")):
            array = syn.normalized(self.stream.child_by_field_name("argument"))
            return f"the streams of `{array}` (`{written}`) and only they are", f"pass the stream of `{array}` whose kernels use the data"
        return f"`{written}` and only `{written}` is", "pass the stream whose kernels use the data"


def _has_side_effects(node: Node | None) -> bool:
    """``node`` changes a variable when evaluated (``i++``, ``s = next``)."""
    return node is not None and any(n.type in ("update_expression", "assignment_expression") for n in syn.descendants(node))


def is_default_stream(node: Node | None) -> bool:
    """``0``, ``NULL``, ``nullptr``, ``cudaStreamLegacy``, ``(cudaStream_t)0``, ``cudaStream_t(0)``, ``{}``."""
    if node is None:
        return True
    stripped = syn.strip(node)
    if stripped is None:
        return False
    if stripped.type == "call_expression":  # cudaStream_t(0), cudaStream_t{} as functional casts
        args = syn.arguments(stripped)
        if syn.name_of(stripped.child_by_field_name("function")) in ("cudaStream_t", "CUstream") and len(args) <= 1:
            return not args or is_default_stream(args[0])
    return syn.normalized(stripped) in DEFAULT_STREAMS


def _launch_stream(call: Node) -> Node | None:
    """The stream a kernel launch uses, or None for the default stream (or a launch that is not one)."""
    for child in call.named_children:
        if child.type == "kernel_call_syntax":
            config = [c for c in child.named_children if c.type != "comment"]
            return config[3] if len(config) >= 4 and not is_default_stream(config[3]) else None
    index = LAUNCHES.get(syn.last_component(syn.callee_name(call)))
    if index is not None:
        args = syn.arguments(call)
        if len(args) > index and not is_default_stream(args[index]):
            return args[index]
    return None


def default_stream_copies(document: NativeDocument) -> list[DefaultStreamCopy]:
    from gemlint.frontends.native import function_nodes

    found: list[DefaultStreamCopy] = []
    if not any(marker.encode() in document.data for marker in MARKERS):
        return found
    for function in function_nodes(document):
        body = function.child_by_field_name("body")
        if body is None or not any(marker.encode() in (body.text or b"") for marker in MARKERS):
            continue
        found.extend(_in_function(body))
    return found


def _in_function(body: Node) -> list[DefaultStreamCopy]:
    copies: list[tuple[Node, str, bool]] = []
    launch_streams: dict[str, Node] = {}  # stream -> its first launch's stream argument
    syncs: dict[str, int] = {}  # stream -> offset of its last synchronization
    device_sync = False
    for node in syn.descendants(body):
        if node.type != "call_expression":
            continue
        name = syn.last_component(syn.callee_name(node))
        args = syn.arguments(node)
        if name in ASYNC_COPIES:
            index = ASYNC_COPIES[name]
            if len(args) <= index:
                copies.append((node, name, True))
            elif is_default_stream(args[index]):
                copies.append((node, name, False))
        elif name in STREAM_SYNCS:
            if not args or is_default_stream(args[0]):
                device_sync = True  # synchronizing the legacy default stream waits for the copy too
            else:
                syncs[syn.normalized(args[0])] = max(syncs.get(syn.normalized(args[0]), 0), node.start_byte)
        elif name in DEVICE_SYNCS:
            device_sync = True
        else:
            stream = _launch_stream(node)
            if stream is not None:
                launch_streams.setdefault(syn.normalized(stream), stream)
    if device_sync or not copies:
        return []
    synced = {stream: offset for stream, offset in syncs.items() if stream in launch_streams}
    if not synced:
        return []
    findings = []
    for call, name, omitted in copies:
        later = [stream for stream, offset in synced.items() if offset > call.start_byte]
        if later:
            findings.append(DefaultStreamCopy(call, name, launch_streams[sorted(later)[0]], omitted))
    return findings
