// select_batch of the optimized CPU backend: out[i] = x[indices[i]] along the first dimension
// (core/backend.h), every index checked before anything is written.
#include <cstring>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"

namespace trepro::cpu {

void CpuBackend::select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  checks::select_batch_dims(DType::f32, Device::cpu, x, indices, out);
  const std::int32_t* index = indices.data<std::int32_t>();
  checks::select_batch_values(index, indices.dim(0), x.dim(0));
  const std::int64_t row = x.dim(0) == 0 ? 0 : x.numel() / x.dim(0);
  for (std::int64_t i = 0; i < indices.dim(0); ++i) {
    std::memcpy(out.data<float>() + i * row, x.data<float>() + index[i] * row,
                static_cast<std::size_t>(row) * sizeof(float));
  }
}

}  // namespace trepro::cpu
