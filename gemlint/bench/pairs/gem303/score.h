#ifndef SCORE_H
#define SCORE_H
#include <cstddef>
float score(const float *features, std::size_t n);
#endif
