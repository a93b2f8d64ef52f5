// Activations, elementwise on any shape; x, y, dy and dx all have x's shape.
//   forward:  y = act(x)
//   backward: dx = act'(x) dy
// with
//   none:      act(x) = x                                   act'(x) = 1
//   relu:      act(x) = max(0, x)                           act'(x) = [x > 0]   (relu'(0) = 0, as PyTorch)
//   gelu:      act(x) = x Phi(x)                            act'(x) = Phi(x) + x phi(x)
//              Phi(x) = erfc(-x / sqrt 2) / 2,  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
//   gelu_tanh: act(x) = x (1 + tanh u) / 2,  u = sqrt(2/pi) (x + 0.044715 x^3)
//              act'(x) = (1 + tanh u) / 2 + x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2) / 2
#pragma once

#include <cmath>
#include <numbers>
#include <stdexcept>

#include <Eigen/Core>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
T activation_value(Activation act, T x) {
  constexpr T sqrt_2_over_pi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  switch (act) {
    case Activation::none: return x;
    // Written so that a NaN passes through (max(0, NaN) would hide it from all_finite).
    case Activation::relu: return x < T(0) ? T(0) : x;
    // erfc(-x / sqrt 2) rather than 1 + erf(x / sqrt 2): no cancellation for negative x.
    case Activation::gelu: return x * std::erfc(-x / std::numbers::sqrt2_v<T>) / T(2);
    case Activation::gelu_tanh: {
      const T u = sqrt_2_over_pi * (x + T(0.044715) * x * x * x);
      return x * (T(1) + std::tanh(u)) / T(2);
    }
  }
  throw std::invalid_argument("activation: unknown Activation value");
}

template <class T>
T activation_derivative(Activation act, T x) {
  constexpr T sqrt_2_over_pi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  constexpr T inv_sqrt_2pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;
  switch (act) {
    case Activation::none: return T(1);
    case Activation::relu: return x > T(0) ? T(1) : T(0);
    case Activation::gelu: {
      const T Phi = std::erfc(-x / std::numbers::sqrt2_v<T>) / T(2);
      const T phi = std::exp(-x * x / T(2)) * inv_sqrt_2pi;
      return Phi + x * phi;
    }
    case Activation::gelu_tanh: {
      const T t = std::tanh(sqrt_2_over_pi * (x + T(0.044715) * x * x * x));
      const T du_dx = sqrt_2_over_pi * (T(1) + T(3 * 0.044715) * x * x);
      return (T(1) + t) / T(2) + x * (T(1) - t * t) * du_dx / T(2);
    }
  }
  throw std::invalid_argument("activation: unknown Activation value");
}

template <class T>
void activation_forward(Activation act, const Tensor& x, Tensor& y) {
  checks::activation_forward_dims(dtype_of<T>(), Device::cpu, x, y);
  Eigen::Map<const Eigen::ArrayX<T>> X(x.data<T>(), x.numel());
  Eigen::Map<Eigen::ArrayX<T>> Y(y.data<T>(), y.numel());
  Y = X.unaryExpr([act](T xi) { return activation_value(act, xi); });
}

template <class T>
void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) {
  checks::activation_backward_dims(dtype_of<T>(), Device::cpu, x, dy, dx);
  Eigen::Map<const Eigen::ArrayX<T>> X(x.data<T>(), x.numel()), DY(dy.data<T>(), dy.numel());
  Eigen::Map<Eigen::ArrayX<T>> DX(dx.data<T>(), dx.numel());
  DX = X.binaryExpr(DY, [act](T xi, T dyi) { return activation_derivative(act, xi) * dyi; });
}

}  // namespace trepro::reference
