// The residual ops of the optimized CPU backend (core/backend.h), fused:
//   add_dropout_forward:       out = residual + dropout(x), one pass (dropout.cc's chunks)
//   add_dropout_norm_forward:  per row, sum = residual + dropout(x) then its norm while the row
//                              is in L1 (one read of each input, one write of each output)
//   add_dropout_norm_backward: per row, dsum = norm_backward(dy) then dx = dropout(dsum); the
//                              parameter gradients in a column pass (norm_parallel.h)
// The dropout element index is the flat index n * d + i, as the reference's.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"
#include "optimized/cpu/dropout_chunks.h"
#include "optimized/cpu/norm_parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/add_dropout.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/dropout-inl.h"
#include "optimized/cpu/dropout_mask-inl.h"
#include "optimized/cpu/norm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// Rows [r0, r1): sum = residual + dropout(x), y = norm(sum).
void add_dropout_norm_forward_rows(const ResidualRows& p, std::size_t r0, std::size_t r1, const float* residual,
                                   const float* x, float* sum, float* y, float* mean, float* rstd, float* factor) {
  const std::size_t d = p.d;
  if (!p.dropout.active()) std::fill(factor, factor + d, 1.0f);
  for (std::size_t r = r0; r < r1; ++r) {
    if (p.dropout.active()) dropout_factors(p.dropout, r * d, d, factor);
    dropout_apply(x + r * d, factor, residual + r * d, sum + r * d, d);
    norm_row_forward(p.kind, sum + r * d, d, p.gamma, p.beta, p.eps, y + r * d, mean[r], rstd[r]);
  }
}

// Rows [r0, r1): dresidual = norm_backward(dy), dx = dropout(dresidual).
void add_dropout_norm_backward_rows(const ResidualRows& p, std::size_t r0, std::size_t r1, const float* sum,
                                    const float* mean, const float* rstd, const float* dy, float* dresidual, float* dx,
                                    float* factor) {
  const std::size_t d = p.d;
  if (!p.dropout.active()) std::fill(factor, factor + d, 1.0f);
  for (std::size_t r = r0; r < r1; ++r) {
    norm_row_backward(p.kind, sum + r * d, d, p.gamma, mean[r], rstd[r], dy + r * d, dresidual + r * d);
    if (p.dropout.active()) dropout_factors(p.dropout, r * d, d, factor);
    dropout_apply(dresidual + r * d, factor, nullptr, dx + r * d, d);
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(add_dropout_norm_forward_rows);
HWY_EXPORT(add_dropout_norm_backward_rows);

void CpuBackend::add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) {
  checks::add_dropout_forward_dims(DType::f32, Device::cpu, residual, x, dropout, out);
  dropout_chunks(context_, dropout, x.data<float>(), residual.data<float>(), out.data<float>(), x.numel());
}

void CpuBackend::add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                                          const DropoutSpec& dropout, const Tensor& gamma, const Tensor* beta,
                                          double eps, Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd) {
  const checks::NormDims dims = checks::add_dropout_norm_forward_dims(DType::f32, Device::cpu, kind, residual, x,
                                                                      dropout, gamma, beta, eps, sum, y, mean, rstd);
  const std::int64_t n = dims.n, d = dims.d;
  const ResidualRows rows{kind, static_cast<std::size_t>(d), gamma.data<float>(),
                          beta != nullptr ? beta->data<float>() : nullptr, static_cast<float>(eps), dropout};
  const auto kernel = for_target(HWY_DISPATCH_TABLE(add_dropout_norm_forward_rows), context_.target);
  const int tasks = static_cast<int>(
      std::min<std::int64_t>(context_.pool.threads(), (n + norm_row_grain(d) - 1) / norm_row_grain(d)));
  context_.pool.run(tasks, [&](int task) {
    const std::int64_t lo = n * task / tasks, hi = n * (task + 1) / tasks;
    kernel(rows, static_cast<std::size_t>(lo), static_cast<std::size_t>(hi), residual.data<float>(), x.data<float>(),
           sum.data<float>(), y.data<float>(), mean.data<float>(), rstd.data<float>(),
           context_.workspace.floats(task, Slot::op_scratch2, static_cast<std::size_t>(d)));
  });
}

void CpuBackend::add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                           const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                                           Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  const checks::NormDims dims = checks::add_dropout_norm_backward_dims(DType::f32, Device::cpu, kind, sum, gamma, mean,
                                                                       rstd, dropout, dy, dresidual, dx, dgamma, dbeta);
  const std::int64_t n = dims.n, d = dims.d;
  // Parameter gradients first: dresidual may alias dy.
  norm_parameter_gradients_parallel(context_, sum.data<float>(), dy.data<float>(), mean.data<float>(),
                                    rstd.data<float>(), n, d, dgamma.data<float>(),
                                    dbeta != nullptr ? dbeta->data<float>() : nullptr);
  const ResidualRows rows{kind, static_cast<std::size_t>(d), gamma.data<float>(), nullptr, 0.0f, dropout};
  const auto kernel = for_target(HWY_DISPATCH_TABLE(add_dropout_norm_backward_rows), context_.target);
  const int tasks = static_cast<int>(
      std::min<std::int64_t>(context_.pool.threads(), (n + norm_row_grain(d) - 1) / norm_row_grain(d)));
  context_.pool.run(tasks, [&](int task) {
    const std::int64_t lo = n * task / tasks, hi = n * (task + 1) / tasks;
    kernel(rows, static_cast<std::size_t>(lo), static_cast<std::size_t>(hi), sum.data<float>(), mean.data<float>(),
           rstd.data<float>(), dy.data<float>(), dresidual.data<float>(), dx.data<float>(),
           context_.workspace.floats(task, Slot::op_scratch2, static_cast<std::size_t>(d)));
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
