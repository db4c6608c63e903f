"""The native pairing's walks: a body's walk (by tree cursor) visits what a walk of ``named_children`` visits, a
step's facts and the names a function changes read from that walk equal those read from the tree, and a body whose
acquire marker is only in a comment, a string or a method name builds no graph."""

from __future__ import annotations

import pytest

from gemlint.frontends.native import function_nodes, parse
from gemlint.native import c_syntax as syn
from gemlint.native.c_cfg import _changing_names, _changing_names_below
from gemlint.native.c_pairing import FileAnalysis
from gemlint.native.c_units import StepFacts

SOURCE = """\
#include <cuda_runtime.h>
#define CHECK(call) if ((call) != cudaSuccess) return -1;

struct Pool {
    float* slab;
    int grow(int n) { slab = new float[n]; return 0; }
};

int run(int n, const char* path) {
    float* device = nullptr;
    CHECK(cudaMalloc(&device, n * sizeof(float)));
    float* half = device + n / 2;
    auto release = [&]() { cudaFree(device); device = nullptr; };
    for (int i = 0; i < n; ++i) {
        int scratch = i * 2;
        if (scratch > n) { release(); return 1; }
        struct Local { int x; } local{scratch};
        half[i % 2] = local.x;
    }
#ifdef USE_STREAM
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaStreamDestroy(stream);
#else
    cudaDeviceSynchronize();
#endif
    std::vector<int> sizes = {1, 2, 3};
    for (auto size : sizes) { n += size; }
    int broken = (n + ;
    release();
    return 0;
}

void quiet(Buffer& buffer) {
    // cudaMalloc(&p, n) was here before the buffer owned its memory
    const char* note = "call cudaMalloc once";
    buffer.malloc(16);
}
"""


def _document():
    return parse(None, SOURCE)


def _bodies():
    document = _document()
    return document, [body for node in function_nodes(document) if (body := node.child_by_field_name("body")) is not None]


def _reference(node, skip=syn.NESTED_CODE):
    """``node`` and its named descendants by ``named_children``, nested code not entered (the root always is)."""
    found = [node]
    for child in node.named_children:
        found += [child] if child.type in skip else _reference(child, skip)
    return found


def test_a_bodys_walk_visits_what_named_children_reach_in_the_same_order():
    _, bodies = _bodies()
    assert len(bodies) >= 4  # the method, run, its lambda and quiet
    for body in bodies:
        walk = syn.Walk(body)
        reference = _reference(body)
        assert walk.nodes == reference
        assert walk.types == [node.type for node in reference]
        for index, node in enumerate(walk.nodes):  # each node's descendants are the slice up to its end
            under = walk.nodes[index : walk.ends[index]]
            assert under == ([node] if index and node.type in syn.NESTED_CODE else _reference(node))


@pytest.mark.parametrize("skip", [syn.NESTED_CODE, frozenset()], ids=["nested code skipped", "every node"])
def test_descendants_walk_what_named_children_reach(skip):
    document = _document()
    assert list(syn.descendants(document.root, skip=skip)) == _reference(document.root, skip)
    for node in function_nodes(document):
        assert list(syn.descendants(node, skip=skip)) == _reference(node, skip)


def test_step_facts_read_from_the_walk_equal_those_read_from_the_tree():
    analysis = FileAnalysis(_document())
    steps = 0
    for unit in analysis.units:
        for step in unit.graph.steps:
            if not step.nodes:
                continue
            steps += 1
            walked, read = StepFacts(step, unit.walk), StepFacts(step)
            for field in ("calls", "deletes", "news", "assignments", "declarators", "names"):
                assert getattr(walked, field) == getattr(read, field), field
    assert steps > 10


def test_the_names_a_function_changes_read_from_its_walk_equal_those_read_from_the_tree():
    _, bodies = _bodies()
    for body in bodies:
        from_tree: set[str] = set()
        _changing_names_below(body, False, from_tree)
        assert _changing_names(syn.Walk(body)) == frozenset(from_tree)
    run_body = next(body for body in bodies if b"cudaMalloc(&device" in body.text)
    assert {"device", "i", "scratch", "n"} <= _changing_names(syn.Walk(run_body))


def test_a_body_whose_marker_is_in_a_comment_a_string_or_a_method_builds_no_graph():
    analysis = FileAnalysis(_document())
    analysis.run()
    graphed = {unit.name for unit in analysis.units if "graph" in vars(unit)}
    assert "run" in graphed and "grow" in graphed
    assert "quiet" not in graphed  # its markers: a comment, a string and `buffer.malloc(...)`


ALIASES = """\
void copy(int n) {
    float* p = nullptr;
    cudaMalloc(&p, n);
    float* q = p;
    float* r = q + 4;
    long gap = r - q;
    float* d = r - q;
    float* s;
    s = r;
    float* t = 8 + s;
    float* u = 8 - s;
    cudaFree(p);
}
"""


def test_a_variables_aliases_are_its_copies_and_pointers_moved_from_them():
    analysis = FileAnalysis(parse(None, ALIASES))
    (unit,) = analysis.units
    # Of p: `d = r - q` is the distance of two of its aliases, `u = 8 - s` points into nothing, `gap` is no pointer.
    assert analysis.uses.aliases(unit, "p") == frozenset({"p", "q", "r", "s", "t"})
    # Of r, q is not one: `d = r - q` is r moved back.
    assert analysis.uses.aliases(unit, "r") == frozenset({"r", "s", "t", "d"})
