// Layer norm and RMS norm of the optimized CPU backend (core/backend.h): rows split over the
// pool with the row kernels of norm-inl.h; the parameter gradients in a second pass split by
// columns, each column adding its rows in order, so no result depends on the thread count.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"
#include "optimized/cpu/norm_parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/norm.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/norm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

void norm_forward_rows(NormKind kind, const float* x, std::size_t rows, std::size_t d, const float* gamma,
                       const float* beta, float eps, float* y, float* mean, float* rstd) {
  for (std::size_t r = 0; r < rows; ++r) norm_row_forward(kind, x + r * d, d, gamma, beta, eps, y + r * d, mean[r], rstd[r]);
}

void norm_backward_rows(NormKind kind, const float* x, std::size_t rows, std::size_t d, const float* gamma,
                        const float* mean, const float* rstd, const float* dy, float* dx) {
  for (std::size_t r = 0; r < rows; ++r) norm_row_backward(kind, x + r * d, d, gamma, mean[r], rstd[r], dy + r * d, dx + r * d);
}

void norm_parameter_gradients_columns(const float* x, const float* dy, const float* mean, const float* rstd,
                                      std::size_t rows, std::size_t d, std::size_t c0, std::size_t c1, float* dgamma,
                                      float* dbeta) {
  norm_parameter_gradients(x, dy, mean, rstd, rows, d, c0, c1, dgamma, dbeta);
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(norm_forward_rows);
HWY_EXPORT(norm_backward_rows);
HWY_EXPORT(norm_parameter_gradients_columns);

// Rows per task: about 16 K floats, so small inputs stay on one thread.
std::int64_t norm_row_grain(std::int64_t d) { return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(d, 1)); }

void norm_parameter_gradients_parallel(const CpuContext& ctx, const float* x, const float* dy, const float* mean,
                                       const float* rstd, std::int64_t rows, std::int64_t d, float* dgamma,
                                       float* dbeta) {
  const auto kernel = for_target(HWY_DISPATCH_TABLE(norm_parameter_gradients_columns), ctx.target);
  // Blocks of 64 columns: the split never cuts a vector, so every column gets the same code. One
  // task per thread, each streaming its columns of every row.
  const std::int64_t blocks = (d + 63) / 64;
  const std::int64_t threads = std::max(1, ctx.pool.threads());
  ctx.pool.parallel_for(0, blocks, std::max<std::int64_t>(1, (blocks + threads - 1) / threads),
                        [&](std::int64_t lo, std::int64_t hi) {
                          kernel(x, dy, mean, rstd, static_cast<std::size_t>(rows), static_cast<std::size_t>(d),
                                 static_cast<std::size_t>(lo * 64), static_cast<std::size_t>(std::min(d, hi * 64)),
                                 dgamma, dbeta);
                        });
}

void CpuBackend::norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps,
                              Tensor& y, Tensor& mean, Tensor& rstd) {
  const checks::NormDims dims =
      checks::norm_forward_dims("norm_forward", DType::f32, Device::cpu, kind, "x", x, gamma, beta, eps, y, mean, rstd);
  const std::int64_t n = dims.n, d = dims.d;
  const auto kernel = for_target(HWY_DISPATCH_TABLE(norm_forward_rows), context_.target);
  context_.pool.parallel_for(0, n, norm_row_grain(d), [&](std::int64_t lo, std::int64_t hi) {
    kernel(kind, x.data<float>() + lo * d, static_cast<std::size_t>(hi - lo), static_cast<std::size_t>(d),
           gamma.data<float>(), beta != nullptr ? beta->data<float>() : nullptr, static_cast<float>(eps),
           y.data<float>() + lo * d, mean.data<float>() + lo, rstd.data<float>() + lo);
  });
}

void CpuBackend::norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                               const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  const checks::NormDims dims = checks::norm_backward_dims("norm_backward", DType::f32, Device::cpu, kind, "x", x,
                                                           gamma, mean, rstd, dy, "dx", dx, dgamma, dbeta);
  const std::int64_t n = dims.n, d = dims.d;
  // Parameter gradients first: dx may alias dy.
  norm_parameter_gradients_parallel(context_, x.data<float>(), dy.data<float>(), mean.data<float>(), rstd.data<float>(),
                                    n, d, dgamma.data<float>(), dbeta != nullptr ? dbeta->data<float>() : nullptr);
  const auto kernel = for_target(HWY_DISPATCH_TABLE(norm_backward_rows), context_.target);
  context_.pool.parallel_for(0, n, norm_row_grain(d), [&](std::int64_t lo, std::int64_t hi) {
    kernel(kind, x.data<float>() + lo * d, static_cast<std::size_t>(hi - lo), static_cast<std::size_t>(d),
           gamma.data<float>(), mean.data<float>() + lo, rstd.data<float>() + lo, dy.data<float>() + lo * d,
           dx.data<float>() + lo * d);
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
