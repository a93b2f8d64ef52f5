// Helpers shared by the conformance tests: random inputs, comparisons with the worst element
// reported, and a finite-difference gradient check.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "conformance/support/tolerances.h"
#include "core/backend.h"
#include "core/random_tensor.h"

namespace trepro::testing {

// Uniform in [lo, hi) from `seed`, the same values for every backend; shared with the benchmarks
// and the kernel-accuracy tool, so it lives in core.
using trepro::random_tensor;
// Integer ids uniform in [0, upper), int32 on the backend's device.
Tensor random_ids(Backend& backend, const Shape& shape, std::uint64_t seed, std::int64_t upper);
// Host int32 tensor from values, uploaded to the backend.
Tensor int_tensor(Backend& backend, const Shape& shape, const std::vector<double>& values);

// sum_i a[i] * b[i] in double; the tensors may live on any device.
double dot(Backend& backend, const Tensor& a, const Tensor& b);

// Elementwise |actual - expected| <= atol + rtol |expected|; on failure the message names
// `what`, the worst element's index and both values. Tensors may have different float dtypes
// and live on different backends' devices.
::testing::AssertionResult all_close(const std::string& what, Backend& actual_backend, const Tensor& actual,
                                     Backend& expected_backend, const Tensor& expected, Tolerance tol);

// Norm-wise: ||actual - expected||_2 <= bound ||expected||_2, for results whose elements are too
// noisy to compare one by one (bf16 gradients); on failure the message names `what` and both
// norms. An expected tensor of norm 0 must be matched exactly.
::testing::AssertionResult norm_close(const std::string& what, Backend& actual_backend, const Tensor& actual,
                                      Backend& expected_backend, const Tensor& expected, double bound);

// Finite-difference check of d loss / d input on a float64 backend. `loss` recomputes the
// forward from the current contents of `input` (which it must read) and returns a scalar.
// Checks every element when input has at most `max_elements`, otherwise an evenly spaced
// subset of that many. `input` is restored afterwards.
::testing::AssertionResult check_gradient(const std::string& what, Backend& backend, Tensor& input,
                                          const Tensor& analytic, const std::function<double()>& loss,
                                          std::int64_t max_elements = 48);

}  // namespace trepro::testing
