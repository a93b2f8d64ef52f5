// Linear layer with an activation epilogue; x [N, K], w [M, K] (torch.nn.Linear layout), b [M] or
// null, y and pre [N, M]:
//   forward:  pre = x w^T + b,  y = act(pre)
//             (pre is written when act != none, for backward; it may be null otherwise)
//   backward: dpre = act'(pre) dy   (dpre = dy when act == none)
//             dx [N, K] = dpre w            written; skipped when dx is null
//             dw [M, K] += dpre^T x         accumulated
//             db [M]    += sum_n dpre[n]    accumulated; skipped when db is null
#pragma once

#include <Eigen/Core>

#include "core/backend_checks.h"
#include "reference/activation.h"

namespace trepro::reference {

template <class T>
void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                    Tensor* pre) {
  constexpr const char* op = "linear_forward";
  checks::expect_rank(op, "x", x, 2);
  checks::expect_rank(op, "w", w, 2);
  const std::int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  checks::expect(op, "x", x, {n, k}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "w", w, {m, k}, dtype_of<T>(), Device::cpu);
  checks::expect_optional(op, "b", b, {m}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "y", y, {n, m}, dtype_of<T>(), Device::cpu);
  checks::require(act == Activation::none || pre != nullptr, op,
                  "pre is required when the activation is not none");
  checks::expect_optional(op, "pre", pre, {n, m}, dtype_of<T>(), Device::cpu);

  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> X(x.data<T>(), n, k), W(w.data<T>(), m, k);
  // Without an activation the affine part is the output itself.
  Tensor& affine = act == Activation::none ? y : *pre;
  Eigen::Map<Matrix> Pre(affine.data<T>(), n, m);
  Pre.noalias() = X * W.transpose();
  if (b) Pre.rowwise() += Eigen::Map<const Eigen::RowVectorX<T>>(b->data<T>(), m);
  if (act != Activation::none) activation_forward<T>(act, *pre, y);
}

template <class T>
void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                     Tensor* dx, Tensor& dw, Tensor* db) {
  constexpr const char* op = "linear_backward";
  checks::expect_rank(op, "x", x, 2);
  checks::expect_rank(op, "w", w, 2);
  const std::int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  checks::expect(op, "x", x, {n, k}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "w", w, {m, k}, dtype_of<T>(), Device::cpu);
  checks::require(act == Activation::none || pre != nullptr, op,
                  "pre is required when the activation is not none");
  checks::expect_optional(op, "pre", pre, {n, m}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "dy", dy, {n, m}, dtype_of<T>(), Device::cpu);
  checks::expect_optional(op, "dx", dx, {n, k}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "dw", dw, {m, k}, dtype_of<T>(), Device::cpu);
  checks::expect_optional(op, "db", db, {m}, dtype_of<T>(), Device::cpu);

  // Without an activation there is nothing to differentiate: dpre is dy itself.
  Tensor dpre = act == Activation::none ? dy : Tensor::empty({n, m}, dtype_of<T>());
  if (act != Activation::none) activation_backward<T>(act, *pre, dy, dpre);

  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> X(x.data<T>(), n, k), W(w.data<T>(), m, k), DPre(dpre.data<T>(), n, m);
  if (dx) Eigen::Map<Matrix>(dx->data<T>(), n, k).noalias() = DPre * W;
  Eigen::Map<Matrix>(dw.data<T>(), m, k).noalias() += DPre.transpose() * X;
  if (db) Eigen::Map<Eigen::RowVectorX<T>>(db->data<T>(), m) += DPre.colwise().sum();
}

}  // namespace trepro::reference
