// Residual connections with dropout; residual, x, out, sum, y, dy, dresidual, dx all [N, d]:
//   add_dropout_forward:       out = residual + dropout(x)                          (Pre-LN)
//     (its backward is dresidual = dout, dx = dropout_backward(dout): no op of its own)
//   add_dropout_norm_forward:  sum = residual + dropout(x),  y = norm(sum)          (Post-LN)
//                              with mean, rstd as norm_forward
//   add_dropout_norm_backward: dsum = norm_backward(dy)  (dgamma, dbeta accumulated)
//                              dresidual = dsum,  dx = dropout_backward(dsum)
// The maths is dropout.h, elementwise.h and norm.h composed; what this file adds is checking
// every argument up front, under this op's name, before anything is written.
#pragma once

#include "core/backend_checks.h"
#include "reference/dropout.h"
#include "reference/elementwise.h"
#include "reference/norm.h"

namespace trepro::reference {

template <class T>
void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) {
  constexpr const char* op = "add_dropout_forward";
  checks::expect_rank(op, "residual", residual, 2);
  checks::expect(op, "residual", residual, residual.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "x", x, residual.shape(), dtype_of<T>(), Device::cpu);
  dropout_mask_scale<T>(op, "x", x, dropout, "out", out);
  add_inplace<T>(out, residual);
}

template <class T>
void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                              const DropoutSpec& dropout, const Tensor& gamma, const Tensor* beta, double eps,
                              Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd) {
  constexpr const char* op = "add_dropout_norm_forward";
  checks::expect_rank(op, "residual", residual, 2);
  checks::expect(op, "residual", residual, residual.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "x", x, residual.shape(), dtype_of<T>(), Device::cpu);
  checks::expect(op, "sum", sum, residual.shape(), dtype_of<T>(), Device::cpu);
  check_dropout(op, dropout);
  check_norm_forward<T>(op, kind, "sum", sum, gamma, beta, eps, y, mean, rstd);
  dropout_mask_scale<T>(op, "x", x, dropout, "sum", sum);
  add_inplace<T>(sum, residual);
  norm_forward<T>(kind, sum, gamma, beta, eps, y, mean, rstd);
}

template <class T>
void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                               const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                               Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  constexpr const char* op = "add_dropout_norm_backward";
  check_dropout(op, dropout);
  check_norm_backward<T>(op, kind, "sum", sum, gamma, mean, rstd, dy, "dresidual", dresidual, dgamma, dbeta);
  checks::expect(op, "dx", dx, sum.shape(), dtype_of<T>(), Device::cpu);
  norm_backward<T>(kind, sum, gamma, mean, rstd, dy, dresidual, dgamma, dbeta);
  dropout_mask_scale<T>(op, "dresidual", dresidual, dropout, "dx", dx);
}

}  // namespace trepro::reference
