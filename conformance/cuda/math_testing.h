// Helpers for the host tests of the CUDA backend's per-element maths: the kernels read float32
// values, so the inputs are drawn, rounded to float once, and given to both the float function
// under test and the float64 reference, so that only the function's own rounding is measured.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/backend.h"

namespace trepro::testing {

struct HostMath {
  std::unique_ptr<Backend> reference;  // reference-f64: the ground truth
  std::unique_ptr<Backend> holder;     // reference-f32: holds the float results for all_close
  HostMath();

  // Uniform values in [lo, hi) rounded to float, as a float64 reference tensor.
  Tensor random(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
  // A float32 host tensor of `values` (a function-under-test's results).
  Tensor result(const Shape& shape, const std::vector<float>& values);
};

// The values of a host tensor, as float (exact for a tensor from HostMath::random).
std::vector<float> floats(const Tensor& host);

}  // namespace trepro::testing
