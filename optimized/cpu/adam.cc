// Adam of the optimized CPU backend (core/backend.h), fused: one pass reads param, grad, m, v and
// writes param, m, v (the reference's expression, vectorized), split over the pool.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/adam.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {


// constants: beta1, 1 - beta1, beta2, 1 - beta2, 1 - beta1^t, 1 - beta2^t, lr, eps, each rounded
// once from double to float, as the reference rounds them.
void adam_kernel(float* param, const float* grad, float* m, float* v, std::size_t n, const float* constants) {
  const FloatTag d;
  const auto b1 = hn::Set(d, constants[0]), c1 = hn::Set(d, constants[1]);
  const auto b2 = hn::Set(d, constants[2]), c2 = hn::Set(d, constants[3]);
  const auto bias1 = hn::Set(d, constants[4]), bias2 = hn::Set(d, constants[5]);
  const auto lr = hn::Set(d, constants[6]), eps = hn::Set(d, constants[7]);
  map_vectors<4, 3>(n, {param, grad, m, v}, {param, m, v}, [&](const FloatVec* in, FloatVec* out) {
    const auto g = in[1];
    const auto m_new = hn::Add(hn::Mul(b1, in[2]), hn::Mul(c1, g));
    const auto v_new = hn::Add(hn::Mul(b2, in[3]), hn::Mul(c2, hn::Mul(g, g)));
    const auto step = hn::Div(hn::Mul(lr, hn::Div(m_new, bias1)), hn::Add(hn::Sqrt(hn::Div(v_new, bias2)), eps));
    out[0] = hn::Sub(in[0], step);
    out[1] = m_new;
    out[2] = v_new;
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(adam_kernel);

void CpuBackend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1,
                             double beta2, double eps, std::int64_t step) {
  checks::adam_update_dims(DType::f32, Device::cpu, param, grad, m, v, beta1, beta2, step);
  const double t = static_cast<double>(step);
  const float constants[] = {static_cast<float>(beta1),          static_cast<float>(1 - beta1),
                             static_cast<float>(beta2),          static_cast<float>(1 - beta2),
                             static_cast<float>(1 - std::pow(beta1, t)), static_cast<float>(1 - std::pow(beta2, t)),
                             static_cast<float>(lr),             static_cast<float>(eps)};
  const auto kernel = for_target(HWY_DISPATCH_TABLE(adam_kernel), context_.target);
  context_.pool.parallel_for(0, param.numel(), 1 << 15, [&](std::int64_t lo, std::int64_t hi) {
    kernel(param.data<float>() + lo, grad.data<float>() + lo, m.data<float>() + lo, v.data<float>() + lo,
           static_cast<std::size_t>(hi - lo), constants);
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
