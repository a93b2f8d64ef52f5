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
  constexpr const char* op = "swiglu_forward";
  checks::expect_rank(op, "gate", gate, 2);
  checks::expect(op, "gate", gate, gate.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "up", up, gate.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "y", y, gate.shape(), dtype_of<T>(), Device::cpu);
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
  constexpr const char* op = "swiglu_backward";
  checks::expect_rank(op, "gate", gate, 2);
  checks::expect(op, "gate", gate, gate.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "up", up, gate.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "dy", dy, gate.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "dgate", dgate, gate.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "dup", dup, gate.shape(), dtype_of<T>(), Device::cpu);
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
