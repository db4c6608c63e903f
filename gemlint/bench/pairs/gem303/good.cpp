// Scores a request against position weights built per call.
#include "score.h"

float score(const float *features, std::size_t n)
{
    float *weights = new float[n];
    for (std::size_t i = 0; i < n; i++)
        weights[i] = 1.0f / (1.0f + static_cast<float>(i));
    float total = 0.0f;
    for (std::size_t i = 0; i < n; i++)
        total += weights[i] * features[i];
    delete[] weights;
    return total;
}
