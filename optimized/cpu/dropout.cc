// Dropout of the optimized CPU backend (core/backend.h): the reference's mask (dropout_mask-inl.h,
// element index = flat index), drawn per chunk of elements into a per-worker buffer and applied
// with vectors; forward and backward are the same map, so their masks agree.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"
#include "optimized/cpu/dropout_chunks.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/dropout.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/dropout-inl.h"
#include "optimized/cpu/dropout_mask-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// Elements [first, first + n): factor gets their dropout factors (1 when dropout is off), then
// out = x factor (+ residual).
void dropout_chunk_kernel(const DropoutSpec& dropout, std::uint64_t first, const float* x, const float* residual,
                          float* out, std::size_t n, float* factor) {
  if (dropout.active()) {
    dropout_factors(dropout, first, n, factor);
  } else {
    std::fill(factor, factor + n, 1.0f);
  }
  dropout_apply(x, factor, residual, out, n);
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(dropout_chunk_kernel);

void dropout_chunks(const CpuContext& ctx, const DropoutSpec& dropout, const float* x, const float* residual,
                    float* out, std::int64_t n) {
  const auto kernel = for_target(HWY_DISPATCH_TABLE(dropout_chunk_kernel), ctx.target);
  const std::int64_t chunks = (n + kDropoutChunk - 1) / kDropoutChunk;
  ctx.pool.run(static_cast<int>(std::min<std::int64_t>(chunks, ctx.pool.threads())), [&](int task) {
    float* factor = ctx.workspace.floats(task, Slot::op_scratch2, kDropoutChunk);
    const int tasks = static_cast<int>(std::min<std::int64_t>(chunks, ctx.pool.threads()));
    for (std::int64_t c = task; c < chunks; c += tasks) {
      const std::int64_t begin = c * kDropoutChunk, count = std::min(kDropoutChunk, n - begin);
      kernel(dropout, static_cast<std::uint64_t>(begin), x + begin, residual != nullptr ? residual + begin : nullptr,
             out + begin, static_cast<std::size_t>(count), factor);
    }
  });
}

namespace {

void dropout_map(const CpuContext& ctx, const char* op, const char* in_name, const Tensor& in,
                 const DropoutSpec& dropout, const char* out_name, Tensor& out) {
  checks::dropout_dims(op, DType::f32, Device::cpu, in_name, in, dropout, out_name, out);
  if (!dropout.active()) {
    // p = 0 keeps every element with factor exactly 1: a copy.
    if (out.data<float>() != in.data<float>()) {
      std::memcpy(out.data<float>(), in.data<float>(), static_cast<std::size_t>(in.numel()) * sizeof(float));
    }
    return;
  }
  dropout_chunks(ctx, dropout, in.data<float>(), nullptr, out.data<float>(), in.numel());
}

}  // namespace

void CpuBackend::dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) {
  dropout_map(context_, "dropout_forward", "x", x, dropout, "y", y);
}

void CpuBackend::dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) {
  dropout_map(context_, "dropout_backward", "dy", dy, dropout, "dx", dx);
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
