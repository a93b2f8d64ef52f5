// Elementwise helpers on tensors of any shape, seen as flat arrays x[i], i < numel:
//   fill:         x[i] = value
//   add_inplace:  acc[i] += x[i]              (acc and x of the same shape)
//   scale_inplace: x[i] *= factor
//   sum_squares:  sum_i x[i]^2, accumulated in double whatever T (gradient norms for clipping)
//   all_finite:   every x[i] is neither NaN nor +-inf
#pragma once

#include <Eigen/Core>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void fill(Tensor& x, double value) {
  checks::elementwise_dims("fill", dtype_of<T>(), Device::cpu, x);
  Eigen::Map<Eigen::ArrayX<T>>(x.data<T>(), x.numel()).setConstant(static_cast<T>(value));
}

template <class T>
void add_inplace(Tensor& acc, const Tensor& x) {
  checks::add_inplace_dims(dtype_of<T>(), Device::cpu, acc, x);
  Eigen::Map<Eigen::ArrayX<T>> Acc(acc.data<T>(), acc.numel());
  Acc += Eigen::Map<const Eigen::ArrayX<T>>(x.data<T>(), x.numel());
}

template <class T>
void scale_inplace(Tensor& x, double factor) {
  checks::elementwise_dims("scale_inplace", dtype_of<T>(), Device::cpu, x);
  Eigen::Map<Eigen::ArrayX<T>>(x.data<T>(), x.numel()) *= static_cast<T>(factor);
}

template <class T>
double sum_squares(const Tensor& x) {
  checks::elementwise_dims("sum_squares", dtype_of<T>(), Device::cpu, x);
  // A float squared is exact in double, so only the sum rounds, at the double's precision: the
  // gradient norm of a float model is then as accurate as the float64 reference's.
  return Eigen::Map<const Eigen::ArrayX<T>>(x.data<T>(), x.numel()).template cast<double>().square().sum();
}

template <class T>
bool all_finite(const Tensor& x) {
  checks::elementwise_dims("all_finite", dtype_of<T>(), Device::cpu, x);
  return Eigen::Map<const Eigen::ArrayX<T>>(x.data<T>(), x.numel()).isFinite().all();
}

}  // namespace trepro::reference
