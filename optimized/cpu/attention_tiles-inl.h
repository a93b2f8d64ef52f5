// The tile-level pieces of the fused attention (attention.cc), compiled once per Highway target:
// a register-tiled product of small tiles, the masks, one row of the (online) softmax, and the
// dropout factors of a row of weights.
//
// Tiles live in the per-worker workspace with rows padded to whole vectors (zero-filled), so
// that the kernels never need a partial vector: a padded key gets score -inf through its bias
// and weight 0, and a padded column of a result is never read.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_ATTENTION_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_ATTENTION_TILES_INL_H_
#undef TREPRO_ATTENTION_TILES_INL_H_
#else
#define TREPRO_ATTENTION_TILES_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "optimized/cpu/dropout_mask-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using FloatTag = hn::ScalableTag<float>;

// 64 x 64 tiles: with d_head 64 each tile buffer is 16 KiB, and the ~12 of backward fit in
// the 1 MiB L2 of these cores with room for the streamed q, k, v rows.
inline constexpr std::size_t kQueryTile = 64;
inline constexpr std::size_t kKeyTile = 64;

inline constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

inline std::size_t round_up(std::size_t x, std::size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// A matrix operand read in place: element (i, c) is data[i * row + c * col]. Swapping the
// strides reads the transpose, so P^T and dS^T never need a copy.
struct Strided {
  const float* data;
  std::ptrdiff_t row, col;
};

// kRows x kCols vectors of C (=, or += when accumulate) sum_{p < depth} A(r, p) B[p, :].
// The accumulators stay in registers for the whole depth: per step kCols loads of B and kRows
// broadcasts of A feed kRows * kCols FMAs.
template <std::size_t kRows, std::size_t kCols>
HWY_INLINE void multiply_block(FloatTag d, std::size_t depth, Strided a, const float* HWY_RESTRICT b,
                               std::size_t ldb, float* HWY_RESTRICT c, std::size_t ldc, bool accumulate) {
  const std::size_t lanes = hn::Lanes(d);
  hn::Vec<FloatTag> acc[kRows][kCols];
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t v = 0; v < kCols; ++v) acc[r][v] = hn::Zero(d);
  }
  for (std::size_t p = 0; p < depth; ++p) {
    hn::Vec<FloatTag> bv[kCols];
    for (std::size_t v = 0; v < kCols; ++v) bv[v] = hn::LoadU(d, b + p * ldb + v * lanes);
    for (std::size_t r = 0; r < kRows; ++r) {
      const auto x = hn::Set(d, a.data[static_cast<std::ptrdiff_t>(r) * a.row + static_cast<std::ptrdiff_t>(p) * a.col]);
      for (std::size_t v = 0; v < kCols; ++v) acc[r][v] = hn::MulAdd(x, bv[v], acc[r][v]);
    }
  }
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t v = 0; v < kCols; ++v) {
      float* out = c + r * ldc + v * lanes;
      hn::StoreU(accumulate ? hn::Add(hn::LoadU(d, out), acc[r][v]) : acc[r][v], d, out);
    }
  }
}

template <std::size_t kRows>
HWY_INLINE void multiply_rows(FloatTag d, std::size_t n, std::size_t depth, Strided a, const float* b,
                              std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  const std::size_t lanes = hn::Lanes(d);
  std::size_t j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) multiply_block<kRows, 2>(d, depth, a, b + j, ldb, c + j, ldc, accumulate);
  for (; j < n; j += lanes) multiply_block<kRows, 1>(d, depth, a, b + j, ldb, c + j, ldc, accumulate);
}

// C [rows, n] (=, or += when accumulate) A [rows, depth] B [depth, n]; n a multiple of Lanes.
inline void multiply_tile(FloatTag d, std::size_t rows, std::size_t n, std::size_t depth, Strided a,
                          const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  std::size_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    const Strided a4{a.data + static_cast<std::ptrdiff_t>(i) * a.row, a.row, a.col};
    multiply_rows<4>(d, n, depth, a4, b, ldb, c + i * ldc, ldc, accumulate);
  }
  for (; i < rows; ++i) {
    const Strided a1{a.data + static_cast<std::ptrdiff_t>(i) * a.row, a.row, a.col};
    multiply_rows<1>(d, n, depth, a1, b, ldb, c + i * ldc, ldc, accumulate);
  }
}

// dst [count, width_pad] = rows of src (row stride src_stride), columns past width zeroed.
inline void pack_rows(const float* src, std::int64_t src_stride, std::size_t count, std::size_t width,
                      std::size_t width_pad, float* dst) {
  for (std::size_t r = 0; r < count; ++r) {
    const float* from = src + static_cast<std::int64_t>(r) * src_stride;
    float* to = dst + r * width_pad;
    for (std::size_t c = 0; c < width; ++c) to[c] = from[c];
    for (std::size_t c = width; c < width_pad; ++c) to[c] = 0.0f;
  }
}

// dst [width, count_pad] = the transpose of rows of src, columns past count zeroed.
inline void pack_transposed(const float* src, std::int64_t src_stride, std::size_t count, std::size_t count_pad,
                            std::size_t width, float* dst) {
  for (std::size_t c = 0; c < width; ++c) {
    float* to = dst + c * count_pad;
    for (std::size_t r = 0; r < count; ++r) to[r] = src[static_cast<std::int64_t>(r) * src_stride + c];
    for (std::size_t r = count; r < count_pad; ++r) to[r] = 0.0f;
  }
}

// bias[j] = 0 for a key that may be seen, -inf for a padded key and for the lanes past `count`.
inline void key_bias(const std::int32_t* padding, std::size_t count, std::size_t count_pad, float* bias) {
  for (std::size_t j = 0; j < count; ++j) bias[j] = (padding != nullptr && padding[j] != 0) ? kMinusInf : 0.0f;
  for (std::size_t j = count; j < count_pad; ++j) bias[j] = kMinusInf;
}

// One row of scores to masked logits in place: s_j = scale S_j + bias_j, and -inf for the keys
// j > last_visible (causal). Returns max_j s_j (-inf when no key is visible).
inline float mask_row(FloatTag d, float* s, const float* bias, std::size_t n, float scale,
                      std::int64_t last_visible) {
  const std::size_t lanes = hn::Lanes(d);
  const auto vscale = hn::Set(d, scale);
  const auto minus_inf = hn::Set(d, kMinusInf);
  // Key indices are < 2^24, so comparing them as floats is exact.
  const auto last = hn::Set(d, static_cast<float>(std::max<std::int64_t>(last_visible, -1)));
  auto vmax = minus_inf;
  for (std::size_t j = 0; j < n; j += lanes) {
    auto x = hn::MulAdd(vscale, hn::LoadU(d, s + j), hn::LoadU(d, bias + j));
    const auto index = hn::Iota(d, static_cast<float>(j));
    x = hn::IfThenElse(hn::Gt(index, last), minus_inf, x);
    hn::StoreU(x, d, s + j);
    vmax = hn::Max(vmax, x);
  }
  return hn::GetLane(hn::MaxOfLanes(d, vmax));
}

// p_j = exp(s_j - shift) in place (0 where s_j = -inf: Highway's Exp returns 0 below its range),
// returning sum_j p_j. shift must be finite.
inline float exp_row(FloatTag d, float* s, std::size_t n, float shift) {
  const std::size_t lanes = hn::Lanes(d);
  const auto vshift = hn::Set(d, shift);
  auto sum = hn::Zero(d);
  for (std::size_t j = 0; j < n; j += lanes) {
    const auto p = hn::Exp(d, hn::Sub(hn::LoadU(d, s + j), vshift));
    hn::StoreU(p, d, s + j);
    sum = hn::Add(sum, p);
  }
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

inline void zero_row(FloatTag d, float* x, std::size_t n) {
  for (std::size_t j = 0; j < n; j += hn::Lanes(d)) hn::StoreU(hn::Zero(d), d, x + j);
}

// x[j] *= factor[j] into out (out may be x); n a multiple of Lanes.
inline void multiply_row(FloatTag d, const float* x, const float* factor, std::size_t n, float* out) {
  for (std::size_t j = 0; j < n; j += hn::Lanes(d)) {
    hn::StoreU(hn::Mul(hn::LoadU(d, x + j), hn::LoadU(d, factor + j)), d, out + j);
  }
}

// The inverted-dropout factors of `count` consecutive weights from element `first`
// (dropout_mask-inl.h: the reference's mask), and 0 for the padding lanes up to count_pad.
inline void dropout_factors(const DropoutSpec& dropout, std::uint64_t first, std::size_t count,
                            std::size_t count_pad, float* factor) {
  dropout_factors(dropout, first, count, factor);
  for (std::size_t n = count; n < count_pad; ++n) factor[n] = 0.0f;
}

// sum_c x[c] y[c] over n (any n).
inline float dot(FloatTag d, const float* x, const float* y, std::size_t n) {
  const std::size_t lanes = hn::Lanes(d);
  auto acc = hn::Zero(d);
  std::size_t c = 0;
  for (; c + lanes <= n; c += lanes) acc = hn::MulAdd(hn::LoadU(d, x + c), hn::LoadU(d, y + c), acc);
  float sum = hn::GetLane(hn::SumOfLanes(d, acc));
  for (; c < n; ++c) sum += x[c] * y[c];
  return sum;
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_ATTENTION_TILES_INL_H_
