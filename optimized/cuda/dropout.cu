// dropout_forward / dropout_backward: one kernel, out_i = keep_i in_i / (1 - p), the mask drawn
// with core/philox.h through dropout_math.h, so it equals every other backend's.

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/dropout.cuh"
#include "optimized/cuda/dropout_math.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

// One thread per group of 4 elements [4g, 4g + 4): one Philox block serves the whole group;
// the last group may be partial (n % 4 != 0) and stops at n.
struct DropoutGroup {
  const float* in;
  const float* residual;  // may be null
  float* out;
  std::int64_t n;
  PhiloxKey key;
  double p;
  float kept_scale;
  __device__ void operator()(std::int64_t group) const {
    float factors[4];
    dropout_group_factors(key, p, kept_scale, static_cast<std::uint64_t>(group), factors);
    for (int lane = 0; lane < 4; ++lane) {
      const std::int64_t i = 4 * group + lane;
      if (i >= n) break;
      const float dropped = in[i] * factors[lane];
      out[i] = residual ? residual[i] + dropped : dropped;
    }
  }
};

void dropout_op(const char* op, const char* in_name, const Tensor& in, const DropoutSpec& dropout,
                const char* out_name, Tensor& out, cudaStream_t stream) {
  checks::dropout_dims(op, DType::f32, Device::cuda, in_name, in, dropout, out_name, out);
  launch_dropout(in.data<float>(), nullptr, dropout, out.data<float>(), in.numel(), stream, op);
}

}  // namespace

void launch_dropout(const float* in, const float* residual, const DropoutSpec& dropout, float* out, std::int64_t n,
                    cudaStream_t stream, const char* op) {
  const DropoutGroup group{in, residual, out, n, dropout.key, dropout.p, static_cast<float>(1 / (1 - dropout.p))};
  launch_for_each(tile_count(n, 4), group, stream, "dropout", op);
}

void CudaBackend::dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) {
  dropout_op("dropout_forward", "x", x, dropout, "y", y, stream_);
}

void CudaBackend::dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) {
  dropout_op("dropout_backward", "dy", dy, dropout, "dx", dx, stream_);
}

}  // namespace trepro::cuda
