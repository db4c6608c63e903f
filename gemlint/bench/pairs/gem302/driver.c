/* Serves REQUESTS requests of N features; every fourth one is all zeros and rejected. */
#include <stdio.h>
#include <stdlib.h>

#include "normalize.h"

int main(int argc, char **argv)
{
    size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
    float *input = malloc(n * sizeof *input);
    float *output = malloc(n * sizeof *output);
    size_t rejected = 0;
    for (size_t r = 0; r < requests; r++) {
        for (size_t i = 0; i < n; i++)
            input[i] = r % 4 == 0 ? 0.0f : (float)(i + r);
        rejected += normalize(input, output, n) != 0;
    }
    printf("requests=%zu\nrejected=%zu\n", requests, rejected);
    free(input);
    free(output);
    return 0;
}
