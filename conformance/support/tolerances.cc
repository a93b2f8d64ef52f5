#include "conformance/support/tolerances.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trepro::testing {

double unit_roundoff(DType dtype) {
  if (dtype == DType::f32) return 0x1p-24;
  if (dtype == DType::f64) return 0x1p-53;
  throw std::invalid_argument("unit_roundoff: not a floating dtype");
}

namespace {

// The probabilistic bounds' lambda: a bound exceeded with probability below 2 exp(-lambda^2 / 2)
// = 3e-8 per element.
constexpr double kLambda = 6.0;

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
    case Check::op_vs_reference: {
      // Inputs are O(1) and each output is a sum of K products, sum |a_i b_i| <= K for |a_i|,
      // |b_i| <= 1. Higham's worst case, gamma_K sum |a_i b_i| ~ K^2 u, grows past the outputs
      // themselves (an attention output or a gradient averages its terms): at K 2100 it was 1.05,
      // more than one whole term, so a dropped row or an all-zero gradient passed. The
      // probabilistic bound (Higham & Mary 2019: rounding errors of varied inputs are
      // independent, zero mean) is lambda sqrt(K) u sum |a_i b_i|, exceeded with probability
      // below 2 exp(-lambda^2 / 2) = 3e-8 per element for lambda = 6; blocked, pairwise and FMA
      // sums only lower it. Four extra roundings (bias, activation, exp/log, scale) are covered
      // by the relative part, 4 gamma_K, which also bounds a sum without cancellation.
      const double k = static_cast<double>(std::max<std::int64_t>(accumulation_length, 1));
      return {kLambda * std::sqrt(k) * u * k, 4 * gamma(accumulation_length, u)};
    }
    case Check::model_vs_reference:
      // A model chains ~10 ops per layer; errors compound linearly in depth for well
      // conditioned layers (LayerNorm renormalizes). 64 gamma_K, 16 x the per-op relative bound
      // 4 gamma_K, at the model's widest sum, absolutely and relatively, covers 6+6 layers with a
      // factor ~5 of margin; the models checked are tiny (K ~ 16), so it stays near 6e-5.
      return {64 * gamma(accumulation_length, u), 64 * gamma(accumulation_length, u)};
    case Check::invariant:
      // An invariant compares two results of the same backend that are equal in exact
      // arithmetic but are computed by different summation orders: gamma_K relative.
      return {4 * gamma(accumulation_length, u), 4 * gamma(accumulation_length, u)};
  }
  throw std::invalid_argument("tolerance: unknown check");
}

Tolerance bf16_tolerance(Check check, std::int64_t accumulation_length) {
  const double k = static_cast<double>(std::max<std::int64_t>(accumulation_length, 1));
  // Rounding both operands of a product to bfloat16 (unit roundoff u_b = 2^-8) changes it by
  // the relative amount d1 + d2 + d1 d2, |d| <= u_b: at most 2 u_b + u_b^2 per term.
  const double u_b = 0x1p-8, per_term = 2 * u_b + u_b * u_b;
  // The K such errors are independent and of zero mean for round-to-nearest on varied inputs
  // (the probabilistic model of Higham & Mary 2019); by Hoeffding their sum exceeds
  // lambda sqrt(K) per_term max |a_i b_i| with probability below 2 exp(-lambda^2 / 2), 3e-8 for
  // lambda = 6, per element. The float32 accumulation adds the float32 entry's worst case,
  // gamma_K(2^-24) K, for O(1) operands.
  const double operand_rounding = kLambda * std::sqrt(k) * per_term;
  const double accumulation = gamma(accumulation_length, unit_roundoff(DType::f32)) * k;
  switch (check) {
    case Check::op_vs_reference:
      // Without cancellation (|y| ~ sum |a_i b_i|) the relative error is at most per_term plus
      // the float32 accumulation's gamma_K; the bias and activation epilogues stay float32.
      return {operand_rounding + accumulation, per_term + gamma(accumulation_length, unit_roundoff(DType::f32))};
    case Check::model_vs_reference:
      // As the float32 entry: 64 x the per-op relative bound covers the chained ops of 6+6
      // layers, with the bf16 per-op bound in place of gamma_K: 64 per_term = 0.5 relative. The
      // O(1)-scaled absolute part is the per-op one, for elements that cancel (gradients near 0).
      // Being O(1), it passes a tiny model's all-zero gradient: kBf16ModelLossRtol and
      // kBf16ModelGradientNormBound (below) are the checks that can fail.
      return {operand_rounding + accumulation, 64 * per_term};
    case Check::fd_gradient:
    case Check::invariant:
      break;
  }
  throw std::invalid_argument("bf16_tolerance: defined for op_vs_reference and model_vs_reference only");
}

// The loss is a mean over the batch's tokens of smooth functions of the logits, whose bf16
// errors are of zero mean and average out: within one product's rounding, 2 u_b, of the float64
// loss. Measured on the three layouts of bf16_precision_test.cc (bf16-emulated): 1.3e-4 to
// 4.3e-4 relative, 18x below.
const double kBf16ModelLossRtol = 0x1p-7;
// Measured on the same models: each gradient's norm-wise relative error is 0.02 to 0.125 (the
// largest, decoder layer 0's query bias, 2 layers of bf16 GEMMs deep; the key biases, zero in
// exact arithmetic, aside). 0.25 leaves a factor 2; a wrong gradient (zero, of the wrong sign,
// twice too large, another tensor's) is off by 0.5 or more.
const double kBf16ModelGradientNormBound = 0.25;

}  // namespace trepro::testing
