// select_batch of the optimized CPU backend: out[i] = x[indices[i]] along the first dimension
// (core/backend.h), every index checked before anything is written.
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/backend_checks.h"
#include "optimized/cpu/ops.h"

namespace trepro::cpu {

void select_batch(const CpuContext&, const Tensor& x, const Tensor& indices, Tensor& out) {
  constexpr const char* op = "select_batch";
  checks::require(x.rank() >= 1, op, "x must have a batch dimension");
  checks::expect_rank(op, "indices", indices, 1);
  Shape out_shape = x.shape();
  out_shape[0] = indices.dim(0);
  checks::expect(op, "x", x, x.shape(), DType::f32, Device::cpu);
  checks::expect(op, "indices", indices, {indices.dim(0)}, DType::i32, Device::cpu);
  checks::expect(op, "out", out, out_shape, DType::f32, Device::cpu);
  const std::int32_t* index = indices.data<std::int32_t>();
  for (std::int64_t i = 0; i < indices.dim(0); ++i) {
    if (index[i] < 0 || index[i] >= x.dim(0)) {
      throw std::out_of_range(std::string(op) + ": indices[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                              " is outside [0, " + std::to_string(x.dim(0)) + ")");
    }
  }
  const std::int64_t row = x.dim(0) == 0 ? 0 : x.numel() / x.dim(0);
  for (std::int64_t i = 0; i < indices.dim(0); ++i) {
    std::memcpy(out.data<float>() + i * row, x.data<float>() + index[i] * row,
                static_cast<std::size_t>(row) * sizeof(float));
  }
}

}  // namespace trepro::cpu
