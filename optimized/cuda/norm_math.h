// Per-row and per-element arithmetic of layer and RMS norm (norm.cu, add_dropout.cu); formulas
// as reference/norm.h. A row's statistics come from two sums the kernels reduce across a warp:
//   layer: mean = sum x / d,  rstd = 1 / sqrt(sum (x - mean)^2 / d + eps)
//   rms:   mean = 0,          rstd = 1 / sqrt(sum x^2 / d + eps)
// (two passes over the row, not sum x^2 - mean^2, which cancels catastrophically).
//   forward:  y = (x - mean) rstd gamma + beta
//   backward: xhat = (x - mean) rstd, g = dy gamma,
//             dx = rstd (g - avg(g) - xhat avg(g xhat))   (avg(g) = 0 for rms)
#pragma once

#include <cmath>
#include <cstdint>

#include "core/backend.h"
#include "core/host_device.h"

namespace trepro::cuda {

template <class T> TR_HOST_DEVICE T norm_mean(NormKind kind, T row_sum, std::int64_t d) {
  return kind == NormKind::layer ? row_sum / static_cast<T>(d) : T(0);
}

// centered_square_sum = sum_i (x_i - mean)^2
template <class T> TR_HOST_DEVICE T norm_rstd(T centered_square_sum, std::int64_t d, T eps) {
  return T(1) / std::sqrt(centered_square_sum / static_cast<T>(d) + eps);
}

// beta = 0 for rms.
template <class T> TR_HOST_DEVICE T norm_output(T x, T mean, T rstd, T gamma, T beta) {
  return (x - mean) * rstd * gamma + beta;
}

// g = dy gamma, rounded on its own. Backward subtracts avg(g), a sum of these same rounded
// products; fused into that subtraction (an fma, which nvcc and GCC form by default) the product
// would keep its rounding error, and a row whose g are all equal (d = 1) would get
// dx = rstd u |g| instead of exactly 0, amplified by rstd up to eps^-1/2.
TR_HOST_DEVICE inline float norm_scaled_gradient(float dy, float gamma) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(dy, gamma);  // never contracted
#else
  const volatile float product = dy * gamma;  // a stored value cannot be fused
  return product;
#endif
}

// dx_i given g_i = norm_scaled_gradient(dy_i, gamma_i), xhat_i and the row averages avg(g), avg(g xhat).
template <class T> TR_HOST_DEVICE T norm_input_gradient(T g, T xhat, T avg_g, T avg_g_xhat, T rstd) {
  return rstd * (g - avg_g - xhat * avg_g_xhat);
}

}  // namespace trepro::cuda
