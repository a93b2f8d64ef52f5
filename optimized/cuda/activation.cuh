// The activation kernels, also used by linear.cu for the epilogues cuBLASLt does not offer.
#pragma once

#include "optimized/cuda/activation_math.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

struct ActivationForward {
  Activation act;
  const float* x;
  float* y;
  __device__ void operator()(std::int64_t i) const { y[i] = activation_value(act, x[i]); }
};

// dx may alias dy (linear_backward computes dpre in place of a copy of dy).
struct ActivationBackward {
  Activation act;
  const float* x;
  const float* dy;
  float* dx;
  __device__ void operator()(std::int64_t i) const { dx[i] = activation_derivative(act, x[i]) * dy[i]; }
};

void launch_activation_forward(Activation act, const float* x, float* y, std::int64_t n, cudaStream_t stream,
                               const char* op);
void launch_activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n,
                                cudaStream_t stream, const char* op);

}  // namespace trepro::cuda
