/* Host stand-in for the CUDA runtime calls the GEM3xx pairs make, for machines without a GPU.
 *
 * "Device" memory is host memory, so valgrind and LeakSanitizer see every allocation the
 * pair's code makes and never releases; cudaMemGetInfo reports a fixed total minus the
 * bytes still allocated, as the real runtime does.
 *
 * Streams, events, graphs and captures are host objects whose creations and destructions are
 * counted (gemlint_host_live): what a pair reports from them is a count of objects its code
 * created and never destroyed, not a measurement of a driver. Kernels run on the host, one
 * thread at a time; the build rewrites `kernel<<<grid, block, shared, stream>>>(args)` into
 * `gemlint_launch(kernel, grid, block, shared, stream)(args)`. Work issued to a stream waits in
 * that stream's queue until something synchronizes it: the latest completion CUDA's ordering
 * allows, so code that relies on an order CUDA does not guarantee reads what it has not waited
 * for. Where the runtime documents an error (a synchronization or a second capture on a stream
 * that is capturing) the stand-in returns that error.
 *
 * Compiled as C++17 (inline variables). On a CUDA machine the pairs are built with nvcc
 * against the real runtime instead.
 */
#ifndef GEMLINT_CUDA_HOST_EMULATION_H
#define GEMLINT_CUDA_HOST_EMULATION_H

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

// The runtime's own error numbers.
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
} cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1, cudaStreamCaptureStatusInvalidated = 2 };
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

#define __global__
#define __device__
#define __host__

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
struct uint3 {
    unsigned x, y, z;
};
inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

struct gemlint_graph {
    std::vector<std::function<void()>> nodes;
    bool invalidated = false;
};
struct gemlint_graph_exec {
    std::vector<std::function<void()>> nodes;
};
struct gemlint_stream {
    bool blocking = true;  // ordered with the legacy default stream (cudaStreamCreate); false: cudaStreamNonBlocking
    std::vector<std::function<void()>> pending;
    gemlint_graph *capture = nullptr;  // the graph being captured, while a capture is open
};
struct gemlint_event {
    gemlint_stream *stream = nullptr;
    bool recorded = false, complete = false;
    std::chrono::steady_clock::time_point at;
};
typedef gemlint_stream *cudaStream_t;
typedef gemlint_event *cudaEvent_t;
typedef gemlint_graph *cudaGraph_t;
typedef gemlint_graph_exec *cudaGraphExec_t;

/* What the pair's code created and has not destroyed (or, for captures, begun and not ended). */
struct gemlint_live_objects {
    long streams = 0, events = 0, graphs = 0, graph_execs = 0, open_captures = 0;
};
inline gemlint_live_objects gemlint_host_live;

inline const std::size_t gemlint_emulated_total = std::size_t(1) << 34;
// Block sizes, keyed by the address XOR a mask: the table must not count as a reference to the
// blocks, or a leaked block would look "still reachable" to valgrind instead of "definitely lost".
inline const std::uintptr_t gemlint_key_mask = std::uintptr_t(0x5a5a5a5a5a5a5a5aULL);
inline std::unordered_map<std::uintptr_t, std::size_t> *gemlint_device_blocks = new std::unordered_map<std::uintptr_t, std::size_t>();
inline std::size_t gemlint_device_in_use = 0;
inline gemlint_stream gemlint_legacy_stream;
inline std::unordered_set<gemlint_stream *> gemlint_streams;

inline gemlint_stream &gemlint_resolve(cudaStream_t stream) { return stream ? *stream : gemlint_legacy_stream; }

inline void gemlint_run(gemlint_stream &stream)
{
    while (!stream.pending.empty()) {
        std::vector<std::function<void()>> work;
        work.swap(stream.pending);
        for (auto &item : work)
            item();
    }
}

// The legacy default stream waits for the blocking streams' earlier work, and they wait for its.
inline void gemlint_order_with_legacy(gemlint_stream &stream)
{
    if (&stream == &gemlint_legacy_stream) {
        for (gemlint_stream *other : gemlint_streams)
            if (other->blocking)
                gemlint_run(*other);
    } else if (stream.blocking) {
        gemlint_run(gemlint_legacy_stream);
    }
}

inline cudaError_t gemlint_enqueue(cudaStream_t handle, std::function<void()> work)
{
    gemlint_stream &stream = gemlint_resolve(handle);
    if (stream.capture != nullptr) {  // captured into the graph instead of run
        stream.capture->nodes.push_back(std::move(work));
        return cudaSuccess;
    }
    gemlint_order_with_legacy(stream);
    stream.pending.push_back(std::move(work));
    return cudaSuccess;
}

// ---- kernels ------------------------------------------------------------------------------

template <typename... Params> struct gemlint_launcher {
    void (*kernel)(Params...);
    dim3 grid, block;
    cudaStream_t stream;

    template <typename... Args> cudaError_t operator()(Args &&...args) const
    {
        // Parameters are copied at launch, as CUDA copies a kernel's arguments.
        std::tuple<std::decay_t<Params>...> values(std::forward<Args>(args)...);
        auto kernel = this->kernel;
        dim3 grid = this->grid, block = this->block;
        return gemlint_enqueue(stream, [kernel, grid, block, values]() {
            gridDim = grid;
            blockDim = block;
            for (unsigned bz = 0; bz < grid.z; bz++)
                for (unsigned by = 0; by < grid.y; by++)
                    for (unsigned bx = 0; bx < grid.x; bx++)
                        for (unsigned tz = 0; tz < block.z; tz++)
                            for (unsigned ty = 0; ty < block.y; ty++)
                                for (unsigned tx = 0; tx < block.x; tx++) {
                                    blockIdx = {bx, by, bz};
                                    threadIdx = {tx, ty, tz};
                                    std::apply(kernel, values);
                                }
        });
    }
};

template <typename... Params>
inline gemlint_launcher<Params...> gemlint_launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t = 0, cudaStream_t stream = nullptr)
{
    return gemlint_launcher<Params...>{kernel, grid, block, stream};
}

// ---- memory -------------------------------------------------------------------------------

inline cudaError_t cudaMalloc(void **pointer, std::size_t size)
{
    *pointer = std::malloc(size);
    if (*pointer == nullptr)
        return cudaErrorMemoryAllocation;
    (*gemlint_device_blocks)[reinterpret_cast<std::uintptr_t>(*pointer) ^ gemlint_key_mask] = size;
    gemlint_device_in_use += size;
    return cudaSuccess;
}

template <typename T> inline cudaError_t cudaMalloc(T **pointer, std::size_t size)
{
    return cudaMalloc(reinterpret_cast<void **>(pointer), size);
}

inline cudaError_t cudaFree(void *pointer)
{
    if (pointer == nullptr)
        return cudaSuccess;
    auto found = gemlint_device_blocks->find(reinterpret_cast<std::uintptr_t>(pointer) ^ gemlint_key_mask);
    if (found == gemlint_device_blocks->end())
        return cudaErrorInvalidValue;
    gemlint_device_in_use -= found->second;
    gemlint_device_blocks->erase(found);
    std::free(pointer);
    return cudaSuccess;
}

inline cudaError_t cudaMallocHost(void **pointer, std::size_t size)
{
    *pointer = std::malloc(size);
    return *pointer == nullptr ? cudaErrorMemoryAllocation : cudaSuccess;
}

template <typename T> inline cudaError_t cudaMallocHost(T **pointer, std::size_t size)
{
    return cudaMallocHost(reinterpret_cast<void **>(pointer), size);
}

inline cudaError_t cudaFreeHost(void *pointer)
{
    std::free(pointer);
    return cudaSuccess;
}

// A synchronous copy runs on the legacy default stream: after the blocking streams' earlier work.
inline cudaError_t cudaMemcpy(void *destination, const void *source, std::size_t size, cudaMemcpyKind)
{
    gemlint_order_with_legacy(gemlint_legacy_stream);
    gemlint_run(gemlint_legacy_stream);
    std::memcpy(destination, source, size);
    return cudaSuccess;
}

inline cudaError_t cudaMemcpyAsync(void *destination, const void *source, std::size_t size, cudaMemcpyKind, cudaStream_t stream = nullptr)
{
    return gemlint_enqueue(stream, [=]() { std::memcpy(destination, source, size); });
}

inline cudaError_t cudaMemsetAsync(void *pointer, int value, std::size_t size, cudaStream_t stream = nullptr)
{
    return gemlint_enqueue(stream, [=]() { std::memset(pointer, value, size); });
}

inline cudaError_t cudaMemGetInfo(std::size_t *free_bytes, std::size_t *total_bytes)
{
    *free_bytes = gemlint_emulated_total - gemlint_device_in_use;
    *total_bytes = gemlint_emulated_total;
    return cudaSuccess;
}

// ---- streams ------------------------------------------------------------------------------

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    *stream = new gemlint_stream();
    (*stream)->blocking = (flags & cudaStreamNonBlocking) == 0;
    gemlint_streams.insert(*stream);
    gemlint_host_live.streams++;
    return cudaSuccess;
}

inline cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

inline cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    if (stream == nullptr || gemlint_streams.erase(stream) == 0)
        return cudaErrorInvalidResourceHandle;
    gemlint_run(*stream);  // work already issued still completes
    if (stream->capture != nullptr) {
        delete stream->capture;
        gemlint_host_live.open_captures--;
    }
    delete stream;
    gemlint_host_live.streams--;
    return cudaSuccess;
}

inline cudaError_t cudaStreamSynchronize(cudaStream_t handle)
{
    gemlint_stream &stream = gemlint_resolve(handle);
    if (stream.capture != nullptr) {  // not allowed while capturing; it invalidates the capture
        stream.capture->invalidated = true;
        return cudaErrorStreamCaptureUnsupported;
    }
    if (&stream == &gemlint_legacy_stream)
        gemlint_order_with_legacy(stream);
    gemlint_run(stream);
    return cudaSuccess;
}

inline cudaError_t cudaDeviceSynchronize()
{
    for (gemlint_stream *stream : gemlint_streams)
        if (stream->capture != nullptr)
            return cudaErrorStreamCaptureUnsupported;
    gemlint_run(gemlint_legacy_stream);
    for (gemlint_stream *stream : gemlint_streams)
        gemlint_run(*stream);
    return cudaSuccess;
}

// ---- events -------------------------------------------------------------------------------

inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned)
{
    *event = new gemlint_event();
    gemlint_host_live.events++;
    return cudaSuccess;
}

inline cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

inline cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (event == nullptr)
        return cudaErrorInvalidResourceHandle;
    delete event;
    gemlint_host_live.events--;
    return cudaSuccess;
}

inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr)
{
    event->stream = &gemlint_resolve(stream);
    event->recorded = true;
    event->complete = false;
    return gemlint_enqueue(stream, [event]() {
        event->complete = true;
        event->at = std::chrono::steady_clock::now();
    });
}

inline cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (event->recorded && !event->complete)
        gemlint_run(*event->stream);
    return cudaSuccess;
}

// Host time between the two events' completions: the stand-in has no GPU clock.
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    if (!start->complete || !stop->complete)
        return cudaErrorNotReady;
    *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
    return cudaSuccess;
}

// ---- graphs and stream capture ------------------------------------------------------------

inline cudaError_t cudaStreamBeginCapture(cudaStream_t handle, cudaStreamCaptureMode)
{
    if (handle == nullptr)
        return cudaErrorStreamCaptureUnsupported;  // the legacy default stream cannot be captured
    if (handle->capture != nullptr)
        return cudaErrorIllegalState;  // already capturing
    handle->capture = new gemlint_graph();
    gemlint_host_live.open_captures++;
    return cudaSuccess;
}

inline cudaError_t cudaStreamEndCapture(cudaStream_t handle, cudaGraph_t *graph)
{
    if (handle == nullptr || handle->capture == nullptr)
        return cudaErrorIllegalState;
    gemlint_graph *captured = handle->capture;
    handle->capture = nullptr;
    gemlint_host_live.open_captures--;
    if (captured->invalidated) {
        delete captured;
        *graph = nullptr;
        return cudaErrorStreamCaptureInvalidated;
    }
    *graph = captured;
    gemlint_host_live.graphs++;
    return cudaSuccess;
}

inline cudaError_t cudaStreamIsCapturing(cudaStream_t handle, cudaStreamCaptureStatus *status)
{
    gemlint_stream &stream = gemlint_resolve(handle);
    if (stream.capture == nullptr)
        *status = cudaStreamCaptureStatusNone;
    else
        *status = stream.capture->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

inline cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned)
{
    *graph = new gemlint_graph();
    gemlint_host_live.graphs++;
    return cudaSuccess;
}

inline cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (graph == nullptr)
        return cudaErrorInvalidValue;
    delete graph;
    gemlint_host_live.graphs--;
    return cudaSuccess;
}

inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long = 0)
{
    if (graph == nullptr)
        return cudaErrorInvalidValue;
    *exec = new gemlint_graph_exec{graph->nodes};
    gemlint_host_live.graph_execs++;
    return cudaSuccess;
}

inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    if (exec == nullptr)
        return cudaErrorInvalidValue;
    delete exec;
    gemlint_host_live.graph_execs--;
    return cudaSuccess;
}

inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    if (exec == nullptr)
        return cudaErrorInvalidValue;
    for (const auto &node : exec->nodes)
        gemlint_enqueue(stream, node);
    return cudaSuccess;
}

// ---- errors -------------------------------------------------------------------------------

inline const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalState: return "the operation is not permitted in the current state";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    }
    return "unknown error";
}

#endif
