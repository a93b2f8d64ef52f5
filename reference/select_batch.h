// select_batch: out[i] = x[indices[i]] along the first dimension (beam reordering).
//   x [B, ...], indices [B'] int32 in [0, B), out [B', ...].
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  constexpr const char* op = "select_batch";
  checks::require(x.rank() >= 1, op, "x must have a batch dimension");
  checks::expect_rank(op, "indices", indices, 1);
  Shape out_shape = x.shape();
  out_shape[0] = indices.dim(0);
  checks::expect(op, "x", x, x.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "indices", indices, {indices.dim(0)}, DType::i32, Device::cpu);
  checks::expect(op, "out", out, out_shape, dtype_of<T>(), Device::cpu);
  const std::int64_t row = x.dim(0) == 0 ? 0 : x.numel() / x.dim(0);
  for (std::int64_t i = 0; i < indices.dim(0); ++i) {
    const std::int32_t src = indices.data<std::int32_t>()[i];
    if (src < 0 || src >= x.dim(0)) {
      throw std::out_of_range(std::string(op) + ": indices[" + std::to_string(i) + "] = " + std::to_string(src) +
                              " is outside [0, " + std::to_string(x.dim(0)) + ")");
    }
    const T* from = x.data<T>() + src * row;
    std::copy(from, from + row, out.data<T>() + i * row);
  }
}

}  // namespace trepro::reference
