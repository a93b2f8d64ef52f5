// Vector loops shared by the elementwise kernels of the optimized CPU backend, compiled once per
// Highway target (include after <hwy/highway.h>, inside a file that foreach_target includes).

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_SIMD_INL_H_
#undef TREPRO_SIMD_INL_H_
#else
#define TREPRO_SIMD_INL_H_
#endif

#include <array>
#include <cstddef>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using FloatTag = hn::ScalableTag<float>;
using FloatVec = hn::Vec<FloatTag>;

// Applies step(x, y) along arrays of n floats: x[i] holds one vector of in[i], and step fills
// y[o], stored to out[o]. The last partial vector goes through zero-padded copies, so step
// never needs a mask (and every element, tail or not, gets the same arithmetic). An output may
// alias an input: each vector is loaded before it is stored.
template <std::size_t kIn, std::size_t kOut, class Step>
HWY_INLINE void map_vectors(std::size_t n, const std::array<const float*, kIn>& in,
                            const std::array<float*, kOut>& out, const Step& step) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d);
  FloatVec x[kIn > 0 ? kIn : 1];
  FloatVec y[kOut > 0 ? kOut : 1];
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (std::size_t a = 0; a < kIn; ++a) x[a] = hn::LoadU(d, in[a] + i);
    step(x, y);
    for (std::size_t o = 0; o < kOut; ++o) hn::StoreU(y[o], d, out[o] + i);
  }
  if (i == n) return;
  constexpr std::size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float tail[kMaxLanes] = {};
  const std::size_t rest = n - i;
  for (std::size_t a = 0; a < kIn; ++a) {
    for (std::size_t l = 0; l < rest; ++l) tail[l] = in[a][i + l];
    x[a] = hn::Load(d, tail);
  }
  step(x, y);
  for (std::size_t o = 0; o < kOut; ++o) {
    hn::Store(y[o], d, tail);
    for (std::size_t l = 0; l < rest; ++l) out[o][i + l] = tail[l];
  }
}

// sum_i f(x_i) over arrays of n floats, f reading kIn vectors and returning one. The lanes of
// the zero-padded tail past n are masked out of the sum, so f(0) may be anything (exp). The
// order of the sum is fixed for a given target and n.
template <std::size_t kIn, class F>
HWY_INLINE float sum_vectors(std::size_t n, const std::array<const float*, kIn>& in, const F& f) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d);
  auto acc = hn::Zero(d);
  std::size_t i = 0;
  map_vectors<kIn, 0>(n, in, {}, [&](const FloatVec* x, FloatVec*) {
    const std::size_t valid = n - i < lanes ? n - i : lanes;
    acc = hn::Add(acc, hn::IfThenElseZero(hn::FirstN(d, valid), f(x)));
    i += lanes;
  });
  return hn::GetLane(hn::SumOfLanes(d, acc));
}

// max_i x[i] (n >= 1).
HWY_INLINE float max_of(const float* x, std::size_t n) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d);
  auto acc = hn::Set(d, x[0]);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) acc = hn::Max(acc, hn::LoadU(d, x + i));
  float m = hn::GetLane(hn::MaxOfLanes(d, acc));
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_SIMD_INL_H_
