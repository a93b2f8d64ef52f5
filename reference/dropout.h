// Inverted dropout on any shape, the element index being the flat index i:
//   forward:  y_i  = keep_i x_i  / (1 - p)
//   backward: dx_i = keep_i dy_i / (1 - p)      (the same mask, drawn again)
// keep_i = dropout_keep(key, p, i) from core/philox.h: a pure function of the key and i, so no
// mask is stored and every backend, float or double, draws the same one. 0 <= p < 1.
#pragma once

#include <cstdint>

#include "core/backend_checks.h"
#include "core/philox.h"

namespace trepro::reference {

// out_i = keep_i in_i / (1 - p): forward and backward are this one map applied to different
// tensors, which is what makes their masks agree. With p == 0 every element is kept and scaled
// by exactly 1, so "off" is the identity without a special case. The caller has checked that
// out has in's shape.
template <class T>
void dropout_mask_scale(const Tensor& in, const DropoutSpec& dropout, Tensor& out) {
  const T scale = static_cast<T>(1 / (1 - dropout.p));
  const T* a = in.data<T>();
  T* b = out.data<T>();
  for (std::int64_t i = 0; i < in.numel(); ++i) {
    b[i] = dropout_keep(dropout.key, dropout.p, static_cast<std::uint64_t>(i)) ? a[i] * scale : T(0);
  }
}

template <class T>
void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) {
  checks::dropout_dims("dropout_forward", dtype_of<T>(), Device::cpu, "x", x, dropout, "y", y);
  dropout_mask_scale<T>(x, dropout, y);
}

template <class T>
void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) {
  checks::dropout_dims("dropout_backward", dtype_of<T>(), Device::cpu, "dy", dy, dropout, "dx", dx);
  dropout_mask_scale<T>(dy, dropout, dx);
}

}  // namespace trepro::reference
