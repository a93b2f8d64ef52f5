// Rotary positions of the optimized CPU backend (core/backend.h), rotate-half layout. Time steps
// are split over the pool; each computes its cos/sin once (in double, rounded once, the
// reference's values) and rotates every batch row and head with vectors. Pairs are read before
// they are written, so y may be x.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/rope.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// (y1, y2) = (c x1 - s x2, s x1 + c x2) over `half` pairs.
void rotate_pairs(const float* x1, const float* x2, const float* c, const float* s, float* y1, float* y2,
                  std::size_t half) {
  map_vectors<4, 2>(half, {x1, x2, c, s}, {y1, y2}, [](const FloatVec* v, FloatVec* y) {
    y[0] = hn::Sub(hn::Mul(v[2], v[0]), hn::Mul(v[3], v[1]));
    y[1] = hn::Add(hn::Mul(v[3], v[0]), hn::Mul(v[2], v[1]));
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(rotate_pairs);

namespace {

// The checks (core/backend_checks.h), then the rotation by sign * theta.
void rotate(const CpuContext& ctx, const char* op, const char* x_name, const Tensor& x, int heads,
            std::int64_t offset, double sign, const char* y_name, Tensor& y) {
  const checks::RopeDims dims = checks::rope_dims(op, DType::f32, Device::cpu, x_name, x, heads, offset, y_name, y);
  const std::int64_t batch = dims.batch, time = dims.time, width = dims.width, d = dims.head_width, half = d / 2;
  const auto kernel = for_target(HWY_DISPATCH_TABLE(rotate_pairs), ctx.target);
  const int tasks = static_cast<int>(std::clamp<std::int64_t>(batch * time * width / 16384, 1, ctx.pool.threads()));
  ctx.pool.run(tasks, [&](int task) {
    float* cs = ctx.workspace.floats(task, Slot::op_scratch2, static_cast<std::size_t>(2 * half));
    const std::int64_t t0 = time * task / tasks, t1 = time * (task + 1) / tasks;
    for (std::int64_t t = t0; t < t1; ++t) {
      const auto position = static_cast<double>(offset + t);
      for (std::int64_t i = 0; i < half; ++i) {
        const double theta = sign * position / std::pow(10000.0, static_cast<double>(2 * i) / d);
        cs[i] = static_cast<float>(std::cos(theta));
        cs[half + i] = static_cast<float>(std::sin(theta));
      }
      for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::int64_t first = (b * time + t) * width + h * d;
          kernel(x.data<float>() + first, x.data<float>() + first + half, cs, cs + half, y.data<float>() + first,
                 y.data<float>() + first + half, static_cast<std::size_t>(half));
        }
      }
    }
  });
}

}  // namespace

void CpuBackend::rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) {
  rotate(context_, "rope_forward", "x", x, heads, offset, 1.0, "y", y);
}

// R is orthogonal: dx = R(-theta) dy.
void CpuBackend::rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) {
  rotate(context_, "rope_backward", "dy", dy, heads, offset, -1.0, "dx", dx);
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
