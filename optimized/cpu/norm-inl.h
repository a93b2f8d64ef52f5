// Row kernels of layer norm and RMS norm (core/backend.h has the maths), once per Highway
// target; used by norm.cc and by the fused residual ops of add_dropout.cc.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_NORM_INL_H_
#undef TREPRO_NORM_INL_H_
#else
#define TREPRO_NORM_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include <hwy/highway.h>

#include "core/backend.h"
#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// One row of d features: mean (0 for rms), rstd = 1 / sqrt(avg (x - mean)^2 + eps), and
// y = (x - mean) rstd gamma (+ beta). The variance is the two-pass one (no cancellation).
HWY_INLINE void norm_row_forward(NormKind kind, const float* x, std::size_t d, const float* gamma, const float* beta,
                                 float eps, float* y, float& mean, float& rstd) {
  const FloatTag t;
  const float inv_d = 1.0f / static_cast<float>(d);
  mean = kind == NormKind::layer ? sum_vectors<1>(d, {x}, [](const FloatVec* v) { return v[0]; }) * inv_d : 0.0f;
  const auto vmean = hn::Set(t, mean);
  const float var = sum_vectors<1>(d, {x}, [&](const FloatVec* v) {
                      const auto c = hn::Sub(v[0], vmean);
                      return hn::Mul(c, c);
                    }) * inv_d;
  rstd = 1.0f / std::sqrt(var + eps);
  const auto vrstd = hn::Set(t, rstd);
  if (beta != nullptr) {
    map_vectors<3, 1>(d, {x, gamma, beta}, {y}, [&](const FloatVec* v, FloatVec* out) {
      out[0] = hn::MulAdd(hn::Mul(hn::Sub(v[0], vmean), vrstd), v[1], v[2]);
    });
  } else {
    map_vectors<2, 1>(d, {x, gamma}, {y}, [&](const FloatVec* v, FloatVec* out) {
      out[0] = hn::Mul(hn::Mul(hn::Sub(v[0], vmean), vrstd), v[1]);
    });
  }
}

// dx = rstd (g - avg(g) - xhat avg(g xhat)) with g = dy gamma, xhat = (x - mean) rstd; the avg(g)
// term only for layer norm. dx may alias dy.
HWY_INLINE void norm_row_backward(NormKind kind, const float* x, std::size_t d, const float* gamma, float mean,
                                  float rstd, const float* dy, float* dx) {
  const FloatTag t;
  const float inv_d = 1.0f / static_cast<float>(d);
  const auto vmean = hn::Set(t, mean), vrstd = hn::Set(t, rstd);
  const float avg_g =
      kind == NormKind::layer ? sum_vectors<2>(d, {dy, gamma}, [](const FloatVec* v) { return hn::Mul(v[0], v[1]); }) * inv_d
                              : 0.0f;
  const float avg_gx = sum_vectors<3>(d, {dy, gamma, x}, [&](const FloatVec* v) {
                         return hn::Mul(hn::Mul(v[0], v[1]), hn::Mul(hn::Sub(v[2], vmean), vrstd));
                       }) * inv_d;
  const auto vavg_g = hn::Set(t, avg_g), vavg_gx = hn::Set(t, avg_gx);
  map_vectors<3, 1>(d, {dy, gamma, x}, {dx}, [&](const FloatVec* v, FloatVec* out) {
    const auto xhat = hn::Mul(hn::Sub(v[2], vmean), vrstd);
    const auto g = hn::Mul(v[0], v[1]);
    out[0] = hn::Mul(vrstd, hn::NegMulAdd(xhat, vavg_gx, hn::Sub(g, vavg_g)));
  });
}

// Columns [c0, c1) of the parameter gradients: dgamma += sum_n dy xhat, dbeta += sum_n dy (dbeta
// may be null), rows added one by one in order (as the reference does). Rows are the outer loop,
// so x and dy stream through memory row after row and the sums stay in dgamma and dbeta (in L1):
// going down one vector-wide column at a time read each cache line of x and dy twice, rows
// apart, and was half the reference's (Eigen's) speed. Each column still adds its rows in the
// same order, so the result is the same bit for bit.
HWY_INLINE void norm_parameter_gradients(const float* x, const float* dy, const float* mean, const float* rstd,
                                         std::size_t rows, std::size_t d, std::size_t c0, std::size_t c1,
                                         float* dgamma, float* dbeta) {
  const FloatTag t;
  const std::size_t lanes = hn::Lanes(t);
  for (std::size_t r = 0; r < rows; ++r) {
    const auto vmean = hn::Set(t, mean[r]), vrstd = hn::Set(t, rstd[r]);
    const float* x_row = x + r * d;
    const float* dy_row = dy + r * d;
    std::size_t c = c0;
    for (; c + lanes <= c1; c += lanes) {
      const auto dyv = hn::LoadU(t, dy_row + c);
      const auto xhat = hn::Mul(hn::Sub(hn::LoadU(t, x_row + c), vmean), vrstd);
      hn::StoreU(hn::MulAdd(dyv, xhat, hn::LoadU(t, dgamma + c)), t, dgamma + c);
      if (dbeta != nullptr) hn::StoreU(hn::Add(hn::LoadU(t, dbeta + c), dyv), t, dbeta + c);
    }
    for (; c < c1; ++c) {
      dgamma[c] += dy_row[c] * ((x_row[c] - mean[r]) * rstd[r]);
      if (dbeta != nullptr) dbeta[c] += dy_row[c];
    }
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_NORM_INL_H_
