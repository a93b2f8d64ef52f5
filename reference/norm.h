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

#include <Eigen/Core>

#include "core/backend_checks.h"

namespace trepro::reference {

template <class T>
void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps,
                  Tensor& y, Tensor& mean, Tensor& rstd) {
  const auto [n, d] = checks::norm_forward_dims("norm_forward", dtype_of<T>(), Device::cpu, kind, "x", x, gamma, beta,
                                                eps, y, mean, rstd);

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
  const auto [n, d] = checks::norm_backward_dims("norm_backward", dtype_of<T>(), Device::cpu, kind, "x", x, gamma, mean,
                                                 rstd, dy, "dx", dx, dgamma, dbeta);

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
