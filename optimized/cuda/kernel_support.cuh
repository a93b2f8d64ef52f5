// Device helpers every op file uses: the grid-stride elementwise kernel and warp reductions.
#pragma once

#include <cstdint>

#include "optimized/cuda/cuda_call.h"
#include "optimized/cuda/launch_shapes.h"
#include "optimized/cuda/softmax_math.h"

namespace trepro::cuda {

// grid: elementwise_launch(n).grid_x blocks (grid-stride), block: 256 threads, shared: none.
// Invariant: f(i) runs exactly once for every i in [0, n), in no particular order, so f must only
// touch index i's own outputs.
template <class F> __global__ void for_each_index(std::int64_t n, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

template <class F> void launch_for_each(std::int64_t n, F f, cudaStream_t stream, const char* kernel, const char* op) {
  const LaunchShape shape = elementwise_launch(n);
  if (shape.grid_x == 0) return;
  for_each_index<<<grid_of(shape.grid_x), shape.block, 0, stream>>>(n, f);
  check_launch(kernel, op);
}

// Butterfly reductions: every lane of the warp ends with the result over all 32 lanes.
__device__ inline float warp_sum(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}
__device__ inline float warp_max(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}
__device__ inline SoftmaxState<float> warp_softmax_merge(SoftmaxState<float> state) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    SoftmaxState<float> other;
    other.max = __shfl_xor_sync(0xffffffffu, state.max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, state.sum, offset);
    state = softmax_merge(state, other);
  }
  return state;
}

}  // namespace trepro::cuda
