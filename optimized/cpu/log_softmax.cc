// log_softmax of the optimized CPU backend (core/backend.h): y = x - lse per row, rows split
// over the pool, lse from softmax-inl.h.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/log_softmax.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

void log_softmax_rows(const float* x, float* y, std::size_t rows, std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r) {
    const auto lse = hn::Set(FloatTag(), row_log_sum_exp(x + r * n, n).lse);
    map_vectors<1, 1>(n, {x + r * n}, {y + r * n}, [&](const FloatVec* v, FloatVec* out) { out[0] = hn::Sub(v[0], lse); });
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(log_softmax_rows);

void CpuBackend::log_softmax_forward(const Tensor& x, Tensor& y) {
  const checks::LogSoftmaxDims dims = checks::log_softmax_forward_dims(DType::f32, Device::cpu, x, y);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const auto kernel = for_target(HWY_DISPATCH_TABLE(log_softmax_rows), context_.target);
  context_.pool.parallel_for(0, rows, std::max<std::int64_t>(1, 16384 / vocab), [&](std::int64_t lo, std::int64_t hi) {
    kernel(x.data<float>() + lo * vocab, y.data<float>() + lo * vocab, static_cast<std::size_t>(hi - lo),
           static_cast<std::size_t>(vocab));
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
