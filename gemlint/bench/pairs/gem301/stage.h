#ifndef STAGE_H
#define STAGE_H
#include <stddef.h>
int stage_request(const float *features, size_t n, float *first);
#endif
