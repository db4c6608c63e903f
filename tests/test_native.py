"""The C/C++/CUDA front-end and the GEM3xx resource table, beyond the fixtures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gemlint.api import lint_source
from gemlint.config import default_config
from gemlint.languages import Language
from gemlint.native.resources import ACQUIRES, MEMORY_KINDS, MISMATCH_CODE, RELEASES, Kind
from gemlint.runner import FixMode, run

# A plausible C type for each kind's handle.
_HANDLE_TYPE = {
    Kind.DEVICE_MEMORY: "void*",
    Kind.HEAP_MEMORY: "void*",
    Kind.PINNED_MEMORY: "void*",
    Kind.NEW_OBJECT: "int*",
    Kind.NEW_ARRAY: "int*",
    Kind.GRAPH: "cudaGraph_t",
    Kind.GRAPH_EXEC: "cudaGraphExec_t",
    Kind.STREAM: "cudaStream_t",
    Kind.EVENT: "cudaEvent_t",
}


def _leaking_c(row) -> str:
    """A function that acquires with ``row`` and returns early without releasing."""
    if row.name == "new":
        acquire = "int* h = new int;"
    elif row.name == "new[]":
        acquire = "int* h = new int[n];"
    elif row.kind is Kind.CAPTURE:
        acquire = f"{row.name}(s, 0);"
    elif row.out is None:
        acquire = f"void* h = {row.name}(n);"
    else:
        args = ["0"] * (row.out + 2)
        args[row.out] = "&h"
        acquire = f"{_HANDLE_TYPE[row.kind]} h; {row.name}({', '.join(args)});"
    return f"int f(cudaStream_t s, int n, int stop) {{\n  {acquire}\n  if (stop) return 1;\n  use(n);\n  return 0;\n}}\n"


@pytest.mark.parametrize("row", ACQUIRES, ids=lambda r: r.name)
def test_every_acquire_of_the_table_is_checked_in_c(row):
    found = lint_source(_leaking_c(row), "ops.cu", select=("GEM3",))
    assert [(d.code, d.line) for d in found] == [(row.kind.leak_code, 2)], found


@pytest.mark.parametrize("row", [r for r in ACQUIRES if r.cuda_python], ids=lambda r: r.name)
def test_every_cuda_python_acquire_is_checked(row):
    if row.kind is Kind.CAPTURE:
        acquire = f"err, = cudart.{row.name}(stream, 0)" if row.name.startswith("cuda") else f"err, = cuda.{row.name}(stream, 0)"
    else:
        module = "cudart" if row.name.startswith("cuda") else "cuda"
        acquire = f"err, handle = {module}.{row.name}(nbytes)"
    source = f"from cuda import cuda, cudart\n\ndef infer(stream, nbytes, stop):\n    {acquire}\n    if stop:\n        return None\n    return 1\n"
    found = lint_source(source, "serve.py", select=("GEM3",))
    assert [(d.code, d.line) for d in found] == [(row.kind.leak_code, 4)], found


@pytest.mark.parametrize("row", [r for r in ACQUIRES if r.cupy], ids=lambda r: r.cupy)
def test_every_cupy_acquire_is_checked(row):
    statement = f"runtime.{row.cupy}(stream, 0)" if row.kind is Kind.CAPTURE else f"handle = runtime.{row.cupy}(nbytes)"
    source = f"from cupy.cuda import runtime\n\ndef infer(stream, nbytes, stop):\n    {statement}\n    if stop:\n        return None\n    return 1\n"
    found = lint_source(source, "serve.py", select=("GEM3",))
    assert [(d.code, d.line) for d in found] == [(row.kind.leak_code, 4)], found


_MEMORY_ACQUIRES = {kind: next(r for r in ACQUIRES if r.kind is kind and r.name not in ("realloc",)) for kind in MEMORY_KINDS}
_MEMORY_RELEASES = [r for r in RELEASES if r.kind in MEMORY_KINDS and r.name != "realloc"]


@pytest.mark.parametrize("release", _MEMORY_RELEASES, ids=lambda r: r.name)
@pytest.mark.parametrize("kind", sorted(MEMORY_KINDS, key=lambda k: k.name), ids=lambda k: k.name)
def test_each_memory_release_matches_only_its_own_kind(kind, release):
    row = _MEMORY_ACQUIRES[kind]
    if row.name in ("new", "new[]"):
        acquire = f"int* h = {'new int' if row.name == 'new' else 'new int[n]'};"
    elif row.out is None:
        acquire = f"int* h = (int*){row.name}(n);"
    else:
        acquire = f"int* h; {row.name}((void**)&h, n);"
    free = {"delete": "delete h;", "delete[]": "delete[] h;"}.get(release.name, f"{release.name}(h);")
    found = lint_source(f"void f(int n) {{\n  {acquire}\n  {free}\n}}\n", "ops.cpp", select=("GEM3",))
    expected = [] if release.kind is kind else [(MISMATCH_CODE, 3)]
    assert [(d.code, d.line) for d in found] == expected, found


def test_binary_native_files_are_gem000_and_latin1_ones_are_linted(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"__global__ void k() {}\n\x00\x01\x02")
    (tmp_path / "latin.cuh").write_bytes(b"// caf\xe9\nvoid f() {\n  malloc(4);\n}\n")
    found = run([tmp_path], default_config(tmp_path), FixMode(), jobs=1).diagnostics
    assert sorted((d.path.rsplit("/", 1)[-1], d.code, d.line) for d in found) == [("blob.cu", "GEM000", 2), ("latin.cuh", "GEM302", 3)]


def test_constructs_the_grammar_does_not_know_do_not_hide_the_rest():
    source = (
        "template <int N> __launch_bounds__(256, N) __global__ void k(float* x) { x[0] = @@ ; }\n"
        "#define WEIRD(x) x ## _suffix\n"
        "WEIRD(garbage) ))) {{\n"
        "void leaks(int n) {\n"
        "  float* d;\n"
        "  cudaMalloc(&d, n);\n"
        "}\n"
    )
    found = lint_source(source, "ops.cu")
    assert [(d.code, d.line) for d in found] == [("GEM301", 6)]


def test_deeply_nested_code_is_reported_never_passed_as_clean():
    depth = 3000
    body = "if (x) {" * depth + "cudaMalloc(&d, n);" + "}" * depth
    (found,) = lint_source(f"void f(int x, int n) {{ float* d; {body} }}\n", "deep.cu")
    # Too deep to follow: a GEM000 names the function (once, though every GEM3xx rule runs the analysis).
    assert (found.code, found.line, found.column) == ("GEM000", 1, 1)
    assert found.message == "`f` is nested too deeply to follow; its resources were not checked"
    # A deep expression is no obstacle: the leak beside it is found.
    parens = "(" * 20000 + "0" + ")" * 20000
    found = lint_source(f"int g(int n) {{ float* d; cudaMalloc(&d, n); return {parens}; }}\n", "parens.cu")
    assert [(d.code, d.line) for d in found] == [("GEM301", 1)]


def _config_parser(keys: int, freed: bool) -> str:
    chain = " else ".join(f'if (strcmp(key, "k{i}") == 0) {{ values[{i % 8}] = atoi(value); }}' for i in range(keys))
    release = "free(group);" if freed else ""
    return (
        "#include <stdlib.h>\n#include <string.h>\n"
        "int parse(const char* key, const char* value, int* values) {\n"
        "  char* group = (char*)malloc(64);\n"
        f"  {chain}\n"
        f"  {release}\n"
        "  return 0;\n}\n"
    )


def test_a_long_else_if_chain_is_flat_code_not_deep_nesting():
    # A configuration parser's chain of hundreds of keys is followed like any other branch: the buffer freed after
    # it is no leak, and one never freed is found.
    assert lint_source(_config_parser(400, freed=True), "parser.c") == []
    assert [(d.code, d.line) for d in lint_source(_config_parser(400, freed=False), "parser.c")] == [("GEM302", 4)]


def test_columns_count_code_points_not_bytes():
    source = 'void f(int n) {\n  const char* s = "héllo"; float* d; cudaMalloc(&d, n);\n}\n'
    (finding,) = lint_source(source, "ops.cu")
    assert (finding.line, finding.column) == (2, source.splitlines()[1].index("cudaMalloc") + 1)


def test_header_and_c_files_use_their_grammar():
    c_source = "void f(int n) {\n  char* new = malloc(n);\n  if (n) return;\n  free(new);\n}\n"
    assert [(d.code, d.line) for d in lint_source(c_source, "list.c")] == [("GEM302", 2)]
    assert [(d.code, d.line) for d in lint_source("inline void f(int n) {\n  int* p = new int[n];\n}\n", "util.hpp")] == [("GEM302", 2)]


def test_gem501_cpp_fix_enables_all_optimizations(tmp_path):
    path = tmp_path / "session.cpp"
    path.write_text(
        "void make(Ort::SessionOptions& o) {\n  o.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL);\n}\n"
    )
    run([path], default_config(tmp_path), FixMode(apply=True, unsafe=True), jobs=1)
    assert "GraphOptimizationLevel::ORT_ENABLE_ALL" in path.read_text()
    assert run([path], default_config(tmp_path), FixMode(), jobs=1).diagnostics == []


def test_python_only_runs_never_load_tree_sitter():
    code = (
        "import sys\nfrom gemlint.api import lint_source\n"
        "lint_source('from cuda import cudart\\ndef f(n):\\n    err, p = cudart.cudaMalloc(n)\\n', 'a.py')\n"
        "print(any(m.startswith('tree_sitter') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_rules_span_both_languages_with_one_class():
    from gemlint.registry import rule_by_code

    for code in ("GEM301", "GEM302", "GEM303", "GEM304", "GEM305", "GEM306", "GEM501"):
        assert rule_by_code(code).languages == {Language.NATIVE, Language.PYTHON}
    assert rule_by_code("GEM307").languages == {Language.NATIVE}


def test_deep_nesting_is_reported_in_a_fresh_interpreter_not_a_crash(tmp_path):
    # A fresh interpreter has the whole stack to recurse into: unguarded, the graph builder overflowed the C
    # stack (a segfault) before Python's recursion limit was reached.
    source = tmp_path / "deep.cu"
    source.write_text("void f(int x, int n) { float* d; " + "if (x) {" * 4000 + "cudaMalloc(&d, n);" + "}" * 4000 + " }\n")
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom gemlint.config import default_config\nfrom gemlint.runner import run\n"
        "found = run([Path(sys.argv[1])], default_config(Path(sys.argv[1]).parent), jobs=1).diagnostics\n"
        "print(json.dumps([[d.code, d.line, d.message] for d in found]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(source)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [["GEM000", 1, "`f` is nested too deeply to follow; its resources were not checked"]]


LOOP_DROPS = """\
int work(float* p, int i);
void skipped(int n, int m) {
  for (int i = 0; i < n; i++) {
    float* buf = nullptr;
    cudaMalloc(&buf, m);
    if (work(buf, i) < 0) continue;
    cudaFree(buf);
  }
}
void left(int n, int m) {
  while (n--) {
    float* buf = nullptr;
    cudaMalloc(&buf, m);
    if (work(buf, n) < 0) break;
    cudaFree(buf);
  }
  work(nullptr, 0);
}
void captured_each_step(cudaStream_t s, int steps) {
  for (int i = 0; i < steps; i++) {
    cudaGraph_t graph;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    work(nullptr, i);
    cudaStreamEndCapture(s, &graph);
  }
}
void captured_into_one(cudaStream_t s, int steps) {
  cudaGraph_t graph;
  for (int i = 0; i < steps; i++) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    work(nullptr, i);
    cudaStreamEndCapture(s, &graph);
  }
  cudaGraphDestroy(graph);
}
"""


def test_a_leak_in_a_loop_names_where_the_pointer_is_dropped():
    found = {d.line: d.message for d in lint_source(LOOP_DROPS, "loops.cu")}
    assert "`buf` goes out of scope when `continue` at line 6 goes on to the next iteration of the loop at line 3" in found[5]
    assert "`buf` goes out of scope when `break` at line 14 leaves the loop at line 11" in found[13]
    assert "`graph` goes out of scope when an iteration of the loop at line 20 ends, once per iteration," in found[24]
    assert "the next iteration of the loop at line 29 acquires into `graph` again at line 32, once per iteration," in found[32]


def test_a_stream_written_with_a_side_effect_is_never_offered_as_the_argument_to_pass():
    source = (
        "__global__ void step(float* x);\n"
        "void run(cudaStream_t* streams, float* x, float* host, int devices) {\n"
        "  int d = 0;\n"
        "  while (d < devices) step<<<1, 32, 0, streams[d++]>>>(x);\n"
        "  cudaMemcpyAsync(host, x, 4, cudaMemcpyDeviceToHost);\n"
        "  d = 0;\n"
        "  while (d < devices) cudaStreamSynchronize(streams[d++]);\n"
        "}\n"
    )
    (found,) = lint_source(source, "streams.cu")
    assert found.code == "GEM307"
    assert "kernels run on the streams of `streams` (`streams[d++]`) and only they are synchronized" in found.message
    assert found.message.endswith("pass the stream of `streams` whose kernels use the data")


def test_a_pointer_put_into_a_dying_local_container_is_named_with_the_container():
    source = """
struct Task { int id; };
int batch(int n) {
  std::vector<Task*> tasks;
  for (int i = 0; i < n; ++i) {
    Task* t = new Task();
    tasks.push_back(t);
  }
  return (int)tasks.size();
}
"""
    (finding,) = lint_source(source, "batch.cpp")
    assert finding.code == "GEM302" and finding.line == 6
    assert "`t` holds an object from `new` that is put into `tasks`, a local container of raw pointers" in finding.message
    assert "call `delete` on each element before the function returns" in finding.message


def test_a_status_handed_through_a_wrapper_decides_which_return_leaks():
    # The wrapper's name says nothing of checking; what it returns is compared with cudaSuccess, as a status is.
    source = (
        "#define TRACE(e) trace_status((e), __FILE__, __LINE__)\n"
        "cudaError_t run(float* out, int n, cudaStream_t s) {\n"
        "  void* scratch = nullptr;\n"
        "  cudaError_t status;\n"
        "  if (status = TRACE(cudaMallocAsync(&scratch, n, s)); status != cudaSuccess) {\n"
        "    return status;\n"
        "  }\n"
        "  if (status = TRACE(fill(scratch, out, n, s)); status != cudaSuccess) {\n"
        "    return status;\n"
        "  }\n"
        "  if (TRACE(cudaMallocHost(&out, n)) != cudaSuccess) return cudaErrorMemoryAllocation;\n"
        "  cudaFreeHost(out);\n"
        "  return TRACE(cudaFreeAsync(scratch, s));\n"
        "}\n"
    )
    (found,) = lint_source(source, "wrapped.cu")
    assert (found.code, found.line) == ("GEM301", 5)
    assert "not released when the function returns at line 9" in found.message
