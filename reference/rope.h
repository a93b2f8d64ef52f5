// Rotary positions (RoFormer, Su et al. 2021), rotate-half layout (GPT-NeoX, LLaMA): in each
// head of width D, element i is paired with element i + D/2, not with its neighbour.
//   x, y [B, T, H*D], D even; position of (b, t) = offset + t.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/backend_checks.h"

namespace trepro::reference {

namespace rope_detail {

// Rotates every pair of every head of x by sign * theta(p, i), theta = p / 10000^(2i/D):
//   (y_i, y_{i+D/2}) = R(sign * theta) (x_i, x_{i+D/2}),  R(a) = [cos a, -sin a; sin a, cos a]
// Each pair is read before it is written, so y may be x.
template <class T>
void rotate(const char* op, const char* x_name, const Tensor& x, int heads, std::int64_t offset, double sign,
            const char* y_name, Tensor& y) {
  const auto [batch, time, width, d] =
      checks::rope_dims(op, dtype_of<T>(), Device::cpu, x_name, x, heads, offset, y_name, y);
  const std::int64_t half = d / 2;
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (std::int64_t t = 0; t < time; ++t) {
    const auto position = static_cast<double>(offset + t);
    for (std::int64_t i = 0; i < half; ++i) {
      // The angle reaches max_len radians: computed in double, rounded once to T.
      const double theta = sign * position / std::pow(10000.0, static_cast<double>(2 * i) / d);
      const T c = static_cast<T>(std::cos(theta)), s = static_cast<T>(std::sin(theta));
      for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::int64_t first = (b * time + t) * width + h * d + i, second = first + half;
          const T x1 = in[first], x2 = in[second];
          out[first] = c * x1 - s * x2;
          out[second] = s * x1 + c * x2;
        }
      }
    }
  }
}

}  // namespace rope_detail

// y = R(theta) x per pair:  y_i = x_i cos theta - x_{i+D/2} sin theta,
//                           y_{i+D/2} = x_i sin theta + x_{i+D/2} cos theta,
//   theta = (offset + t) / 10000^(2i/D),  i < D/2.
template <class T> void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) {
  rope_detail::rotate<T>("rope_forward", "x", x, heads, offset, 1.0, "y", y);
}

// R is orthogonal, so dx = R(theta)^T dy = R(-theta) dy.
template <class T> void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) {
  rope_detail::rotate<T>("rope_backward", "dy", dy, heads, offset, -1.0, "dx", dx);
}

}  // namespace trepro::reference
