// SwiGLU gate (Shazeer 2020); gate, up, y, dy, dgate, dup all [N, F]:
//   forward:  y = silu(gate) up,  silu(g) = g s,  s = sigmoid(g) = 1 / (1 + exp(-g))
//   backward: dgate = dy up silu'(gate),  silu'(g) = s (1 + g (1 - s))
//             dup   = dy silu(gate)
#pragma once

#include <cmath>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
  checks::swiglu_forward_dims(dtype_of<T>(), Device::cpu, gate, up, y);
  const T* g = gate.data<T>();
  const T* u = up.data<T>();
  T* out = y.data<T>();
  for (std::int64_t i = 0; i < gate.numel(); ++i) {
    const T s = T(1) / (T(1) + std::exp(-g[i]));
    out[i] = g[i] * s * u[i];
  }
}

template <class T>
void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
  checks::swiglu_backward_dims(dtype_of<T>(), Device::cpu, gate, up, dy, dgate, dup);
  const T* g = gate.data<T>();
  const T* u = up.data<T>();
  const T* d = dy.data<T>();
  T* dg = dgate.data<T>();
  T* du = dup.data<T>();
  for (std::int64_t i = 0; i < gate.numel(); ++i) {
    const T s = T(1) / (T(1) + std::exp(-g[i]));
    const T silu = g[i] * s, dsilu = s * (T(1) + g[i] * (T(1) - s));
    const T dyi = d[i], ui = u[i];  // read before writing: dgate or dup may alias an input
    dg[i] = dyi * ui * dsilu;
    du[i] = dyi * silu;
  }
}

}  // namespace trepro::reference
