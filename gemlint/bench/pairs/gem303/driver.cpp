// Scores REQUESTS requests of N features.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "score.h"

int main(int argc, char **argv)
{
    std::size_t requests = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100;
    std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
    std::vector<float> features(n, 1.0f);
    double sum = 0.0;
    for (std::size_t r = 0; r < requests; r++)
        sum += score(features.data(), n);
    std::printf("requests=%zu\nchecksum=%d\n", requests, static_cast<int>(sum));
    return 0;
}
