// Row log-sum-exp on vectors, once per Highway target; used by cross_entropy.cc and
// log_softmax.cc.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_SOFTMAX_INL_H_
#undef TREPRO_SOFTMAX_INL_H_
#else
#define TREPRO_SOFTMAX_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

struct RowLogSumExp {
  float max;          // m = max_v x_v
  float lse;          // log sum_v exp(x_v) = m + log sum_v exp(x_v - m)
  float sum_below;    // sum_v (m - x_v) >= 0, so sum_v (lse - x_v) = n (lse - m) + sum_below
};

// One pass for the max, one for both sums (every exponent <= 0: no overflow).
HWY_INLINE RowLogSumExp row_log_sum_exp(const float* x, std::size_t n) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d);
  const float m = max_of(x, n);
  const auto vm = hn::Set(d, m);
  auto exp_sum = hn::Zero(d), below = hn::Zero(d);
  std::size_t i = 0;
  map_vectors<1, 0>(n, {x}, {}, [&](const FloatVec* v, FloatVec*) {
    const auto valid = hn::FirstN(d, n - i < lanes ? n - i : lanes);
    const auto centered = hn::Sub(v[0], vm);
    exp_sum = hn::Add(exp_sum, hn::IfThenElseZero(valid, hn::Exp(d, centered)));
    below = hn::Sub(below, hn::IfThenElseZero(valid, centered));
    i += lanes;
  });
  const float s = hn::GetLane(hn::SumOfLanes(d, exp_sum));
  return {m, m + std::log(s), hn::GetLane(hn::SumOfLanes(d, below))};
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_SOFTMAX_INL_H_
