/* Host emulation of the few CUDA runtime calls the GEM3xx pairs make, for machines without a GPU.
 *
 * "Device" memory is host memory, so valgrind and LeakSanitizer see every allocation the
 * pair's code makes and never releases; cudaMemGetInfo reports a fixed total minus the
 * bytes still allocated, as the real runtime does. Compiled as C++17 (inline variables).
 * On a CUDA machine the pairs are built with nvcc against the real runtime instead.
 */
#ifndef GEMLINT_CUDA_HOST_EMULATION_H
#define GEMLINT_CUDA_HOST_EMULATION_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 } cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };

inline const std::size_t gemlint_emulated_total = std::size_t(1) << 34;
// Block sizes, keyed by the address XOR a mask: the table must not count as a reference to the
// blocks, or a leaked block would look "still reachable" to valgrind instead of "definitely lost".
inline const std::uintptr_t gemlint_key_mask = std::uintptr_t(0x5a5a5a5a5a5a5a5aULL);
inline std::unordered_map<std::uintptr_t, std::size_t> *gemlint_device_blocks = new std::unordered_map<std::uintptr_t, std::size_t>();
inline std::size_t gemlint_device_in_use = 0;

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

inline cudaError_t cudaMemcpy(void *destination, const void *source, std::size_t size, cudaMemcpyKind)
{
    std::memcpy(destination, source, size);
    return cudaSuccess;
}

inline cudaError_t cudaMemGetInfo(std::size_t *free_bytes, std::size_t *total_bytes)
{
    *free_bytes = gemlint_emulated_total - gemlint_device_in_use;
    *total_bytes = gemlint_emulated_total;
    return cudaSuccess;
}

inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

#endif
