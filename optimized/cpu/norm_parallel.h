// Pieces of norm.cc that the fused residual ops (add_dropout.cc) share.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/backend.h"
#include "optimized/cpu/cpu_context.h"

namespace trepro::cpu {

// What the fused residual+norm row kernels of add_dropout.cc share across a call.
struct ResidualRows {
  NormKind kind;
  std::size_t d;
  const float* gamma;
  const float* beta;  // null for rms norm (and in backward)
  float eps;
  DropoutSpec dropout;
};

// Rows per task for a row-wise op over rows of d floats: about 16 K floats per task.
std::int64_t norm_row_grain(std::int64_t d);

// dgamma [d] += sum_n dy xhat, dbeta [d] += sum_n dy (dbeta may be null), xhat = (x - mean) rstd,
// over rows x, dy [rows, d]; split by column blocks, each column adding its rows in order.
void norm_parameter_gradients_parallel(const CpuContext& ctx, const float* x, const float* dy, const float* mean,
                                       const float* rstd, std::int64_t rows, std::int64_t d, float* dgamma,
                                       float* dbeta);

}  // namespace trepro::cpu
