// Dropout factors of the optimized CPU backend, drawn exactly as the reference draws its mask
// (dropout_keep in core/philox.h), so that every backend drops the same elements.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/backend.h"
#include "core/philox.h"

namespace trepro::cpu {

// factor[n] = keep(first + n) / (1 - p) for n < count, the inverted-dropout factor of element
// first + n. keep is u >= p with u = (word >> 8) / 2^24, which is word >> 8 >= ceil(p 2^24)
// (both sides exact integers); one Philox block gives the words of 4 consecutive elements, so a
// row costs count / 4 blocks. 1 / (1 - p) is rounded to float once, as the reference does.
inline void dropout_factors(const DropoutSpec& dropout, std::uint64_t first, std::size_t count, float* factor) {
  const auto threshold = static_cast<std::uint32_t>(std::ceil(dropout.p * 16777216.0));
  const auto kept = static_cast<float>(1.0 / (1.0 - dropout.p));
  std::uint64_t element = first;
  std::size_t n = 0;
  while (n < count) {
    const auto words = philox_block(dropout.key, element >> 2);
    for (std::uint64_t w = element & 3u; w < 4 && n < count; ++w, ++element, ++n) {
      factor[n] = (words.v[w] >> 8) >= threshold ? kept : 0.0f;
    }
  }
}

}  // namespace trepro::cpu
