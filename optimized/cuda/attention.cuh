// Shared pieces of the fused attention kernels (attention.cu, attention_backward.cu).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/attention_problem.h"
#include "core/backend.h"
#include "core/backend_checks.h"
#include "optimized/cuda/attention_math.h"
#include "optimized/cuda/dropout_math.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

// Offsets of row t, head h of a [B, T, H*D] tensor.
__device__ inline std::int64_t head_offset(std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t time,
                                           std::int64_t heads, std::int64_t d) {
  return ((b * time + t) * heads + h) * d;
}

// The masked score of (i, j) from a dot product, and its dropout factor.
__device__ inline float attention_masked_score(const AttentionProblem& a, std::int64_t b, std::int64_t i, std::int64_t j,
                                               float dot) {
  const bool padded = a.key_padding != nullptr && a.key_padding[b * a.tk + j] != 0;
  return attention_score(dot, a.scale, attention_key_visible(i, j, a.tq, a.tk, a.causal, padded));
}
__device__ inline float attention_dropout(const AttentionProblem& a, std::int64_t b, std::int64_t h, std::int64_t i,
                                          std::int64_t j) {
  if (a.dropout.p <= 0.0) return 1.0f;
  return dropout_factor(a.dropout.key, a.dropout.p, a.kept_scale,
                        attention_dropout_element(b, h, a.heads, a.tq, i, a.tk, j));
}

// Copies rows [first, first + count) of head h of x [B, T, H*D] into shared rows of stride
// `stride` (>= D), with all threads of the block; rows past T are not touched.
__device__ inline void load_head_rows(const float* x, std::int64_t b, std::int64_t h, std::int64_t time,
                                      std::int64_t heads, std::int64_t d, std::int64_t first, std::int64_t count,
                                      float* rows, std::int64_t stride) {
  for (std::int64_t e = threadIdx.x; e < count * d; e += blockDim.x) {
    const std::int64_t r = e / d, c = e % d;
    rows[r * stride + c] = x[head_offset(b, first + r, h, time, heads, d) + c];
  }
}

// Calls f(std::integral_constant<int, n>) for the accumulator bucket n (1, 2, 4 or 8 columns per
// lane, attention_accumulator_bucket), so that each kernel is instantiated four times only.
template <class F> void with_accumulator_columns(int bucket, F&& f) {
  switch (bucket) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}

// Launches `kernel` with `shape` (nothing when the grid is empty), raising the kernel's dynamic
// shared-memory limit first when the layout needs more than the default 48 KiB (wide heads).
template <class... Params, class... Args>
void launch_attention_kernel(void (*kernel)(Params...), const LaunchShape& shape, cudaStream_t stream,
                             const char* name, const char* op, Args... args) {
  if (shape.grid_x == 0) return;
  constexpr std::size_t kDefaultSharedBytes = 48u << 10;
  if (shape.shared_bytes > kDefaultSharedBytes) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shape.shared_bytes)),
               "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", op);
  }
  kernel<<<grid_of(shape.grid_x, shape.grid_y), shape.block, shape.shared_bytes, stream>>>(args...);
  check_launch(name, op);
}

}  // namespace trepro::cuda
