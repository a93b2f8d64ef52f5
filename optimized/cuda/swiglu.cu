// swiglu_forward / swiglu_backward: grid-stride elementwise kernels over silu() of
// activation_math.h:  y = silu(g) u;  dgate = dy u silu'(g), dup = dy silu(g).
#include "core/backend_checks.h"
#include "optimized/cuda/activation_math.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

struct SwigluForward {
  const float* gate;
  const float* up;
  float* y;
  __device__ void operator()(std::int64_t i) const { y[i] = silu(gate[i]).silu * up[i]; }
};

// Reads every input of element i before writing: dgate or dup may alias an input.
struct SwigluBackward {
  const float* gate;
  const float* up;
  const float* dy;
  float* dgate;
  float* dup;
  __device__ void operator()(std::int64_t i) const {
    const SiluValue<float> s = silu(gate[i]);
    const float g = dy[i], u = up[i];
    dgate[i] = g * u * s.derivative;
    dup[i] = g * s.silu;
  }
};

}  // namespace

void CudaBackend::swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
  constexpr const char* op = "swiglu_forward";
  checks::swiglu_forward_dims(DType::f32, Device::cuda, gate, up, y);
  launch_for_each(gate.numel(), SwigluForward{gate.data<float>(), up.data<float>(), y.data<float>()}, stream_,
                  "swiglu_forward", op);
}

void CudaBackend::swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
  constexpr const char* op = "swiglu_backward";
  checks::swiglu_backward_dims(DType::f32, Device::cuda, gate, up, dy, dgate, dup);
  launch_for_each(gate.numel(),
                  SwigluBackward{gate.data<float>(), up.data<float>(), dy.data<float>(), dgate.data<float>(),
                                 dup.data<float>()},
                  stream_, "swiglu_backward", op);
}

}  // namespace trepro::cuda
