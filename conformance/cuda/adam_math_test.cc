// adam_math.h (the fused Adam kernel's arithmetic) against the reference's adam_update, over
// several steps so that the bias corrections change.
#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/adam_math.h"

namespace trepro::testing {
namespace {

TEST(AdamMath, StepsMatchReference) {
  HostMath h;
  Backend& ref = *h.reference;
  const Shape shape{257};
  const double lr = 1e-3, beta1 = 0.9, beta2 = 0.98, eps = 1e-9;  // the paper's settings
  Tensor param = h.random(shape, 1), m = ref.zeros(shape, DType::f64), v = ref.zeros(shape, DType::f64);
  std::vector<float> p = floats(param), ms(p.size(), 0.0f), vs(p.size(), 0.0f);
  for (std::int64_t step = 1; step <= 5; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    Tensor grad = h.random(shape, 10 + static_cast<std::uint64_t>(step));
    ref.adam_update(param, grad, m, v, lr, beta1, beta2, eps, step);
    const auto c = cuda::adam_coefficients<float>(lr, beta1, beta2, eps, step);
    const std::vector<float> g = floats(grad);
    for (std::size_t i = 0; i < p.size(); ++i) cuda::adam_step(p[i], g[i], ms[i], vs[i], c);
    // Each step adds O(u) relative error to m, v and the update; over 5 steps the moments are
    // sums of 5 terms: accumulation length 5.
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, 5);
    EXPECT_TRUE(all_close("param", *h.holder, h.result(shape, p), ref, param, tol));
    EXPECT_TRUE(all_close("m", *h.holder, h.result(shape, ms), ref, m, tol));
    EXPECT_TRUE(all_close("v", *h.holder, h.result(shape, vs), ref, v, tol));
  }
}

}  // namespace
}  // namespace trepro::testing
