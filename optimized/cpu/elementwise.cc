// Elementwise helpers of the optimized CPU backend (core/backend.h: fill, add_inplace,
// scale_inplace, sum_squares, all_finite), vectorized per Highway target and split over the pool.
// sum_squares adds fixed-size chunks (each in double) in chunk order, so its value does not
// depend on the thread count.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/elementwise.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

void fill_kernel(float* x, std::size_t n, float value) {
  map_vectors<0, 1>(n, {}, {x}, [&](const FloatVec*, FloatVec* y) { y[0] = hn::Set(FloatTag(), value); });
}

void add_kernel(float* acc, const float* x, std::size_t n) {
  map_vectors<2, 1>(n, {acc, x}, {acc}, [](const FloatVec* in, FloatVec* y) { y[0] = hn::Add(in[0], in[1]); });
}

void scale_kernel(float* x, std::size_t n, float factor) {
  const auto f = hn::Set(FloatTag(), factor);
  map_vectors<1, 1>(n, {x}, {x}, [&](const FloatVec* in, FloatVec* y) { y[0] = hn::Mul(in[0], f); });
}

// sum x^2 in double: a float squared is exact in double, so only the sum rounds.
double sum_squares_kernel(const float* x, std::size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // as many floats as a double vector has lanes
  const std::size_t lanes = hn::Lanes(dd);
  auto acc = hn::Zero(dd);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::PromoteTo(dd, hn::LoadU(df, x + i));
    acc = hn::MulAdd(v, v, acc);
  }
  double sum = hn::GetLane(hn::SumOfLanes(dd, acc));
  for (; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return sum;
}

// x - x is 0 exactly for a finite x and NaN for +-inf and NaN.
bool all_finite_kernel(const float* x, std::size_t n) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    if (!hn::AllTrue(d, hn::Eq(hn::Sub(v, v), hn::Zero(d)))) return false;
  }
  for (; i < n; ++i) {
    if (!(x[i] - x[i] == 0.0f)) return false;
  }
  return true;
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(fill_kernel);
HWY_EXPORT(add_kernel);
HWY_EXPORT(scale_kernel);
HWY_EXPORT(sum_squares_kernel);
HWY_EXPORT(all_finite_kernel);

namespace {

// Elementwise work is memory bound: below ~64 K floats a second thread costs more than it saves.
constexpr std::int64_t kGrain = 1 << 16;
// sum_squares partial sums: a fixed chunk size, so the order of the sum is fixed too.
constexpr std::int64_t kReductionChunk = 1 << 14;

}  // namespace

void CpuBackend::fill(Tensor& x, double value) {
  checks::elementwise_dims("fill", DType::f32, Device::cpu, x);
  float* p = x.data<float>();
  const auto kernel = for_target(HWY_DISPATCH_TABLE(fill_kernel), context_.target);
  context_.pool.parallel_for(0, x.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(p + lo, static_cast<std::size_t>(hi - lo), static_cast<float>(value));
  });
}

void CpuBackend::add_inplace(Tensor& acc, const Tensor& x) {
  checks::add_inplace_dims(DType::f32, Device::cpu, acc, x);
  float* a = acc.data<float>();
  const float* b = x.data<float>();
  const auto kernel = for_target(HWY_DISPATCH_TABLE(add_kernel), context_.target);
  context_.pool.parallel_for(0, acc.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(a + lo, b + lo, static_cast<std::size_t>(hi - lo));
  });
}

void CpuBackend::scale_inplace(Tensor& x, double factor) {
  checks::elementwise_dims("scale_inplace", DType::f32, Device::cpu, x);
  float* p = x.data<float>();
  const auto kernel = for_target(HWY_DISPATCH_TABLE(scale_kernel), context_.target);
  context_.pool.parallel_for(0, x.numel(), kGrain, [&](std::int64_t lo, std::int64_t hi) {
    kernel(p + lo, static_cast<std::size_t>(hi - lo), static_cast<float>(factor));
  });
}

double CpuBackend::sum_squares(const Tensor& x) {
  checks::elementwise_dims("sum_squares", DType::f32, Device::cpu, x);
  const float* p = x.data<float>();
  const std::int64_t n = x.numel();
  const std::int64_t chunks = (n + kReductionChunk - 1) / kReductionChunk;
  std::vector<double> partial(static_cast<std::size_t>(chunks));
  const auto kernel = for_target(HWY_DISPATCH_TABLE(sum_squares_kernel), context_.target);
  context_.pool.parallel_for(0, chunks, 4, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t c = lo; c < hi; ++c) {
      const std::int64_t begin = c * kReductionChunk, end = std::min(n, begin + kReductionChunk);
      partial[static_cast<std::size_t>(c)] = kernel(p + begin, static_cast<std::size_t>(end - begin));
    }
  });
  double sum = 0.0;
  for (double s : partial) sum += s;
  return sum;
}

bool CpuBackend::all_finite(const Tensor& x) {
  checks::elementwise_dims("all_finite", DType::f32, Device::cpu, x);
  return for_target(HWY_DISPATCH_TABLE(all_finite_kernel), context_.target)(x.data<float>(),
                                                                            static_cast<std::size_t>(x.numel()));
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
