// The activations and their derivatives on vectors (core/backend.h has the maths), compiled once
// per Highway target; used by activation.cc, the GEMM epilogue of linear.cc and linear_backward.
//
// Forms chosen for float accuracy without special cases:
//   gelu:      Phi(x) = erfc(-x / sqrt 2) / 2 with erfc from exp (Numerical Recipes' erfcc,
//              relative error < 1.2e-7), so the left tail keeps its relative accuracy.
//   gelu_tanh: (1 + tanh u) / 2 = sigmoid(2u) and 1 - tanh^2 u = 4 s (1 - s): no cancellation
//              where tanh u is near -1 (the reference's form loses the tail there).

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_ACTIVATION_INL_H_
#undef TREPRO_ACTIVATION_INL_H_
#else
#define TREPRO_ACTIVATION_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "core/backend.h"
#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// erfc(z) for z >= 0: t = 1 / (1 + z/2), erfc = t exp(-z^2 + P(t)), P the degree-9 fit.
HWY_INLINE FloatVec erfc_nonnegative(FloatTag d, FloatVec z) {
  const auto t = hn::Div(hn::Set(d, 1.0f), hn::MulAdd(hn::Set(d, 0.5f), z, hn::Set(d, 1.0f)));
  auto poly = hn::Set(d, 0.17087277f);
  constexpr float kCoefficients[] = {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                                     0.09678418f,  0.37409196f, 1.00002368f,  -1.26551223f};
  for (float c : kCoefficients) poly = hn::MulAdd(poly, t, hn::Set(d, c));
  return hn::Mul(t, hn::Exp(d, hn::Sub(poly, hn::Mul(z, z))));
}

// Phi(x) = erfc(-x / sqrt 2) / 2, through erfc(y) = 2 - erfc(-y) for negative y.
HWY_INLINE FloatVec normal_cdf(FloatTag d, FloatVec x) {
  const auto y = hn::Mul(x, hn::Set(d, -0.70710678118654752f));
  const auto tail = erfc_nonnegative(d, hn::Abs(y));
  const auto erfc = hn::IfThenElse(hn::Lt(y, hn::Zero(d)), hn::Sub(hn::Set(d, 2.0f), tail), tail);
  return hn::Mul(erfc, hn::Set(d, 0.5f));
}

// sigmoid(z) = 1 / (1 + exp(-z)) and 1 - sigmoid(z) = exp(-z) sigmoid(z) (no cancellation
// when sigmoid(z) is near 1); -z is capped at 88 so exp stays finite (sigmoid is then 6e-39).
struct Sigmoid {
  FloatVec s, one_minus_s;
};
HWY_INLINE Sigmoid sigmoid_pair(FloatTag d, FloatVec z) {
  const auto e = hn::Exp(d, hn::Min(hn::Neg(z), hn::Set(d, 88.0f)));
  const auto s = hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
  return {s, hn::Mul(e, s)};
}
HWY_INLINE FloatVec sigmoid(FloatTag d, FloatVec z) { return sigmoid_pair(d, z).s; }

// u = sqrt(2/pi) (x + 0.044715 x^3), and its derivative.
HWY_INLINE FloatVec gelu_tanh_argument(FloatTag d, FloatVec x) {
  const auto x2 = hn::Mul(x, x);
  return hn::Mul(hn::Set(d, 0.79788456080286536f), hn::Mul(x, hn::MulAdd(hn::Set(d, 0.044715f), x2, hn::Set(d, 1.0f))));
}

template <Activation kAct>
HWY_INLINE FloatVec activation_value(FloatTag d, FloatVec x) {
  if constexpr (kAct == Activation::none) return x;
  // Written so that a NaN passes through (as the reference does).
  if constexpr (kAct == Activation::relu) return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
  if constexpr (kAct == Activation::gelu) return hn::Mul(x, normal_cdf(d, x));
  if constexpr (kAct == Activation::gelu_tanh) {
    return hn::Mul(x, sigmoid(d, hn::Add(gelu_tanh_argument(d, x), gelu_tanh_argument(d, x))));
  }
}

template <Activation kAct>
HWY_INLINE FloatVec activation_derivative(FloatTag d, FloatVec x) {
  if constexpr (kAct == Activation::none) return hn::Set(d, 1.0f);
  if constexpr (kAct == Activation::relu) return hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), hn::Set(d, 1.0f));
  if constexpr (kAct == Activation::gelu) {
    // Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    const auto phi = hn::Mul(hn::Exp(d, hn::Mul(hn::Mul(x, x), hn::Set(d, -0.5f))), hn::Set(d, 0.39894228040143268f));
    return hn::MulAdd(x, phi, normal_cdf(d, x));
  }
  if constexpr (kAct == Activation::gelu_tanh) {
    // s + x 2 s (1 - s) du/dx with s = sigmoid(2u), du/dx = sqrt(2/pi) (1 + 3 0.044715 x^2)
    const auto u = gelu_tanh_argument(d, x);
    const Sigmoid sig = sigmoid_pair(d, hn::Add(u, u));
    const auto du = hn::Mul(hn::Set(d, 0.79788456080286536f), hn::MulAdd(hn::Set(d, 3 * 0.044715f), hn::Mul(x, x), hn::Set(d, 1.0f)));
    const auto two_s_one_minus_s = hn::Mul(hn::Add(sig.s, sig.s), sig.one_minus_s);
    return hn::MulAdd(hn::Mul(x, two_s_one_minus_s), du, sig.s);
  }
}

// Calls f.template operator()<kAct>() for the runtime act: the kernels are instantiated once per
// activation, so the inner loops carry no switch.
template <class F>
HWY_INLINE void with_activation(Activation act, const F& f) {
  switch (act) {
    case Activation::none: return f.template operator()<Activation::none>();
    case Activation::relu: return f.template operator()<Activation::relu>();
    case Activation::gelu: return f.template operator()<Activation::gelu>();
    case Activation::gelu_tanh: return f.template operator()<Activation::gelu_tanh>();
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_ACTIVATION_INL_H_
