// Position arithmetic of embedding.cu and rope.cu, as reference/embedding.h and reference/rope.h.
// Angles reach max_len radians, so they are computed in double and rounded once to the storage
// type, exactly as the reference does.
//   sinusoidal: PE(p, 2i) = sin(p / 10000^(2i/d)),  PE(p, 2i+1) = cos(p / 10000^(2i/d))
//   rope:       theta(p, i) = p / 10000^(2i/D), pairs (i, i + D/2) of each head rotated by
//               (y1, y2) = (c x1 - s x2, s x1 + c x2) with c = cos(sign theta), s = sin(sign theta)
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace trepro::cuda {

TR_HOST_DEVICE inline double sinusoidal_position(std::int64_t position, std::int64_t column, std::int64_t d) {
  const std::int64_t pair = column / 2;
  const double angle = static_cast<double>(position) / std::pow(10000.0, static_cast<double>(2 * pair) / d);
  return column % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

TR_HOST_DEVICE inline double rope_angle(std::int64_t position, std::int64_t pair, std::int64_t head_width,
                                        double sign) {
  return sign * static_cast<double>(position) / std::pow(10000.0, static_cast<double>(2 * pair) / head_width);
}

// Where rotated pair `pair_index` of x [B, T, H*D] lives: pair_index = ((b T + t) H + h) (D/2) + i
// covers elements first = ((b T + t) H + h) D + i and second = first + D/2, at time t.
struct RopePair {
  std::int64_t first, second, t, i;
};
TR_HOST_DEVICE inline RopePair rope_pair(std::int64_t pair_index, std::int64_t time, std::int64_t heads,
                                         std::int64_t head_width) {
  const std::int64_t half = head_width / 2;
  const std::int64_t i = pair_index % half, row_head = pair_index / half;
  const std::int64_t first = row_head * head_width + i;  // row_head = (b T + t) H + h
  return {first, first + half, (row_head / heads) % time, i};
}

template <class T> struct RotatedPair {
  T first, second;
};
template <class T> TR_HOST_DEVICE RotatedPair<T> rope_rotate(T x1, T x2, double angle) {
  const T c = static_cast<T>(std::cos(angle)), s = static_cast<T>(std::sin(angle));
  return {c * x1 - s * x2, s * x1 + c * x2};
}

}  // namespace trepro::cuda
