// fill, add_inplace, scale_inplace (grid-stride elementwise kernels) and the two reductions
// sum_squares and all_finite (CUB DeviceReduce::TransformReduce).
#include <cub/device/device_reduce.cuh>

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

struct Fill {
  float* x;
  float value;
  __device__ void operator()(std::int64_t i) const { x[i] = value; }
};
struct AddInto {
  float* acc;
  const float* x;
  __device__ void operator()(std::int64_t i) const { acc[i] += x[i]; }
};
struct Scale {
  float* x;
  float factor;
  __device__ void operator()(std::int64_t i) const { x[i] *= factor; }
};
// A float squared is exact in double: only the sum rounds, at double precision (as the reference).
struct SquareInDouble {
  __device__ double operator()(float x) const { return static_cast<double>(x) * x; }
};
struct NotFinite {
  __device__ int operator()(float x) const { return isfinite(x) ? 0 : 1; }
};
struct Plus {
  template <class T> __device__ T operator()(T a, T b) const { return a + b; }
};

// One TransformReduce to a device scalar, copied back; synchronizes.
template <class Out, class Transform>
Out reduce(CudaBackend& backend, const float* in, std::int64_t n, Transform transform, const char* op) {
  Tensor result = backend.scratch_bytes(sizeof(Out));
  auto* out = reinterpret_cast<Out*>(result.raw());
  std::size_t temp_bytes = 0;
  check_cuda(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, in, out, n, Plus{}, transform, Out(0),
                                                backend.stream()),
             "cub::DeviceReduce::TransformReduce(size query)", op);
  Tensor temp = backend.scratch_bytes(temp_bytes);
  check_cuda(cub::DeviceReduce::TransformReduce(temp.raw(), temp_bytes, in, out, n, Plus{}, transform, Out(0),
                                                backend.stream()),
             "cub::DeviceReduce::TransformReduce", op);
  Out value{};
  check_cuda(cudaMemcpyAsync(&value, out, sizeof(Out), cudaMemcpyDeviceToHost, backend.stream()),
             "cudaMemcpyAsync(result to host)", op);
  backend.synchronize(op);
  return value;
}

}  // namespace

void CudaBackend::fill(Tensor& x, double value) {
  checks::elementwise_dims("fill", DType::f32, Device::cuda, x);
  launch_for_each(x.numel(), Fill{x.data<float>(), static_cast<float>(value)}, stream_, "fill", "fill");
}

void CudaBackend::add_inplace(Tensor& acc, const Tensor& x) {
  constexpr const char* op = "add_inplace";
  checks::add_inplace_dims(DType::f32, Device::cuda, acc, x);
  launch_for_each(acc.numel(), AddInto{acc.data<float>(), x.data<float>()}, stream_, "add_into", op);
}

void CudaBackend::scale_inplace(Tensor& x, double factor) {
  checks::elementwise_dims("scale_inplace", DType::f32, Device::cuda, x);
  launch_for_each(x.numel(), Scale{x.data<float>(), static_cast<float>(factor)}, stream_, "scale", "scale_inplace");
}

double CudaBackend::sum_squares(const Tensor& x) {
  checks::elementwise_dims("sum_squares", DType::f32, Device::cuda, x);
  return reduce<double>(*this, x.data<float>(), x.numel(), SquareInDouble{}, "sum_squares");
}

bool CudaBackend::all_finite(const Tensor& x) {
  checks::elementwise_dims("all_finite", DType::f32, Device::cuda, x);
  return reduce<int>(*this, x.data<float>(), x.numel(), NotFinite{}, "all_finite") == 0;
}

}  // namespace trepro::cuda
