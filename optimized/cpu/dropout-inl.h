// Applying dropout factors (dropout_mask-inl.h) to vectors, once per Highway target; used by
// dropout.cc and the fused residual ops of add_dropout.cc.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_DROPOUT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_DROPOUT_INL_H_
#undef TREPRO_DROPOUT_INL_H_
#else
#define TREPRO_DROPOUT_INL_H_
#endif

#include <cstddef>

#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// x f where f != 0 and exactly 0 where the element is dropped (even for an infinite x, as the
// reference writes 0 there).
HWY_INLINE FloatVec apply_factor(FloatVec x, FloatVec f) {
  const FloatTag d;
  return hn::IfThenZeroElse(hn::Eq(f, hn::Zero(d)), hn::Mul(x, f));
}

// out = x f (+ residual when not null) over n elements; out may alias x or residual.
HWY_INLINE void dropout_apply(const float* x, const float* factor, const float* residual, float* out, std::size_t n) {
  if (residual != nullptr) {
    map_vectors<3, 1>(n, {x, factor, residual}, {out}, [](const FloatVec* v, FloatVec* y) {
      y[0] = hn::Add(apply_factor(v[0], v[1]), v[2]);
    });
  } else {
    map_vectors<2, 1>(n, {x, factor}, {out}, [](const FloatVec* v, FloatVec* y) { y[0] = apply_factor(v[0], v[1]); });
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_DROPOUT_INL_H_
