#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

struct Dims {
  std::int64_t n, d;  // x [n, d]
};
const Dims kDims[] = {{1, 1}, {3, 17}, {17, 3}, {5, 64}, {64, 64}};
const NormKind kKinds[] = {NormKind::layer, NormKind::rms};
constexpr double kEps = 1e-5;

std::string describe(NormKind kind, const Dims& d) {
  return std::string(kind == NormKind::layer ? "layer" : "rms") + " n=" + std::to_string(d.n) +
         " d=" + std::to_string(d.d);
}

class NormTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }
  Tensor copy(const Tensor& t) { return backend().upload(backend().download(t)); }
  Tensor host(const Shape& shape, const std::vector<double>& values) {
    return backend().upload(Tensor::from_values(shape, DType::f64, values));
  }

  // The per-row outputs of norm_forward, allocated on a backend.
  struct Forward {
    Tensor y, mean, rstd;
  };
  Forward forward(Backend& on, NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta,
                  double eps) {
    const std::int64_t n = x.dim(0);
    Forward f{on.empty(x.shape(), on.dtype()), on.empty({n}, on.dtype()), on.empty({n}, on.dtype())};
    on.norm_forward(kind, x, gamma, beta, eps, f.y, f.mean, f.rstd);
    return f;
  }
};

class NormGradientTest : public NormTest {};

TEST_P(NormTest, ForwardMatchesReference) {
  Backend& b = backend();
  for (NormKind kind : kKinds) {
    for (const Dims& d : kDims) {
      SCOPED_TRACE(describe(kind, d));
      const bool layer = kind == NormKind::layer;
      Tensor x = random_tensor(b, {d.n, d.d}, 1), gamma = random_tensor(b, {d.d}, 2, 0.5, 1.5);
      Tensor beta = random_tensor(b, {d.d}, 3);
      Forward out = forward(b, kind, x, gamma, layer ? &beta : nullptr, kEps);
      Tensor beta_ref = on_reference(beta);
      Forward ref =
          forward(reference(), kind, on_reference(x), on_reference(gamma), layer ? &beta_ref : nullptr, kEps);
      const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), d.d);
      EXPECT_TRUE(all_close("y", b, out.y, reference(), ref.y, tol));
      EXPECT_TRUE(all_close("mean", b, out.mean, reference(), ref.mean, tol));
      EXPECT_TRUE(all_close("rstd", b, out.rstd, reference(), ref.rstd, tol));
    }
  }
}

TEST_P(NormTest, BackwardMatchesReference) {
  Backend& b = backend();
  Backend& r = reference();
  for (NormKind kind : kKinds) {
    for (const Dims& d : kDims) {
      SCOPED_TRACE(describe(kind, d));
      const bool layer = kind == NormKind::layer;
      Tensor x = random_tensor(b, {d.n, d.d}, 4), gamma = random_tensor(b, {d.d}, 5, 0.5, 1.5);
      Tensor beta = random_tensor(b, {d.d}, 6), dy = random_tensor(b, {d.n, d.d}, 7);
      // mean and rstd are inputs of backward: the reference gets the backend's.
      Forward saved = forward(b, kind, x, gamma, layer ? &beta : nullptr, kEps);
      Tensor dx = b.empty({d.n, d.d}, b.dtype()), dgamma = b.zeros({d.d}, b.dtype()),
             dbeta = b.zeros({d.d}, b.dtype());
      b.norm_backward(kind, x, gamma, saved.mean, saved.rstd, dy, dx, dgamma, layer ? &dbeta : nullptr);

      Tensor dx_ref = r.empty({d.n, d.d}, DType::f64), dgamma_ref = r.zeros({d.d}, DType::f64);
      Tensor dbeta_ref = r.zeros({d.d}, DType::f64);
      r.norm_backward(kind, on_reference(x), on_reference(gamma), on_reference(saved.mean),
                      on_reference(saved.rstd), on_reference(dy), dx_ref, dgamma_ref,
                      layer ? &dbeta_ref : nullptr);
      EXPECT_TRUE(all_close("dx", b, dx, r, dx_ref, tolerance(Check::op_vs_reference, b.dtype(), d.d)));
      EXPECT_TRUE(
          all_close("dgamma", b, dgamma, r, dgamma_ref, tolerance(Check::op_vs_reference, b.dtype(), d.n)));
      if (layer) {
        EXPECT_TRUE(
            all_close("dbeta", b, dbeta, r, dbeta_ref, tolerance(Check::op_vs_reference, b.dtype(), d.n)));
      }
    }
  }
}

TEST_P(NormTest, LayerNormOfOneTwoThreeFour) {
  // mean 2.5, biased variance 1.25: y = (x - 2.5) / sqrt(1.25) with gamma 1, beta 0, eps 0.
  Backend& b = backend();
  Tensor x = host({1, 4}, {1, 2, 3, 4}), gamma = host({4}, {1, 1, 1, 1}), beta = host({4}, {0, 0, 0, 0});
  Forward out = forward(b, NormKind::layer, x, gamma, &beta, 0.0);
  const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), 4);
  const double s = std::sqrt(1.25);
  EXPECT_TRUE(all_close("y", b, out.y, b, host({1, 4}, {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}), tol));
  EXPECT_TRUE(all_close("mean", b, out.mean, b, host({1}, {2.5}), tol));
  EXPECT_TRUE(all_close("rstd", b, out.rstd, b, host({1}, {1 / s}), tol));
}

TEST_P(NormTest, RmsNormOfOneTwoThreeFourWritesAZeroMean) {
  // mean square (1 + 4 + 9 + 16) / 4 = 7.5: y = x / sqrt(7.5); mean is written as 0.
  Backend& b = backend();
  Tensor x = host({1, 4}, {1, 2, 3, 4}), gamma = host({4}, {1, 1, 1, 1});
  Forward out{b.empty({1, 4}, b.dtype()), b.empty({1}, b.dtype()), b.empty({1}, b.dtype())};
  b.fill(out.mean, std::numeric_limits<double>::quiet_NaN());
  b.norm_forward(NormKind::rms, x, gamma, nullptr, 0.0, out.y, out.mean, out.rstd);
  const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), 4);
  const double s = std::sqrt(7.5);
  EXPECT_TRUE(all_close("y", b, out.y, b, host({1, 4}, {1 / s, 2 / s, 3 / s, 4 / s}), tol));
  EXPECT_TRUE(all_close("mean", b, out.mean, b, host({1}, {0}), {0.0, 0.0}));
  EXPECT_TRUE(all_close("rstd", b, out.rstd, b, host({1}, {1 / s}), tol));
}

TEST_P(NormTest, LayerNormIsInvariantToAffineMapsOfItsInput) {
  // norm(a x + b) = norm(x) for a > 0 when eps = 0 (eps is not scaled with the input). The inputs
  // are multiples of 1/64 so that 3 x + 0.5 is exact in float too: only the op's rounding differs.
  Backend& b = backend();
  const Dims d{5, 17};
  Tensor host_x = b.download(random_tensor(b, {d.n, d.d}, 8));
  Tensor host_moved = host_x.clone();
  for (std::int64_t i = 0; i < host_x.numel(); ++i) {
    host_x.set(i, std::round(host_x.at(i) * 64) / 64);
    host_moved.set(i, 3 * host_x.at(i) + 0.5);
  }
  Tensor gamma = random_tensor(b, {d.d}, 9, 0.5, 1.5), beta = random_tensor(b, {d.d}, 10);
  Forward plain = forward(b, NormKind::layer, b.upload(host_x), gamma, &beta, 0.0);
  Forward moved = forward(b, NormKind::layer, b.upload(host_moved), gamma, &beta, 0.0);
  EXPECT_TRUE(all_close("y", b, moved.y, b, plain.y, tolerance(Check::invariant, b.dtype(), d.d)));
}

TEST_P(NormTest, RmsNormIsInvariantToScalingItsInput) {
  Backend& b = backend();
  const Dims d{5, 17};
  Tensor x = random_tensor(b, {d.n, d.d}, 11), gamma = random_tensor(b, {d.d}, 12, 0.5, 1.5);
  Tensor scaled = copy(x);
  b.scale_inplace(scaled, 3.0);  // exact up to one rounding per element, well inside gamma_d
  Forward plain = forward(b, NormKind::rms, x, gamma, nullptr, 0.0);
  Forward moved = forward(b, NormKind::rms, scaled, gamma, nullptr, 0.0);
  EXPECT_TRUE(all_close("y", b, moved.y, b, plain.y, tolerance(Check::invariant, b.dtype(), d.d)));
}

TEST_P(NormTest, BackwardAccumulatesParameterGradientsAndOverwritesDx) {
  Backend& b = backend();
  const Dims d{17, 3};
  Tensor x = random_tensor(b, {d.n, d.d}, 13), gamma = random_tensor(b, {d.d}, 14, 0.5, 1.5);
  Tensor beta = random_tensor(b, {d.d}, 15), dy = random_tensor(b, {d.n, d.d}, 16);
  Forward saved = forward(b, NormKind::layer, x, gamma, &beta, kEps);
  Tensor dx = b.empty({d.n, d.d}, b.dtype()), dgamma = b.zeros({d.d}, b.dtype()),
         dbeta = b.zeros({d.d}, b.dtype());
  b.fill(dx, std::numeric_limits<double>::quiet_NaN());
  b.norm_backward(NormKind::layer, x, gamma, saved.mean, saved.rstd, dy, dx, dgamma, &dbeta);
  Tensor dx_once = copy(dx), dgamma_twice = copy(dgamma), dbeta_twice = copy(dbeta);
  b.scale_inplace(dgamma_twice, 2.0);
  b.scale_inplace(dbeta_twice, 2.0);

  b.norm_backward(NormKind::layer, x, gamma, saved.mean, saved.rstd, dy, dx, dgamma, &dbeta);
  EXPECT_TRUE(all_close("dx", b, dx, b, dx_once, tolerance(Check::invariant, b.dtype(), d.d)));
  EXPECT_TRUE(all_close("dgamma", b, dgamma, b, dgamma_twice, tolerance(Check::invariant, b.dtype(), d.n)));
  EXPECT_TRUE(all_close("dbeta", b, dbeta, b, dbeta_twice, tolerance(Check::invariant, b.dtype(), d.n)));
}

TEST_P(NormTest, RejectsABetaForRmsNorm) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {2, 4}, 1), gamma = random_tensor(b, {4}, 2), beta = random_tensor(b, {4}, 3);
  Forward out{b.empty({2, 4}, b.dtype()), b.empty({2}, b.dtype()), b.empty({2}, b.dtype())};
  try {
    b.norm_forward(NormKind::rms, x, gamma, &beta, kEps, out.y, out.mean, out.rstd);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("norm_forward: beta must be null for rms norm"));
  }
}

TEST_P(NormTest, RejectsAGammaOfTheWrongWidth) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {2, 4}, 1), gamma = random_tensor(b, {5}, 2), beta = random_tensor(b, {4}, 3);
  Forward out{b.empty({2, 4}, b.dtype()), b.empty({2}, b.dtype()), b.empty({2}, b.dtype())};
  try {
    b.norm_forward(NormKind::layer, x, gamma, &beta, kEps, out.y, out.mean, out.rstd);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("norm_forward: gamma has shape [5], expected [4]"));
  }
}

TEST_P(NormTest, BackwardRejectsADxOfTheWrongShape) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {2, 4}, 1), gamma = random_tensor(b, {4}, 2), dy = random_tensor(b, {2, 4}, 3);
  Forward saved = forward(b, NormKind::rms, x, gamma, nullptr, kEps);
  Tensor dx = b.empty({4, 2}, b.dtype()), dgamma = b.zeros({4}, b.dtype());
  try {
    b.norm_backward(NormKind::rms, x, gamma, saved.mean, saved.rstd, dy, dx, dgamma, nullptr);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("norm_backward: dx has shape [4, 2], expected [2, 4]"));
  }
}

// L = <r, norm(x)>, differentiated with respect to x, gamma and (layer) beta.
TEST_P(NormGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  const Dims d{3, 7};
  for (NormKind kind : kKinds) {
    SCOPED_TRACE(describe(kind, d));
    const bool layer = kind == NormKind::layer;
    Tensor x = random_tensor(b, {d.n, d.d}, 17), gamma = random_tensor(b, {d.d}, 18, 0.5, 1.5);
    Tensor beta = random_tensor(b, {d.d}, 19), r = random_tensor(b, {d.n, d.d}, 20);
    const Tensor* beta_or_null = layer ? &beta : nullptr;
    auto loss = [&] { return dot(b, r, forward(b, kind, x, gamma, beta_or_null, kEps).y); };
    Forward saved = forward(b, kind, x, gamma, beta_or_null, kEps);
    Tensor dx = b.empty({d.n, d.d}, b.dtype()), dgamma = b.zeros({d.d}, b.dtype()),
           dbeta = b.zeros({d.d}, b.dtype());
    b.norm_backward(kind, x, gamma, saved.mean, saved.rstd, r, dx, dgamma, layer ? &dbeta : nullptr);
    EXPECT_TRUE(check_gradient("dx", b, x, dx, loss, x.numel()));
    EXPECT_TRUE(check_gradient("dgamma", b, gamma, dgamma, loss, gamma.numel()));
    if (layer) {
      EXPECT_TRUE(check_gradient("dbeta", b, beta, dbeta, loss, beta.numel()));
    }
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(NormTest);
TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(NormGradientTest);

}  // namespace
}  // namespace trepro::testing
