// rope_forward / rope_backward: one thread per rotated pair (b, t, h, i), i < D/2, over
// rope_angle and rope_rotate (embedding_math.h). Each thread reads its pair before writing, so
// y may be x.

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/embedding_math.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

// One thread per pair: rope_pair (embedding_math.h, host-tested) maps the index to its elements.
struct RotatePair {
  const float* x;
  float* y;
  std::int64_t time, heads, head_width, offset;
  double sign;
  __device__ void operator()(std::int64_t pair_index) const {
    const RopePair pair = rope_pair(pair_index, time, heads, head_width);
    const RotatedPair<float> r =
        rope_rotate(x[pair.first], x[pair.second], rope_angle(offset + pair.t, pair.i, head_width, sign));
    y[pair.first] = r.first;
    y[pair.second] = r.second;
  }
};

void rotate(const char* op, const char* x_name, const Tensor& x, int heads, std::int64_t offset, double sign,
            const char* y_name, Tensor& y, cudaStream_t stream) {
  const checks::RopeDims dims = checks::rope_dims(op, DType::f32, Device::cuda, x_name, x, heads, offset, y_name, y);
  const std::int64_t batch = dims.batch, time = dims.time, d = dims.head_width;
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
