"""A native file's tree is freed as soon as its rules are done, without waiting for a full collection: the collector
does not count tree-sitter's memory (a 2 MB header's tree holds over 100 MB), so a tree kept alive by a reference
cycle until the next full collection raises the largest process by that much for every large file in between."""

from __future__ import annotations

import gc
import weakref

import pytest

from gemlint.api import lint_source
from gemlint.frontends import native

LEAKY = """\
#include <cuda_runtime.h>
int run(int n, int fail) {
  float *device;
  cudaMalloc(&device, n);
  if (fail) return -1;
  cudaFree(device);
  return 0;
}
"""


@pytest.fixture
def documents(monkeypatch):
    """Weak references to every native document the run parses."""
    made: list[weakref.ref] = []
    parse = native.parse

    def recording(source, text):
        document = parse(source, text)
        made.append(weakref.ref(document))
        return document

    monkeypatch.setattr(native, "parse", recording)
    return made


def test_the_document_is_freed_by_reference_counting(documents):
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        findings = lint_source(LEAKY, "kernel.cu", select=("GEM301",))
        assert [finding.code for finding in findings] == ["GEM301"]  # the shared pairing analysis ran
        assert documents and all(reference() is None for reference in documents)
    finally:
        if was_enabled:
            gc.enable()
