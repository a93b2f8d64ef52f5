// Dropout factors on the device, drawn with core/philox.h exactly as every other backend:
// element i is kept when philox_uniform(key, i) >= p, and then scaled by 1 / (1 - p). One Philox
// call yields the four words of elements [4 b, 4 b + 4), so the kernels give each thread such a
// group and call dropout_group_factors once for it.
#pragma once

#include <cstdint>

#include "core/backend.h"
#include "core/host_device.h"
#include "core/philox.h"

namespace trepro::cuda {

// keep / (1 - p) for one element: `kept_scale` = 1 / (1 - p), computed once on the host.
template <class T>
TR_HOST_DEVICE T dropout_factor(const PhiloxKey& key, double p, T kept_scale, std::uint64_t element) {
  return dropout_keep(key, p, element) ? kept_scale : T(0);
}

// The factors of the group of four elements [4 group, 4 group + 4) from one Philox block, with
// core's philox_word_uniform: the same values as philox_uniform element by element.
template <class T>
TR_HOST_DEVICE void dropout_group_factors(const PhiloxKey& key, double p, T kept_scale, std::uint64_t group,
                                          T factors[4]) {
  const auto words = philox_block(key, group);
  for (int lane = 0; lane < 4; ++lane) factors[lane] = philox_word_uniform(words.v[lane]) >= p ? kept_scale : T(0);
}

// Element index of attention weight (b, h, i, j), as core/backend.h defines it.
TR_HOST_DEVICE inline std::uint64_t attention_dropout_element(std::int64_t b, std::int64_t h, std::int64_t heads,
                                                              std::int64_t tq, std::int64_t i, std::int64_t tk,
                                                              std::int64_t j) {
  return static_cast<std::uint64_t>(((b * heads + h) * tq + i) * tk + j);
}

}  // namespace trepro::cuda
