// Layer norm (Ba et al. 2016) and RMS norm (Zhang & Sennrich 2019), per row n of x [N, d];
// gamma [d], beta [d] (layer) or null (rms), y [N, d], mean [N], rstd [N]:
//   forward, layer: mean_n = avg_i x_ni,  rstd_n = 1 / sqrt(avg_i (x_ni - mean_n)^2 + eps)
//                   y = (x - mean) rstd gamma + beta        (biased variance, as torch.nn.LayerNorm)
//            rms:   mean_n = 0,  rstd_n = 1 / sqrt(avg_i x_ni^2 + eps),  y = x rstd gamma
// So rms is layer norm with the mean pinned to 0 and no beta, and one code path serves both.
//   backward, with xhat = (x - mean) rstd and g = dy gamma:
//     dx = rstd (g - avg(g) - xhat avg(g xhat))   (layer)
//     dx = rstd (g - xhat avg(g xhat))            (rms: the mean is a constant, so no avg(g) term)
//     dgamma += sum_n dy xhat;  dbeta += sum_n dy  (layer only; accumulated)
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include <Eigen/Core>

#include "core/backend_checks.h"

namespace trepro::reference {

// beta (forward) or dbeta (backward) is required for layer norm and must be null for rms.
inline void check_norm_bias(std::string_view op, NormKind kind, std::string_view name, const Tensor* bias) {
  if (kind == NormKind::layer) {
    checks::require(bias != nullptr, op, std::string(name) + " is required for layer norm");
  } else {
    checks::require(bias == nullptr, op, std::string(name) + " must be null for rms norm");
  }
}

// The argument checks of norm_forward and norm_backward, under the caller's op and tensor names so
// that the fused residual ops (add_dropout.h) report errors as their own.
template <class T>
void check_norm_forward(std::string_view op, NormKind kind, std::string_view x_name, const Tensor& x,
                        const Tensor& gamma, const Tensor* beta, double eps, const Tensor& y,
                        const Tensor& mean, const Tensor& rstd) {
  checks::expect_rank(op, x_name, x, 2);
  const std::int64_t n = x.dim(0), d = x.dim(1);
  checks::require(d > 0, op, std::string(x_name) + " has no features: shape " + shape_string(x.shape()));
  checks::require(eps >= 0, op, "eps must be >= 0, got " + std::to_string(eps));
  check_norm_bias(op, kind, "beta", beta);
  checks::expect(op, x_name, x, {n, d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "gamma", gamma, {d}, dtype_of<T>(), Device::cpu);
  checks::expect_optional(op, "beta", beta, {d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "y", y, {n, d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "mean", mean, {n}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "rstd", rstd, {n}, dtype_of<T>(), Device::cpu);
}

template <class T>
void check_norm_backward(std::string_view op, NormKind kind, std::string_view x_name, const Tensor& x,
                         const Tensor& gamma, const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                         std::string_view dx_name, const Tensor& dx, const Tensor& dgamma,
                         const Tensor* dbeta) {
  checks::expect_rank(op, x_name, x, 2);
  const std::int64_t n = x.dim(0), d = x.dim(1);
  checks::require(d > 0, op, std::string(x_name) + " has no features: shape " + shape_string(x.shape()));
  check_norm_bias(op, kind, "dbeta", dbeta);
  checks::expect(op, x_name, x, {n, d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "gamma", gamma, {d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "mean", mean, {n}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "rstd", rstd, {n}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "dy", dy, {n, d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, dx_name, dx, {n, d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "dgamma", dgamma, {d}, dtype_of<T>(), Device::cpu);
  checks::expect_optional(op, "dbeta", dbeta, {d}, dtype_of<T>(), Device::cpu);
}

template <class T>
void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps,
                  Tensor& y, Tensor& mean, Tensor& rstd) {
  check_norm_forward<T>("norm_forward", kind, "x", x, gamma, beta, eps, y, mean, rstd);
  const std::int64_t n = x.dim(0), d = x.dim(1);

  using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Row = Eigen::Array<T, 1, Eigen::Dynamic>;
  Eigen::Map<const Rows> X(x.data<T>(), n, d);
  Eigen::Map<Rows> Y(y.data<T>(), n, d);
  Eigen::Map<const Row> Gamma(gamma.data<T>(), d);
  Eigen::Map<Eigen::ArrayX<T>> Mean(mean.data<T>(), n), Rstd(rstd.data<T>(), n);
  for (std::int64_t r = 0; r < n; ++r) {
    Mean(r) = kind == NormKind::layer ? X.row(r).mean() : T(0);
    const Row centered = X.row(r) - Mean(r);
    Rstd(r) = T(1) / std::sqrt(centered.square().mean() + static_cast<T>(eps));
    Y.row(r) = centered * Rstd(r) * Gamma;
    if (beta) Y.row(r) += Eigen::Map<const Row>(beta->data<T>(), d);
  }
}

template <class T>
void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                   const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  check_norm_backward<T>("norm_backward", kind, "x", x, gamma, mean, rstd, dy, "dx", dx, dgamma, dbeta);
  const std::int64_t n = x.dim(0), d = x.dim(1);

  using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Row = Eigen::Array<T, 1, Eigen::Dynamic>;
  Eigen::Map<const Rows> X(x.data<T>(), n, d), DY(dy.data<T>(), n, d);
  Eigen::Map<Rows> DX(dx.data<T>(), n, d);
  Eigen::Map<const Row> Gamma(gamma.data<T>(), d);
  Eigen::Map<const Eigen::ArrayX<T>> Mean(mean.data<T>(), n), Rstd(rstd.data<T>(), n);
  Eigen::Map<Row> DGamma(dgamma.data<T>(), d);
  for (std::int64_t r = 0; r < n; ++r) {
    const Row xhat = (X.row(r) - Mean(r)) * Rstd(r);
    const Row g = DY.row(r) * Gamma;
    const T avg_g = kind == NormKind::layer ? g.mean() : T(0);
    DGamma += DY.row(r) * xhat;
    if (dbeta) Eigen::Map<Row>(dbeta->data<T>(), d) += DY.row(r);
    DX.row(r) = Rstd(r) * (g - avg_g - xhat * (g * xhat).mean());
  }
}

}  // namespace trepro::reference
