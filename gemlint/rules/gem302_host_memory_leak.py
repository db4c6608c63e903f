from __future__ import annotations

from gemlint.diagnostics import Severity
from gemlint.languages import Language
from gemlint.rules.native_base import PairingRule


class HostMemoryLeak(PairingRule):
    code = "GEM302"
    cross_file = True  # a class's constructor, read from another file, may register the object with an owner
    name = "host-memory-leak"
    severity = Severity.WARNING
    example_language = Language.NATIVE
    summary = "Host memory from `malloc`/`calloc`/`realloc`/`strdup`, pinned memory from `cudaMallocHost`/`cudaHostAlloc`, or an object from `new`/`new[]` is not released on some path out of the function."
    rationale = (
        "A host buffer lost on an error path grows the server's resident memory with every failing request. Pinned "
        "(page-locked) memory is worse: it cannot be swapped, it is registered with the driver, and pinning too much "
        "slows the whole machine down; a leaked `cudaMallocHost` staging buffer per request exhausts it quickly. The "
        "same paths, escapes and failure tests as GEM301 apply; in Python the check covers `cudart.cudaMallocHost` "
        "/ `cudaHostAlloc` and `cupy.cuda.runtime.hostAlloc`."
    )
    not_flagged = (
        "A search for its place: a loop that hands the pointer over and leaves at once (`nodes.insert(at, node); break;`) is assumed to find one; the path on which it finds none is not taken to leak. A loop that hands it over at every match without leaving, or makes one in each iteration, is no such search.",
        "A fallback for a caller that passes no buffer: an allocation into a parameter in the branch taken when it is null (`if (out == NULL) out = malloc(n);`). Whether any caller passes null is not known here.",
        "Memory that escapes: returned, stored into a member, field, global, static or out-parameter, put into a "
        "container (as a value, or as the key of a member or global one: `cache_[p] = state`), handed to a smart pointer or another owner (`std::unique_ptr<T>(new T)`, `p.reset(q)`, "
        "`std::locale(loc, facet)`), passed to a call whose result is returned, stored or kept in a local that "
        "escapes (`return make_buffer(iface, ctx, n)`, `Matcher<T> m = MakeMatcher(p); return m;`), given to a "
        "callable object (`(*layer)(p)`) or by reference to an owner (`owner.add(*p)`), given as a callback's user "
        "data after the callback (`cudaLaunchHostFunc(stream, on_done, job)`, `pthread_create(&t, 0, run, job)`; "
        "data before a callback, `qsort(p, n, size, compare)`, is only read), or captured by a lambda. "
        "Where the receiver's code is not in the file (a constructor or a method of another object, "
        "`writer->PutRaw(p, n)`), gemlint cannot tell whether it keeps the pointer or copies what it points to, and "
        "takes it to keep it: such leaks are missed rather than guessed. A local container of raw pointers "
        "(`std::vector<Task*> tasks;`) is not an owner: it frees nothing when the function returns, so a pointer "
        "put into it leaks unless the function frees the elements or hands the container, or an element, on.",
        "A native object whose address is stored into a field of a Java object (JNI: `env->SetLongField(obj, "
        "field, (jlong)p)`, `(*env)->SetLongField(env, obj, field, (jlong)p)`, or a function of the file that does "
        "so, also through a local copy such as `jlong handle = reinterpret_cast<jlong>(p)`): the Java object owns "
        "it. A function of the file is read for what it does with its parameter and the locals copied from it, and "
        "a constructor of the file that keeps its parameter in a member initializer (`Tensor(void* p) : data(p) {}`) "
        "takes it over, so `return Tensor(p)` hands it on; of overloads, those taking as many arguments as the call "
        "gives are read.",
        "A custom smart pointer initialised by copy (`Shared<T> x = new T(...)`); `new Widget(parent)`, "
        "`new Widget(this)` or `new Widget(owner.get())` (owned by its parent, as in Qt), and, in Qt code, a Qt class "
        "built on an object the class holds (`new QTreeWidgetItem(ui->treeWidget)`, a member view); `new` of a class that "
        "deletes itself (`delete this` in its methods, or a base such as `Napi::AsyncWorker`); `new` with arguments "
        "of a class whose constructor, or a base's, hands `this` to a call (`net->addLayer(this)`, "
        "`registry.push_back(this)`), read from the file, the project headers it includes and the implementation "
        "files named as those headers (`Layer.h`, `Layer.cpp`): the object is kept by what it registered with; an object handed to "
        "its framework to be deleted when done: `p->deleteLater()`, a signal connected to `&QObject::deleteLater` "
        "(`connect(p, &T::finished, p, &QObject::deleteLater)`), `worker->Queue()` (Node-API's self-deleting "
        "worker); an object one of whose methods, called on it, gives the object itself to another object "
        "(`call->Start()` running `stream->StartCall(Tag())`, with `Tag()` returning `this`: the tag of a completion "
        "queue, whose draining loop deletes it).",
        "`new` whose result is used at once (`obj.adopt(new T)`, `return new T`), placement `new`, `new T(args)` "
        "statements whose constructor registers the object with its arguments, and `new T[n]` statements that drop "
        "the array at once (`new int[huge];`, written for the `std::bad_alloc` it raises).",
        "Objects leaked on purpose and said so to the leak checker (`__lsan_ignore_object(p)`, a macro around it, "
        "`ANNOTATE_LEAKING_OBJECT_PTR(p)`).",
        "A string kept only when it is not empty (`if (strlen(dir) > 0) settings.dir = dir;`): an empty copy is "
        "as good as none.",
        "Another allocation into the same variable in another branch of the same loop (`lora_dir = strdup(...)` "
        "for the \"lora_dir\" option, in either arm): it runs again only if the option is repeated. An allocation "
        "before the loop that a branch in it replaces is reported.",
        "Paths on which the allocation failed (`if (!p) return -1;`), and frees guarded by the test that decides "
        "whether the memory was allocated (`if (sz > sizeof(buf)) free(p);`), or under the same test or `switch` "
        "case as the allocation, on a value not changed in between; a release in a loop counting up from zero to a "
        "count the allocation's test found positive (`if (n > 0) p = new T[n];` then `for (int i = 0; i < n; ++i)`) "
        "runs, as the path enters the loop; a flag or member set to a literal before its test (`b->push = 1;` then "
        "`if (b->push) queue_push(q, b);`) takes the branch the literal says, until something changes it.",
        "Paths that need a plain `new`, `std::make_shared` or `std::make_unique` to have returned null (`s->model = "
        "new Model; if (s->model == nullptr) return NULL;`): they throw instead. `new (std::nothrow)` and a project's "
        "own factories may return null, and their tests are followed.",
        "An allocation handed on through a pointer declared into it (`Header* h = (Header*)(block + offset);` then "
        "`*out = h`): whoever holds the pointer reaches the block. The distance between two such pointers is a "
        "number, not a pointer.",
        "A local of the same name declared in a nested block (`float loss = ...;` inside a loop, after `float* loss "
        "= malloc(...)` outside it): it is another variable, neither a new value of the pointer nor its release. "
        "Declarations in the arms of one `#if`/`#ifdef` chain (`#ifdef UWP char *buf = malloc(64); #else char *buf = "
        "malloc(256); #endif`) are the same variable: one configuration compiles one of them. Above a local's "
        "declaration its name is still the member or global it shadows (`model = new Model(); auto model = view();` "
        "in a constructor stores into the member).",
        "Leaving `main` (the process ends), what `main` acquires outside any loop or in its loop over the command line, "
        "calls that never return (`exit`, `abort`), a throw or raise that nothing catches on its way out of `main`, "
        "and the failure exits of a function "
        "that runs once per process and releases the memory, or hands it to an owner, on its normal path, or whose call is the last statement "
        "of `main`, or that a test or benchmark program runs, as for GEM301.",
        "Releases through macros, stores inside loops, code that did not parse and code the build does not compile "
        "(`if (0)`, a debugging switch nothing defines), as for GEM301.",
    )
    bad = """\
int stage_batch(const float* src, float* dst, size_t n, cudaStream_t stream) {
  float* pinned = nullptr;
  if (cudaMallocHost(&pinned, n * sizeof(float)) != cudaSuccess) return -1;
  memcpy(pinned, src, n * sizeof(float));
  if (cudaMemcpyAsync(dst, pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream) != cudaSuccess) {
    return -1;  // pinned leaks here
  }
  cudaStreamSynchronize(stream);
  cudaFreeHost(pinned);
  return 0;
}
"""
    good = """\
int stage_batch(const float* src, float* dst, size_t n, cudaStream_t stream) {
  float* pinned = nullptr;
  if (cudaMallocHost(&pinned, n * sizeof(float)) != cudaSuccess) return -1;
  memcpy(pinned, src, n * sizeof(float));
  int rc = 0;
  if (cudaMemcpyAsync(dst, pinned, n * sizeof(float), cudaMemcpyHostToDevice, stream) != cudaSuccess) {
    rc = -1;
    goto done;
  }
  cudaStreamSynchronize(stream);
done:
  cudaFreeHost(pinned);
  return rc;
}
"""
    benchmark = "Leaked bytes of the compiled bad and good variants under LeakSanitizer (`-fsanitize=address`)."
    tags = ("correctness", "memory", "cuda")
    precision = "medium"
