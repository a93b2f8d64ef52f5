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
  const auto [n, k, m] = checks::linear_forward_dims(dtype_of<T>(), Device::cpu, x, w, b, act, y, pre);

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
  const auto [n, k, m] = checks::linear_backward_dims(dtype_of<T>(), Device::cpu, x, w, pre, act, dy, dx, dw, db);

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
