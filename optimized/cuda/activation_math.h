// Per-element activation arithmetic of the CUDA backend, __host__ __device__ so that the host
// tests (conformance/cuda/activation_math_test.cc) check exactly what the kernels run against
// the reference. Formulas as reference/activation.h:
//   relu(x) = max(0, x)                 relu'(x) = [x > 0]
//   gelu(x) = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2,  gelu'(x) = Phi(x) + x phi(x)
//   gelu_tanh(x) = x (1 + tanh u) / 2,  u = sqrt(2/pi) (x + 0.044715 x^3)
//   silu(g) = g s, s = sigmoid(g);  silu'(g) = s (1 + g (1 - s))      (SwiGLU)
#pragma once

#include <cmath>

#include "core/backend.h"
#include "core/host_device.h"

namespace trepro::cuda {

template <class T> TR_HOST_DEVICE T activation_value(Activation act, T x) {
  const T sqrt_2_over_pi = T(0.79788456080286535588);
  const T inv_sqrt_2 = T(0.70710678118654752440);
  switch (act) {
    case Activation::relu: return x < T(0) ? T(0) : x;  // a NaN passes through, as the reference
    case Activation::gelu: return x * std::erfc(-x * inv_sqrt_2) / T(2);
    case Activation::gelu_tanh: {
      const T u = sqrt_2_over_pi * (x + T(0.044715) * x * x * x);
      return x * (T(1) + std::tanh(u)) / T(2);
    }
    case Activation::none: break;
  }
  return x;
}

template <class T> TR_HOST_DEVICE T activation_derivative(Activation act, T x) {
  const T sqrt_2_over_pi = T(0.79788456080286535588);
  const T inv_sqrt_2 = T(0.70710678118654752440);
  const T inv_sqrt_2pi = T(0.39894228040143267794);
  switch (act) {
    case Activation::relu: return x > T(0) ? T(1) : T(0);
    case Activation::gelu: {
      const T Phi = std::erfc(-x * inv_sqrt_2) / T(2);
      const T phi = std::exp(-x * x / T(2)) * inv_sqrt_2pi;
      return Phi + x * phi;
    }
    case Activation::gelu_tanh: {
      const T t = std::tanh(sqrt_2_over_pi * (x + T(0.044715) * x * x * x));
      const T du_dx = sqrt_2_over_pi * (T(1) + T(3 * 0.044715) * x * x);
      return (T(1) + t) / T(2) + x * (T(1) - t * t) * du_dx / T(2);
    }
    case Activation::none: break;
  }
  return T(1);
}

// SwiGLU: y = silu(gate) up; dgate = dy up silu'(gate), dup = dy silu(gate).
template <class T> struct SiluValue {
  T silu, derivative;
};
template <class T> TR_HOST_DEVICE SiluValue<T> silu(T g) {
  const T s = T(1) / (T(1) + std::exp(-g));
  return {g * s, s * (T(1) + g * (T(1) - s))};
}

}  // namespace trepro::cuda
