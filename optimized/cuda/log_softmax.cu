// log_softmax_forward: one block per row, y = x - lse with lse from block_row_statistics.
#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/softmax_rows.cuh"

namespace trepro::cuda {

namespace {

// grid: block_per_row_launch(N), block: 256, shared: 96 bytes static. Block n owns row n of y.
__global__ void log_softmax_rows(const float* x, float* y, std::int64_t vocab) {
  const std::int64_t n = blockIdx.x;
  const float lse = softmax_lse(block_row_statistics(x + n * vocab, vocab).softmax);
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) y[n * vocab + v] = x[n * vocab + v] - lse;
}

}  // namespace

void CudaBackend::log_softmax_forward(const Tensor& x, Tensor& y) {
  constexpr const char* op = "log_softmax_forward";
  const checks::LogSoftmaxDims dims = checks::log_softmax_forward_dims(DType::f32, Device::cuda, x, y);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const LaunchShape shape = block_per_row_launch(rows);
  if (shape.grid_x == 0) return;
  log_softmax_rows<<<grid_of(shape.grid_x), shape.block, 0, stream_>>>(x.data<float>(), y.data<float>(), vocab);
  check_launch("log_softmax_rows", op);
}

}  // namespace trepro::cuda
