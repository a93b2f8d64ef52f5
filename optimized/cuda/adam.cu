// adam_update: one grid-stride elementwise kernel over adam_step (adam_math.h); the bias
// corrections are computed once on the host.

#include "core/backend_checks.h"
#include "optimized/cuda/adam_math.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

struct AdamElement {
  float* param;
  const float* grad;
  float* m;
  float* v;
  AdamCoefficients<float> c;
  __device__ void operator()(std::int64_t i) const { adam_step(param[i], grad[i], m[i], v[i], c); }
};

}  // namespace

void CudaBackend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1,
                              double beta2, double eps, std::int64_t step) {
  constexpr const char* op = "adam_update";
  checks::adam_update_dims(DType::f32, Device::cuda, param, grad, m, v, beta1, beta2, step);
  launch_for_each(param.numel(),
                  AdamElement{param.data<float>(), grad.data<float>(), m.data<float>(), v.data<float>(),
                              adam_coefficients<float>(lr, beta1, beta2, eps, step)},
                  stream_, "adam", op);
}

}  // namespace trepro::cuda
