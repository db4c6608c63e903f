/* What the GEM3xx drivers share, built the same with nvcc (real runtime) and g++ (host stand-in). */
#ifndef GEMLINT_DRIVER_H
#define GEMLINT_DRIVER_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Starts the runtime, or prints why it cannot and exits 3: the pair is then skipped, not failed. */
static void gemlint_start_runtime(void)
{
    cudaError_t err = cudaFree(0);
    if (err != cudaSuccess) {
        printf("cuda_error=%s\n", cudaGetErrorString(err));
        exit(3);
    }
}

static size_t gemlint_device_bytes_in_use(void)
{
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return total - free_bytes;
}

static size_t gemlint_host_rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm != NULL) {
        if (fscanf(statm, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(statm);
    }
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* after - before, or 0 when it shrank (a freed cache is not a negative leak). */
static size_t gemlint_growth(size_t before, size_t after) { return after > before ? after - before : 0; }

#endif
