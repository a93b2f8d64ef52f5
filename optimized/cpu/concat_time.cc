// concat_time of the optimized CPU backend: out [B, Ta + Tb, d] = a then b along time, one
// contiguous copy per batch row and input (core/backend.h).
#include <cstring>

#include "core/backend_checks.h"
#include "optimized/cpu/ops.h"

namespace trepro::cpu {

void concat_time(const CpuContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr const char* op = "concat_time";
  checks::expect_rank(op, "a", a, 3);
  checks::expect_rank(op, "b", b, 3);
  const std::int64_t batch = a.dim(0), ta = a.dim(1), tb = b.dim(1), d = a.dim(2);
  checks::expect(op, "a", a, {batch, ta, d}, DType::f32, Device::cpu);
  checks::expect(op, "b", b, {batch, tb, d}, DType::f32, Device::cpu);
  checks::expect(op, "out", out, {batch, ta + tb, d}, DType::f32, Device::cpu);
  ctx.pool.parallel_for(0, batch, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      float* to = out.data<float>() + i * (ta + tb) * d;
      std::memcpy(to, a.data<float>() + i * ta * d, static_cast<std::size_t>(ta * d) * sizeof(float));
      std::memcpy(to + ta * d, b.data<float>() + i * tb * d, static_cast<std::size_t>(tb * d) * sizeof(float));
    }
  });
}

}  // namespace trepro::cpu
