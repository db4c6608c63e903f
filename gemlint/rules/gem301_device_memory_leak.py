from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rules.native_base import PairingRule


class DeviceMemoryLeak(PairingRule):
    code = "GEM301"
    name = "device-memory-leak"
    severity = Severity.ERROR
    example_language = Language.NATIVE
    summary = "Device memory from `cudaMalloc` (or its async, managed, pitched and driver-API forms) is not freed on some path out of the function."
    rationale = (
        "Device memory is the scarcest resource of an inference server. A `cudaMalloc` whose pointer is lost on "
        "an early return, an error branch or a `throw` is gone until the process exits: each request that takes "
        "that path leaks the whole buffer, `cudaMemGetInfo` shows free memory falling by exactly the allocation "
        "size per call, and the service ends in `cudaErrorMemoryAllocation` and a restart. The check follows every "
        "path of the function (returns, `goto` cleanup labels, `if`/`switch`/loops, `break`/`continue`, `throw`, "
        "and error-check macros that may return, defined in the same file (at file scope or inside the function) "
        "or in a project header it includes through `#include \"...\"`, searched beside the file and then in the "
        "include folders of `CMakeLists.txt` or `compile_commands.json`; a use of a macro means its last "
        "definition above it); error-check wrappers such as "
        "`CUDA_CHECK(...)`, `checkCudaErrors(...)`, `C10_CUDA_CHECK(...)` and `AT_CUDA_CHECK(...)` are seen "
        "through, and a check named so that returns whether the call passed is read as one: "
        "`if (checkRuntime(cudaMallocHost(&p, n))) return p; throw std::bad_alloc();` throws only where nothing was "
        "allocated (a check named for the error, `checkError(...)`, only when negated). The same pairs are checked in Python for cuda-python (`err, ptr = cudart.cudaMalloc(n)`) and "
        "CuPy (`cupy.cuda.runtime.malloc`)."
    )
    not_flagged = (
        "Code the build does not compile: under `#if 0`, under a test that is always false (`if (0)`, `if "
        "(DEBUG_ENABLE)` where every definition the file and its project headers give the macro is `0`), and under "
        "`#ifdef` a debugging switch (`DEBUG_DUMP`, `VERBOSE`, `TRACE_*`) that nothing defines: not the file, not "
        "the project headers it includes, not a build file in its folder or above it (outside comments). A chain "
        "of alternatives without `#else` (`#if defined(_WIN32) ... #elif defined(__unix__) ... #endif`) names the "
        "platforms the code is written for: one of them is compiled, and a build that defines none is no path "
        "(a single `#ifdef` without `#else` is two configurations).",
        "A search for its place: a loop that hands the pointer over and leaves at once (`nodes.insert(at, node); break;`) is assumed to find one; the path on which it finds none is not taken to leak. A loop that hands it over at every match without leaving, or makes one in each iteration, is no such search.",
        "A fallback for a caller that passes no buffer: an allocation into a parameter in the branch taken when it is null (`if (out == NULL) out = malloc(n);`). Whether any caller passes null is not known here.",
        "Pointers that escape: returned, stored into a member, field, global, static or out-parameter, put into "
        "a container, handed to an owner (`std::unique_ptr` with a deleter, `torch::from_blob` with a deleter, "
        "a constructor, a method of another object (but TensorRT's execution context, which is only told where a "
        "run's buffers are: `context->setTensorAddress(name, p)`, `enqueueV2(bindings, ...)`), a callable object such "
        "as a layer: `(*layer)(p)`, `op(p)`), "
        "passed to a call whose result is returned, stored or kept in a local that escapes "
        "(`return make_buffer(iface, p, n)`, `return Wrapper(p, 0)`, also where `Wrapper`'s constructor is in the "
        "file and keeps the pointer in a member initializer), or captured by a lambda. A call of a local "
        "lambda whose body releases the pointer (`auto cleanup = [&]() { cudaFree(p); }; ... cleanup(); return`) "
        "releases it there. An optional out-parameter (`if (out != nullptr) *out = p;`): a caller that passes null "
        "asks for nothing back, so the test of the parameter decides whether the pointer is held, as a release's "
        "test does.",
        "Pointers released through a macro defined in the file, in the function or in a project header: a "
        "cleanup macro whose body frees the caller's variables (`#define CLEANUP() do { if (a) cudaFree(a); } "
        "while (0)`) or the argument it is given (`DROP(view)` for `#define DROP(p) cudaFree(p)`, through any alias "
        "of the pointer). Its release counts whatever its kind (the macro may differ per build configuration).",
        "Pointers stored inside a loop whose bound is a member or a parameter (`for (i = 0; i < n_layers_; i++) "
        "slices_.push_back(p + i * size)`): the path that skips the loop is not taken to leak, unless the function "
        "itself tests the bound for zero. An early exit on zero above the loop (`if (n == 0) return false;`) is no such "
        "test: past it, the loop runs.",
        "Paths on which the allocation failed: its status (`err != cudaSuccess`, also where `err` holds whichever of "
        "two allocators ran, `err = pooled ? pool_malloc(&p, n) : cudaMalloc(&p, n)`; `CUDA_CHECK(...)` returning; a "
        "predicate named for the outcome such as `CUDA_FAILED(...)` or `SUCCEEDED(hr)`; a check that did not pass, "
        "`!check_cuda(err, \"what\")`; in "
        "Python also the status enum's number, `assert status.value == 0`, `if err > 0: raise`) or a null test of the "
        "pointer says "
        "nothing was allocated.",
        "Members allocated in a constructor and freed in the destructor.",
        "Allocation and free in every iteration of a loop; frees in both branches of an `if`; frees under the same "
        "test that guarded the allocation (an `if` or a `switch` case on a value not changed in between: a path "
        "takes the same branch or case at both tests). A `switch`'s `default` (or its absence) that no value of its "
        "subject reaches: a local given only literals or constants the cases name (`int format = 0;` then "
        "`format = 1;` under a test).",
        "Leaving `main` (the process ends), calls that never return (`exit`, `abort`), and a throw (C++) or raise "
        "(Python) that nothing catches on its way out of `main`: out of a function that `main` (or a script's "
        "`__main__` block) calls, directly or through others, outside any `try`, in a file no other file calls into; "
        "what `main` itself acquires "
        "outside any loop, or in its loop over the command line (a loop whose condition reads `argc`), which it holds "
        "at most once per option until the process ends. Likewise the failure exits of a "
        "function that runs once per process and releases the memory, or hands it to an owner, on its normal path (a sample's `runTest()` that "
        "returns early when its check fails, after which `main` ends): a `static` function, or a free function of the "
        "file that defines `main`, called from one place, outside any loop, in `main` or in another such function. "
        "Memory such a function never releases is reported, unless its call is the last statement of `main` (only "
        "a `return` after it, or the last statement of a script's `__main__` block): what it acquires outside any "
        "loop is held until the end of the process, which comes then, as when `main` is left, whatever else it "
        "cleans up; in a loop, only where it releases nothing at all. In a test or benchmark program (by its path, "
        "or a file named for a test: `test.cpp`, `test_gemm.cu`, `gemm_test.cc`), what such a function forgets "
        "outside its loops on every path is not reported either: the program exits when its checks are done (a "
        "sample's is: users copy it into services). Any leak of a function called from a loop, "
        "from two places, or used as a pointer (a thread's entry, a callback) is reported.",
        "A path through code that did not parse (a tree-sitter `ERROR` node between the allocation and the exit): "
        "`--verbose` says which, the summary line and `--statistics` count the files. A statement macro written "
        "without its `;` (`EXPECT_OK(status)` alone on its line) is given one before parsing, so it does not "
        "break the function that uses it.",
    )
    bad = """\
cudaError_t run_layer(const float* input, float* output, size_t n, cudaStream_t stream) {
  float* workspace = nullptr;
  cudaError_t err = cudaMalloc(&workspace, n * sizeof(float));
  if (err != cudaSuccess) return err;
  err = launch_layer(input, workspace, output, n, stream);
  if (err != cudaSuccess) return err;  // workspace leaks here
  cudaFree(workspace);
  return cudaSuccess;
}
"""
    good = """\
cudaError_t run_layer(const float* input, float* output, size_t n, cudaStream_t stream) {
  float* workspace = nullptr;
  cudaError_t err = cudaMalloc(&workspace, n * sizeof(float));
  if (err != cudaSuccess) return err;
  err = launch_layer(input, workspace, output, n, stream);
  cudaFree(workspace);
  return err;
}
"""
    benchmark = (
        "Free device memory (`cudaMemGetInfo`) before and after N calls of the bad and the good variant on a CUDA "
        "machine, and LeakSanitizer on the host-side analogue of the same control flow."
    )
    tags = ("correctness", "memory", "cuda")
    precision = "high"
