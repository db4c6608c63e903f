#ifndef NORMALIZE_H
#define NORMALIZE_H
#include <stddef.h>
int normalize(const float *input, float *output, size_t n);
#endif
