#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

// The Transformer paper's settings (Vaswani et al. 2017, section 5.3).
constexpr double kBeta1 = 0.9, kBeta2 = 0.98, kEps = 1e-9;
const Shape kShapes[] = {{1}, {3, 17}, {64, 64}};

class AdamTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }

  // One parameter's tensors: value, gradient and the two moments.
  struct State {
    Tensor param, grad, m, v;
  };
  State state(const Shape& shape, std::uint64_t seed) {
    Backend& b = backend();
    return {random_tensor(b, shape, seed), random_tensor(b, shape, seed + 1),
            random_tensor(b, shape, seed + 2, -0.1, 0.1), random_tensor(b, shape, seed + 3, 0.0, 0.01)};
  }
};

TEST_P(AdamTest, MatchesReference) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    for (std::int64_t step : {1, 2, 1000}) {
      SCOPED_TRACE(shape_string(shape) + " step " + std::to_string(step));
      State s = state(shape, 1);
      State ref{on_reference(s.param), on_reference(s.grad), on_reference(s.m), on_reference(s.v)};
      b.adam_update(s.param, s.grad, s.m, s.v, 1e-3, kBeta1, kBeta2, kEps, step);
      reference().adam_update(ref.param, ref.grad, ref.m, ref.v, 1e-3, kBeta1, kBeta2, kEps, step);
      const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype());
      EXPECT_TRUE(all_close("param", b, s.param, reference(), ref.param, tol));
      EXPECT_TRUE(all_close("m", b, s.m, reference(), ref.m, tol));
      EXPECT_TRUE(all_close("v", b, s.v, reference(), ref.v, tol));
    }
  }
}

TEST_P(AdamTest, FirstStepMovesEachParameterByLrTimesTheSignOfItsGradient) {
  // From m = v = 0 the bias-corrected moments are exactly g and g^2, so the step is
  // lr g / (|g| + eps): lr sign(g), shortened by eps / |g|, which the small gradients make visible.
  Backend& b = backend();
  const double lr = 0.01, eps = 1e-4;
  Tensor param = b.upload(Tensor::from_values({4}, DType::f64, {0.5, -0.25, 1.0, 0.0}));
  Tensor grad = b.upload(Tensor::from_values({4}, DType::f64, {0.3, -2.0, 1e-4, -1e-3}));
  Tensor m = b.zeros({4}, b.dtype()), v = b.zeros({4}, b.dtype());
  Tensor p0 = b.download(param), g = b.download(grad);  // the values as the backend holds them
  b.adam_update(param, grad, m, v, lr, kBeta1, kBeta2, eps, 1);
  Tensor expected = Tensor::empty({4}, DType::f64), expected_m = Tensor::empty({4}, DType::f64);
  Tensor expected_v = Tensor::empty({4}, DType::f64);
  for (std::int64_t i = 0; i < 4; ++i) {
    expected.set(i, p0.at(i) - lr * g.at(i) / (std::abs(g.at(i)) + eps));
    expected_m.set(i, (1 - kBeta1) * g.at(i));
    expected_v.set(i, (1 - kBeta2) * g.at(i) * g.at(i));
  }
  const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype());
  EXPECT_TRUE(all_close("param", b, param, reference(), reference().upload(expected), tol));
  EXPECT_TRUE(all_close("m", b, m, reference(), reference().upload(expected_m), tol));
  EXPECT_TRUE(all_close("v", b, v, reference(), reference().upload(expected_v), tol));
}

TEST_P(AdamTest, AConstantGradientMovesEveryStepByTheSameAmount) {
  // With g constant, m_t = (1 - b1^t) g and v_t = (1 - b2^t) g^2: bias correction makes every
  // step lr g / (|g| + eps), so t steps move the parameter t times that.
  Backend& b = backend();
  const double lr = 1e-3;
  const int steps = 10;
  State s = state({3, 17}, 10);
  b.fill(s.m, 0.0);
  b.fill(s.v, 0.0);
  Tensor p0 = b.download(s.param), g = b.download(s.grad);
  for (int t = 1; t <= steps; ++t) b.adam_update(s.param, s.grad, s.m, s.v, lr, kBeta1, kBeta2, kEps, t);
  Tensor expected = Tensor::empty(p0.shape(), DType::f64);
  for (std::int64_t i = 0; i < p0.numel(); ++i) {
    expected.set(i, p0.at(i) - steps * lr * g.at(i) / (std::abs(g.at(i)) + kEps));
  }
  EXPECT_TRUE(all_close("param", b, s.param, reference(), reference().upload(expected),
                        tolerance(Check::op_vs_reference, b.dtype(), steps)));
}

TEST_P(AdamTest, RejectsStepZero) {
  Backend& b = backend();
  State s = state({2, 3}, 1);
  try {
    b.adam_update(s.param, s.grad, s.m, s.v, 1e-3, kBeta1, kBeta2, kEps, 0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("adam_update: step must be >= 1"));
  }
}

TEST_P(AdamTest, RejectsAMomentOfAnotherShape) {
  Backend& b = backend();
  State s = state({2, 3}, 1);
  Tensor m = b.zeros({3, 2}, b.dtype());
  try {
    b.adam_update(s.param, s.grad, m, s.v, 1e-3, kBeta1, kBeta2, kEps, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("adam_update: m has shape [3, 2], expected [2, 3]"));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(AdamTest);

}  // namespace
}  // namespace trepro::testing
