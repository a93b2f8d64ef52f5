// concat_time of the optimized CPU backend: out [B, Ta + Tb, d] = a then b along time, one
// contiguous copy per batch row and input (core/backend.h).
#include <cstring>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"

namespace trepro::cpu {

void CpuBackend::concat_time(const Tensor& a, const Tensor& b, Tensor& out) {
  const checks::ConcatTimeDims dims = checks::concat_time_dims(DType::f32, Device::cpu, a, b, out);
  const std::int64_t batch = dims.batch, ta = dims.ta, tb = dims.tb, d = dims.d;
  context_.pool.parallel_for(0, batch, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      float* to = out.data<float>() + i * (ta + tb) * d;
      std::memcpy(to, a.data<float>() + i * ta * d, static_cast<std::size_t>(ta * d) * sizeof(float));
      std::memcpy(to + ta * d, b.data<float>() + i * tb * d, static_cast<std::size_t>(tb * d) * sizeof(float));
    }
  });
}

}  // namespace trepro::cpu
