// Adam (Kingma & Ba 2015) with bias correction, for one parameter; param, grad, m, v all of
// param's shape, step t >= 1 (the count of updates including this one):
//   m = b1 m + (1 - b1) g
//   v = b2 v + (1 - b2) g^2
//   param -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1,
                 double beta2, double eps, std::int64_t step) {
  checks::adam_update_dims(dtype_of<T>(), Device::cpu, param, grad, m, v, beta1, beta2, step);

  const std::int64_t n = param.numel();
  Eigen::Map<Eigen::ArrayX<T>> P(param.data<T>(), n), M(m.data<T>(), n), V(v.data<T>(), n);
  Eigen::Map<const Eigen::ArrayX<T>> G(grad.data<T>(), n);
  const double t = static_cast<double>(step);
  const T bias1 = static_cast<T>(1 - std::pow(beta1, t)), bias2 = static_cast<T>(1 - std::pow(beta2, t));
  M = static_cast<T>(beta1) * M + static_cast<T>(1 - beta1) * G;
  V = static_cast<T>(beta2) * V + static_cast<T>(1 - beta2) * G.square();
  P -= static_cast<T>(lr) * (M / bias1) / ((V / bias2).sqrt() + static_cast<T>(eps));
}

}  // namespace trepro::reference
