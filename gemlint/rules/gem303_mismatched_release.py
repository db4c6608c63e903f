from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rules.native_base import PairingRule


class MismatchedRelease(PairingRule):
    code = "GEM303"
    name = "mismatched-release"
    severity = Severity.ERROR
    example_language = Language.NATIVE
    summary = "Memory is released with the wrong call: `free` on device memory, `cudaFree` on pinned host memory, `delete` on `new[]`, `cudaFreeHost` on `malloc` memory, ..."
    rationale = (
        "Each allocator has exactly one release. `cudaFree` on a `cudaMallocHost` pointer fails with "
        "`cudaErrorInvalidValue` and frees nothing (the pinned buffer leaks, and the error is easy to ignore); `free` "
        "on device memory corrupts the host heap; `delete` on an array from `new[]` is undefined behaviour that "
        "skips destructors and may corrupt the heap. The wrong release still counts as the release, so such a "
        "path is reported once, here, and not also as a leak. Members allocated in one method and released in "
        "another (a constructor and its destructor) are checked across the file, and so are the elements of a member "
        "array (`buffers_[i] = new float[n]` in one method, `delete buffers_[i]` in another). In Python the same pairs are "
        "checked for cuda-python and CuPy's runtime module."
    )
    not_flagged = (
        "`cudaFreeAsync` on memory from `cudaMalloc` (allowed by CUDA), `realloc` of `malloc` memory.",
        "Members acquired with more than one kind of allocator in the file, or also assigned something else (`buf_ "
        "= ptr` after `posix_memalign(&ptr, ...)`, or a parameter): the release cannot be matched.",
        "Releases through a macro (`FREE_BUF(p)`): a macro may be defined once per build configuration "
        "(`cudaFree` in one, `free` in another), so it counts as the release without being matched.",
        "Allocations and releases chosen by the same test of a value not changed in between (`if (pageable) p = "
        "malloc(n); else cudaMallocHost(&p, n); ... if (pageable) free(p); else cudaFreeHost(p);`, or two `switch` "
        "statements on the same variable): a path takes the same branch or case at both. A local is a copy of "
        "the pointer only on the paths that copied it (`case MANAGED: host = dev;`).",
        "A member reached through a pointer releases what was stored into it, not its container: `delete "
        "s->engine` after `s = (Session*)calloc(...)` and `s->engine = new Engine` is the right release.",
    )
    bad = """\
void upload(const float* host, size_t n) {
  float* staging = nullptr;
  cudaMallocHost(&staging, n * sizeof(float));
  memcpy(staging, host, n * sizeof(float));
  consume(staging, n);
  cudaFree(staging);
}
"""
    good = """\
void upload(const float* host, size_t n) {
  float* staging = nullptr;
  cudaMallocHost(&staging, n * sizeof(float));
  memcpy(staging, host, n * sizeof(float));
  consume(staging, n);
  cudaFreeHost(staging);
}
"""
    benchmark = "Pinned bytes still allocated after N calls (the wrong `cudaFree` fails and frees nothing), and AddressSanitizer's alloc-dealloc-mismatch report for `delete` on `new[]`."
    tags = ("correctness", "memory", "cuda")
    precision = "high"
