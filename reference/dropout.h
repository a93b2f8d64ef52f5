// Inverted dropout on any shape, the element index being the flat index i:
//   forward:  y_i  = keep_i x_i  / (1 - p)
//   backward: dx_i = keep_i dy_i / (1 - p)      (the same mask, drawn again)
// keep_i = dropout_keep(key, p, i) from core/philox.h: a pure function of the key and i, so no
// mask is stored and every backend, float or double, draws the same one. 0 <= p < 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/backend_checks.h"
#include "core/philox.h"

namespace trepro::reference {

inline void check_dropout(std::string_view op, const DropoutSpec& dropout) {
  checks::require(dropout.p >= 0 && dropout.p < 1, op,
                  "p must be in [0, 1), got " + std::to_string(dropout.p));
}

// out_i = keep_i in_i / (1 - p): forward and backward are this one map applied to different
// tensors, which is what makes their masks agree. With p == 0 every element is kept and scaled
// by exactly 1, so "off" is the identity without a special case.
template <class T>
void dropout_mask_scale(std::string_view op, std::string_view in_name, const Tensor& in,
                        const DropoutSpec& dropout, std::string_view out_name, Tensor& out) {
  check_dropout(op, dropout);
  checks::expect(op, in_name, in, in.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, out_name, out, in.shape(), dtype_of<T>(), Device::cpu);
  const T scale = static_cast<T>(1 / (1 - dropout.p));
  const T* a = in.data<T>();
  T* b = out.data<T>();
  for (std::int64_t i = 0; i < in.numel(); ++i) {
    b[i] = dropout_keep(dropout.key, dropout.p, static_cast<std::uint64_t>(i)) ? a[i] * scale : T(0);
  }
}

template <class T>
void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) {
  dropout_mask_scale<T>("dropout_forward", "x", x, dropout, "y", y);
}

template <class T>
void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) {
  dropout_mask_scale<T>("dropout_backward", "dy", dy, dropout, "dx", dx);
}

}  // namespace trepro::reference
