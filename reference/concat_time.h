// concat_time: out [B, Ta + Tb, d] = a [B, Ta, d] then b [B, Tb, d] along time, per batch row.
#pragma once

#include <algorithm>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void concat_time(const Tensor& a, const Tensor& b, Tensor& out) {
  const auto [batch, ta, tb, d] = checks::concat_time_dims(dtype_of<T>(), Device::cpu, a, b, out);
  for (std::int64_t i = 0; i < batch; ++i) {
    const T* a_row = a.data<T>() + i * ta * d;
    const T* b_row = b.data<T>() + i * tb * d;
    T* out_row = out.data<T>() + i * (ta + tb) * d;
    std::copy(a_row, a_row + ta * d, out_row);
    std::copy(b_row, b_row + tb * d, out_row + ta * d);
  }
}

}  // namespace trepro::reference
