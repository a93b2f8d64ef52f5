// Row statistics of a long row (a vocabulary) by one block: each thread folds its strided slice
// into a SoftmaxState and a plain sum, then the block merges: warps by butterfly, then warp 0
// over the 8 warp results held in shared memory. Used by cross_entropy.cu and log_softmax.cu.
#pragma once

#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

struct RowStatistics {
  SoftmaxState<float> softmax;
  float sum;  // sum of the row's values
};

// Call from every thread of a kBlockThreads block, all with the same row; every thread gets the
// result. Uses 8 * 3 floats of static shared memory and two __syncthreads.
__device__ inline RowStatistics block_row_statistics(const float* row, std::int64_t length) {
  __shared__ float warp_max_values[kWarpsPerBlock], warp_sums[kWarpsPerBlock], warp_value_sums[kWarpsPerBlock];
  SoftmaxState<float> state;
  float sum = 0;
  for (std::int64_t v = threadIdx.x; v < length; v += blockDim.x) {
    softmax_add(state, row[v]);
    sum += row[v];
  }
  state = warp_softmax_merge(state);
  sum = warp_sum(sum);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (lane == 0) {
    warp_max_values[warp] = state.max;
    warp_sums[warp] = state.sum;
    warp_value_sums[warp] = sum;
  }
  __syncthreads();
  SoftmaxState<float> merged;
  float total = 0;
  for (int w = 0; w < kWarpsPerBlock; ++w) {
    merged = softmax_merge(merged, SoftmaxState<float>{warp_max_values[w], warp_sums[w]});
    total += warp_value_sums[w];
  }
  __syncthreads();  // the shared arrays may be reused by the caller's next row
  return {merged, total};
}

}  // namespace trepro::cuda
