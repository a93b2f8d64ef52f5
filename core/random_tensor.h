// Random inputs for tests, benchmarks and the kernel-accuracy tool: the same values for every
// backend, since each element is a pure function of (seed, element) (core/philox.h).
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace trepro {

// Uniform in [lo, hi), drawn in double on the host and uploaded to the backend (so rounded to
// its dtype). The Philox site is one no model site uses: these values are never a dropout mask.
Tensor random_tensor(Backend& backend, const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0);

}  // namespace trepro
