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
  constexpr const char* op = "log_softmax_forward";
  checks::expect_rank(op, "x", x, 2);
  const std::int64_t rows = x.dim(0), vocab = x.dim(1);
  checks::require(vocab > 0, op, "x has no classes");
  checks::expect(op, "x", x, {rows, vocab}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "y", y, {rows, vocab}, dtype_of<T>(), Device::cpu);
  const Eigen::Map<const Matrix> in(x.data<T>(), rows, vocab);
  Eigen::Map<Matrix> out(y.data<T>(), rows, vocab);
  for (std::int64_t n = 0; n < rows; ++n) out.row(n) = in.row(n).array() - log_sum_exp(in.row(n));
}

}  // namespace trepro::reference
