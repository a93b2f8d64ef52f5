#include "conformance/support/tolerances.h"

#include <algorithm>
#include <stdexcept>

namespace trepro::testing {

double unit_roundoff(DType dtype) {
  if (dtype == DType::f32) return 0x1p-24;
  if (dtype == DType::f64) return 0x1p-53;
  throw std::invalid_argument("unit_roundoff: not a floating dtype");
}

namespace {

double gamma(std::int64_t k, double u) {
  double ku = static_cast<double>(std::max<std::int64_t>(k, 1)) * u;
  return ku / (1.0 - ku);
}

}  // namespace

Tolerance tolerance(Check check, DType dtype, std::int64_t accumulation_length) {
  const double u = unit_roundoff(dtype);
  switch (check) {
    case Check::fd_gradient:
      // With h = u^(1/3) the central difference is accurate to ~u^(2/3) = 4e-11 relative to
      // the scale of the loss (|L| <= ~100 for the test sizes) times |f'''| (<= ~10 for the
      // smooth ops here): ~4e-8 absolute at worst. 1e-6 leaves margin for ops with larger third
      // derivatives (softmax, GELU near 0) without hiding a wrong term, which is O(1).
      return {1e-6, 1e-6};
    case Check::op_vs_reference:
      // Inputs are O(1) and each output is a sum of K products; Higham: |error| <= gamma_K sum
      // |a_i b_i| <= gamma_K K for |a_i|, |b_i| <= 1, and relatively gamma_K. Four extra
      // roundings (bias, activation, exp/log, scale) are covered by the factor 4.
      return {4 * gamma(accumulation_length, u) * static_cast<double>(std::max<std::int64_t>(accumulation_length, 1)),
              4 * gamma(accumulation_length, u)};
    case Check::model_vs_reference:
      // A model chains ~10 ops per layer; errors compound linearly in depth for well
      // conditioned layers (LayerNorm renormalizes). 64 x the per-op bound at the model's widest
      // sum covers 6+6 layers with a factor ~5 of margin.
      return {64 * gamma(accumulation_length, u), 64 * gamma(accumulation_length, u)};
    case Check::invariant:
      // An invariant compares two results of the same backend that are equal in exact
      // arithmetic but are computed by different summation orders: gamma_K relative.
      return {4 * gamma(accumulation_length, u), 4 * gamma(accumulation_length, u)};
  }
  throw std::invalid_argument("tolerance: unknown check");
}

}  // namespace trepro::testing
