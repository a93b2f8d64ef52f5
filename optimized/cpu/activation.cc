// Activations of the optimized CPU backend (core/backend.h), vectorized per Highway
// target with the forms of activation-inl.h, split over the pool.
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/activation.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/activation-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

void activation_forward_kernel(Activation act, const float* x, float* y, std::size_t n) {
  with_activation(act, [&]<Activation kAct>() {
    map_vectors<1, 1>(n, {x}, {y}, [](const FloatVec* in, FloatVec* out) {
      out[0] = activation_value<kAct>(FloatTag(), in[0]);
    });
  });
}

void activation_backward_kernel(Activation act, const float* x, const float* dy, float* dx, std::size_t n) {
  with_activation(act, [&]<Activation kAct>() {
    map_vectors<2, 1>(n, {x, dy}, {dx}, [](const FloatVec* in, FloatVec* out) {
      out[0] = hn::Mul(activation_derivative<kAct>(FloatTag(), in[0]), in[1]);
    });
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(activation_forward_kernel);
HWY_EXPORT(activation_backward_kernel);
namespace {

constexpr std::int64_t kGrain = 1 << 14;

}  // namespace

void CpuBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
  checks::activation_forward_dims(DType::f32, Device::cpu, x, y);
  const auto kernel = for_target(HWY_DISPATCH_TABLE(activation_forward_kernel), context_.target);
  context_.pool.parallel_for(0, x.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(act, x.data<float>() + lo, y.data<float>() + lo, static_cast<std::size_t>(hi - lo));
  });
}

void CpuBackend::activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) {
  checks::activation_backward_dims(DType::f32, Device::cpu, x, dy, dx);
  const auto kernel = for_target(HWY_DISPATCH_TABLE(activation_backward_kernel), context_.target);
  context_.pool.parallel_for(0, x.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(act, x.data<float>() + lo, dy.data<float>() + lo, dx.data<float>() + lo, static_cast<std::size_t>(hi - lo));
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
