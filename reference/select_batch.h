// select_batch: out[i] = x[indices[i]] along the first dimension (beam reordering).
//   x [B, ...], indices [B'] int32 in [0, B), out [B', ...].
#pragma once

#include <algorithm>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  checks::select_batch_dims(dtype_of<T>(), Device::cpu, x, indices, out);
  checks::select_batch_values(indices.data<std::int32_t>(), indices.dim(0), x.dim(0));
  const std::int64_t row = x.dim(0) == 0 ? 0 : x.numel() / x.dim(0);
  for (std::int64_t i = 0; i < indices.dim(0); ++i) {
    const std::int32_t src = indices.data<std::int32_t>()[i];
    const T* from = x.data<T>() + src * row;
    std::copy(from, from + row, out.data<T>() + i * row);
  }
}

}  // namespace trepro::reference
