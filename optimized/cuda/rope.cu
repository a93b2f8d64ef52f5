// rope_forward / rope_backward: one thread per rotated pair (b, t, h, i), i < D/2, over
// rope_angle and rope_rotate (embedding_math.h). Each thread reads its pair before writing, so
// y may be x.
#include <stdexcept>
#include <string>

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/embedding_math.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

// Pair index = ((b * T + t) * H + h) * half + i.
struct RotatePair {
  const float* x;
  float* y;
  std::int64_t time, heads, head_width, offset;
  double sign;
  __device__ void operator()(std::int64_t pair_index) const {
    const std::int64_t half = head_width / 2;
    const std::int64_t i = pair_index % half, row_head = pair_index / half;
    const std::int64_t h = row_head % heads, row = row_head / heads, t = row % time;
    const std::int64_t first = row * heads * head_width + h * head_width + i, second = first + half;
    const RotatedPair<float> r = rope_rotate(x[first], x[second], rope_angle(offset + t, i, head_width, sign));
    y[first] = r.first;
    y[second] = r.second;
  }
};

void rotate(const char* op, const char* x_name, const Tensor& x, int heads, std::int64_t offset, double sign,
            const char* y_name, Tensor& y, cudaStream_t stream) {
  checks::expect_rank(op, x_name, x, 3);
  checks::require(heads > 0, op, "heads must be positive, got " + std::to_string(heads));
  const std::int64_t batch = x.dim(0), time = x.dim(1), width = x.dim(2);
  checks::require(width % heads == 0, op,
                  std::string(x_name) + " width " + std::to_string(width) + " is not divisible by heads " +
                      std::to_string(heads));
  const std::int64_t d = width / heads;
  checks::require(d % 2 == 0, op, "head width " + std::to_string(d) + " is odd: rope rotates pairs");
  checks::expect(op, x_name, x, {batch, time, width}, DType::f32, Device::cuda);
  checks::expect(op, y_name, y, {batch, time, width}, DType::f32, Device::cuda);
  if (offset < 0) {
    throw std::out_of_range(std::string(op) + ": position offset " + std::to_string(offset) + " is negative");
  }
  if (d == 0) return;
  launch_for_each(batch * time * heads * (d / 2), RotatePair{x.data<float>(), y.data<float>(), time, heads, d, offset, sign},
                  stream, "rope", op);
}

}  // namespace

void CudaBackend::rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) {
  rotate("rope_forward", "x", x, heads, offset, 1.0, "y", y, stream_);
}

void CudaBackend::rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) {
  rotate("rope_backward", "dy", dy, heads, offset, -1.0, "dx", dx, stream_);
}

}  // namespace trepro::cuda
