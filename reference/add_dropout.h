// Residual connections with dropout; residual, x, out, sum, y, dy, dresidual, dx all [N, d]:
//   add_dropout_forward:       out = residual + dropout(x)                          (Pre-LN)
//     (its backward is dresidual = dout, dx = dropout_backward(dout): no op of its own)
//   add_dropout_norm_forward:  sum = residual + dropout(x),  y = norm(sum)          (Post-LN)
//                              with mean, rstd as norm_forward
//   add_dropout_norm_backward: dsum = norm_backward(dy)  (dgamma, dbeta accumulated)
//                              dresidual = dsum,  dx = dropout_backward(dsum)
// The maths is dropout.h, elementwise.h and norm.h composed; every argument is checked up front
// (core/backend_checks.h), under this op's name, before anything is written.
#pragma once

#include "core/backend_checks.h"
#include "reference/dropout.h"
#include "reference/elementwise.h"
#include "reference/norm.h"

namespace trepro::reference {

template <class T>
void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) {
  checks::add_dropout_forward_dims(dtype_of<T>(), Device::cpu, residual, x, dropout, out);
  dropout_mask_scale<T>(x, dropout, out);
  add_inplace<T>(out, residual);
}

template <class T>
void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                              const DropoutSpec& dropout, const Tensor& gamma, const Tensor* beta, double eps,
                              Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd) {
  checks::add_dropout_norm_forward_dims(dtype_of<T>(), Device::cpu, kind, residual, x, dropout, gamma, beta, eps, sum,
                                        y, mean, rstd);
  dropout_mask_scale<T>(x, dropout, sum);
  add_inplace<T>(sum, residual);
  norm_forward<T>(kind, sum, gamma, beta, eps, y, mean, rstd);
}

template <class T>
void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                               const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                               Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  checks::add_dropout_norm_backward_dims(dtype_of<T>(), Device::cpu, kind, sum, gamma, mean, rstd, dropout, dy,
                                         dresidual, dx, dgamma, dbeta);
  norm_backward<T>(kind, sum, gamma, mean, rstd, dy, dresidual, dgamma, dbeta);
  dropout_mask_scale<T>(dresidual, dropout, dx);
}

}  // namespace trepro::reference
