// Adam (Kingma & Ba 2015) with bias correction, per element (adam.cu); as reference/adam.h:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   param -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// The step-dependent corrections are computed once on the host, in double, and rounded once.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace trepro::cuda {

template <class T> struct AdamCoefficients {
  T lr, beta1, one_minus_beta1, beta2, one_minus_beta2, eps, bias1, bias2;
};

template <class T>
AdamCoefficients<T> adam_coefficients(double lr, double beta1, double beta2, double eps, std::int64_t step) {
  const double t = static_cast<double>(step);
  return {static_cast<T>(lr),        static_cast<T>(beta1), static_cast<T>(1 - beta1),
          static_cast<T>(beta2),     static_cast<T>(1 - beta2), static_cast<T>(eps),
          static_cast<T>(1 - std::pow(beta1, t)), static_cast<T>(1 - std::pow(beta2, t))};
}

template <class T> TR_HOST_DEVICE void adam_step(T& param, T grad, T& m, T& v, const AdamCoefficients<T>& c) {
  m = c.beta1 * m + c.one_minus_beta1 * grad;
  v = c.beta2 * v + c.one_minus_beta2 * grad * grad;
  param -= c.lr * (m / c.bias1) / (std::sqrt(v / c.bias2) + c.eps);
}

}  // namespace trepro::cuda
