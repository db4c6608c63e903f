/* Normalises a feature vector to sum 1; an all-zero request is rejected. */
#include <stdlib.h>

#include "normalize.h"

int normalize(const float *input, float *output, size_t n)
{
    float *scratch = malloc(n * sizeof *scratch);
    if (scratch == NULL)
        return -1;
    float sum = 0.0f;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = input[i] < 0.0f ? -input[i] : input[i];
        sum += scratch[i];
    }
    if (sum == 0.0f)
        return -2; /* the rejected request returns without freeing scratch */
    for (size_t i = 0; i < n; i++)
        output[i] = scratch[i] / sum;
    free(scratch);
    return 0;
}
