// The one tolerance table of the suite. Every comparison in conformance/ takes its tolerance
// from here, and every entry says why its value is principled. A comparison passes when
//   |actual - expected| <= atol + rtol * |expected|      (elementwise)
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace trepro::testing {

enum class Check {
  // Analytic backward vs central finite differences of the float64 forward.
  fd_gradient,
  // One op of a backend vs the float64 reference on the same inputs (inputs O(1)).
  op_vs_reference,
  // A whole model's logits, loss or gradients vs the float64 reference.
  model_vs_reference,
  // An exact mathematical invariant (softmax rows sum to 1, causality, ...) on one backend.
  invariant,
};

struct Tolerance {
  double atol;
  double rtol;
};

// Unit roundoff u of the dtype: 2^-24 for float32, 2^-53 for float64.
double unit_roundoff(DType dtype);

// `accumulation_length` is the longest sum the checked value depends on (the K of a GEMM, the
// row length of a softmax or norm); it scales the float tolerances as gamma_K = K u / (1 - K u),
// Higham's bound for a recursive sum of K terms.
Tolerance tolerance(Check check, DType dtype, std::int64_t accumulation_length = 1);

// The cuda backend in train.precision "bf16" (core/backend.h, Precision): the linear layers'
// GEMM operands rounded to bfloat16, unit roundoff 2^-8, then float32 products and sums. Defined
// for Check::op_vs_reference (one linear op) and Check::model_vs_reference; see tolerances.cc.
Tolerance bf16_tolerance(Check check, std::int64_t accumulation_length);

// The bf16 whole-model checks that can fail where bf16_tolerance's elementwise one cannot (its
// O(1)-scaled absolute part passes an all-zero gradient of a tiny model): the loss within
// kBf16ModelLossRtol relatively, each gradient within kBf16ModelGradientNormBound norm-wise
// (norm_close in tensor_testing.h). Derived in tolerances.cc.
extern const double kBf16ModelLossRtol;
extern const double kBf16ModelGradientNormBound;

// Central differences: f'(x) ~ (f(x+h) - f(x-h)) / 2h has truncation error h^2 |f'''| / 6 and
// rounding error ~ u |f| / h; h = u^(1/3) ~ 6e-6 balances them (float64 only).
constexpr double kFiniteDifferenceStep = 6e-6;

}  // namespace trepro::testing
