// SwiGLU of the optimized CPU backend (core/backend.h), vectorized per Highway target with the
// sigmoid of activation-inl.h (1 - s computed without cancellation), split over the pool.
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/swiglu.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/activation-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// y = silu(g) u with silu(g) = g sigmoid(g).
void swiglu_forward_kernel(const float* gate, const float* up, float* y, std::size_t n) {
  map_vectors<2, 1>(n, {gate, up}, {y}, [](const FloatVec* in, FloatVec* out) {
    out[0] = hn::Mul(hn::Mul(in[0], sigmoid(FloatTag(), in[0])), in[1]);
  });
}

// dgate = dy u s (1 + g (1 - s)), dup = dy g s.
void swiglu_backward_kernel(const float* gate, const float* up, const float* dy, float* dgate, float* dup,
                            std::size_t n) {
  map_vectors<3, 2>(n, {gate, up, dy}, {dgate, dup}, [](const FloatVec* in, FloatVec* out) {
    const FloatTag d;
    const Sigmoid sig = sigmoid_pair(d, in[0]);
    const auto dsilu = hn::Mul(sig.s, hn::MulAdd(in[0], sig.one_minus_s, hn::Set(d, 1.0f)));
    out[0] = hn::Mul(hn::Mul(in[2], in[1]), dsilu);
    out[1] = hn::Mul(in[2], hn::Mul(in[0], sig.s));
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(swiglu_forward_kernel);
HWY_EXPORT(swiglu_backward_kernel);

namespace {

constexpr std::int64_t kGrain = 1 << 14;

}  // namespace

void CpuBackend::swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
  checks::swiglu_forward_dims(DType::f32, Device::cpu, gate, up, y);
  const auto kernel = for_target(HWY_DISPATCH_TABLE(swiglu_forward_kernel), context_.target);
  context_.pool.parallel_for(0, gate.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(gate.data<float>() + lo, up.data<float>() + lo, y.data<float>() + lo, static_cast<std::size_t>(hi - lo));
  });
}

void CpuBackend::swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
  checks::swiglu_backward_dims(DType::f32, Device::cpu, gate, up, dy, dgate, dup);
  const auto kernel = for_target(HWY_DISPATCH_TABLE(swiglu_backward_kernel), context_.target);
  context_.pool.parallel_for(0, gate.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(gate.data<float>() + lo, up.data<float>() + lo, dy.data<float>() + lo, dgate.data<float>() + lo,
           dup.data<float>() + lo, static_cast<std::size_t>(hi - lo));
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
