// activation_forward / activation_backward: grid-stride elementwise kernels over
// activation_math.h (the functions the host tests check against the reference).
#include "core/backend_checks.h"
#include "optimized/cuda/activation.cuh"
#include "optimized/cuda/cuda_backend_impl.h"

namespace trepro::cuda {

void launch_activation_forward(Activation act, const float* x, float* y, std::int64_t n, cudaStream_t stream,
                               const char* op) {
  launch_for_each(n, ActivationForward{act, x, y}, stream, "activation_forward", op);
}

void launch_activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n,
                                cudaStream_t stream, const char* op) {
  launch_for_each(n, ActivationBackward{act, x, dy, dx}, stream, "activation_backward", op);
}

void CudaBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
  constexpr const char* op = "activation_forward";
  checks::activation_forward_dims(DType::f32, Device::cuda, x, y);
  launch_activation_forward(act, x.data<float>(), y.data<float>(), x.numel(), stream_, op);
}

void CudaBackend::activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) {
  constexpr const char* op = "activation_backward";
  checks::activation_backward_dims(DType::f32, Device::cuda, x, dy, dx);
  launch_activation_backward(act, x.data<float>(), dy.data<float>(), dx.data<float>(), x.numel(), stream_, op);
}

}  // namespace trepro::cuda
