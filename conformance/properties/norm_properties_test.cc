// Normalization forgets scale (and, for LayerNorm, shift): for a > 0,
//   LayerNorm(a x + b; eps a^2) = LayerNorm(x; eps)      RMSNorm(a x; eps a^2) = RMSNorm(x; eps)
// exactly, since a rescales the variance (or mean square) by a^2 and eps with it.
//
// Floating point: a x + b is rounded to the backend's dtype (~u |a x + b|), and the row mean is
// off by ~u |mean|; relative to the row's spread a std(x) that is ~u (1 + |b| / a) / std(x).
// Rows are drawn with std(x) >= kMinNormSpread = 0.3 and |b| <= a, so both stay a few u,
// within Check::invariant at length d (the sums over the row) for d >= 4.
#include <cmath>

#include "conformance/properties/property_support.h"
#include "conformance/support/backend_fixture.h"

namespace trepro::testing {
namespace {

constexpr double kEps = 1e-5;

class NormPropertyTest : public BackendTest {
 protected:
  Tensor normalized(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    Backend& b = backend();
    const std::int64_t rows = x.dim(0);
    Tensor y = b.empty(x.shape(), b.dtype()), mean = b.empty({rows}, b.dtype()),
           rstd = b.empty({rows}, b.dtype());
    b.norm_forward(kind, x, gamma, kind == NormKind::layer ? &beta : nullptr, eps, y, mean, rstd);
    return y;
  }

  void check_invariance(NormKind kind) {
    Backend& b = backend();
    check_property(200, [&] {
      const auto rows = *rc::gen::inRange<std::int64_t>(1, 5);
      const auto d = *rc::gen::inRange<std::int64_t>(4, 65);
      const std::uint32_t seed = *rc::gen::arbitrary<std::uint32_t>();
      const Tensor x = random_tensor(b, {rows, d}, seed);
      const Tensor host = b.download(x);
      RC_PRE(rows_well_spread(host, kind));
      // a log-uniform in [1/8, 8]; b in [-a, a] for LayerNorm, 0 for RMSNorm.
      const double a = std::exp2(static_cast<double>(*rc::gen::inRange(-12, 13)) / 4.0);
      const double shift =
          kind == NormKind::layer ? a * static_cast<double>(*rc::gen::inRange(-100, 101)) / 100.0 : 0.0;
      Tensor mapped = Tensor::empty(host.shape(), DType::f64);
      for (std::int64_t i = 0; i < host.numel(); ++i) mapped.set(i, a * host.at(i) + shift);
      const Tensor gamma = random_tensor(b, {d}, seed + 1, 0.5, 1.5);
      const Tensor beta = random_tensor(b, {d}, seed + 2);
      const Tensor expected = normalized(kind, x, gamma, beta, kEps);
      const Tensor actual = normalized(kind, b.upload(mapped), gamma, beta, kEps * a * a);
      rc_require(all_close("y", b, actual, b, expected, tolerance(Check::invariant, b.dtype(), d)));
    });
  }
};

TEST_P(NormPropertyTest, LayerNormIsInvariantToPositiveAffineMaps) { check_invariance(NormKind::layer); }

TEST_P(NormPropertyTest, RmsNormIsInvariantToPositiveScaling) { check_invariance(NormKind::rms); }

TR_INSTANTIATE_FOR_ALL_BACKENDS(NormPropertyTest);

}  // namespace
}  // namespace trepro::testing
