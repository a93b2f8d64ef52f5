// Row-wise log-softmax, for decoding (the loss fuses its own softmax: see cross_entropy.h).
//   x [N, V], y [N, V]
#pragma once

#include <cmath>
#include <cstdint>

#include <Eigen/Dense>

#include "core/backend_checks.h"

namespace trepro::reference {

// log sum_v exp(x_v) = m + log sum_v exp(x_v - m), m = max_v x_v, of a non-empty row: every
// exponent is <= 0, so logits of 1e4 do not overflow. Computed in the row's scalar type.
template <class Row> typename Row::Scalar log_sum_exp(const Row& x) {
  const typename Row::Scalar m = x.maxCoeff();
  return m + std::log((x.array() - m).exp().sum());
}

// y_nv = x_nv - log sum_u exp(x_nu)
template <class T> void log_softmax_forward(const Tensor& x, Tensor& y) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto [rows, vocab] = checks::log_softmax_forward_dims(dtype_of<T>(), Device::cpu, x, y);
  const Eigen::Map<const Matrix> in(x.data<T>(), rows, vocab);
  Eigen::Map<Matrix> out(y.data<T>(), rows, vocab);
  for (std::int64_t n = 0; n < rows; ++n) out.row(n) = in.row(n).array() - log_sum_exp(in.row(n));
}

}  // namespace trepro::reference
