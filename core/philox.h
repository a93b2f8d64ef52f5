// Counter-based randomness for dropout and initialisation: Philox 4x32-10 (Salmon et al. 2011,
// the generator cuRAND and PyTorch use), from Random123.
//
// A draw is a pure function of (seed, stream, site, element): no generator state is carried,
// so every backend and every thread draws the same value for the same element, and a resumed
// run continues bit-identically. `stream` is the training step (or forward call) counter;
// `site` names the place in the model (model/context.h). The low 32 bits of `stream` go into
// the counter and the high bits are mixed into the key: streams are unique up to 2^32 steps.
#pragma once

#include <cstdint>

#include <Random123/philox.h>

#include "core/host_device.h"

namespace trepro {

struct PhiloxKey {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  std::uint32_t site = 0;
};

// Philox's counter of block `block` and its key: the block number in words 0 and 1, the site and
// the stream's low bits in 2 and 3; the seed, with the stream's high bits mixed in, as the key.
// (The CPU backend's vector Philox, optimized/cpu/dropout_mask-inl.h, lays out the same words.)
TR_HOST_DEVICE inline r123::Philox4x32::ctr_type philox_counter(const PhiloxKey& key, std::uint64_t block) {
  return {{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), key.site,
           static_cast<std::uint32_t>(key.stream)}};
}
TR_HOST_DEVICE inline r123::Philox4x32::key_type philox_key(const PhiloxKey& key) {
  return {{static_cast<std::uint32_t>(key.seed ^ (key.stream >> 32) * 0x9E3779B9u),
           static_cast<std::uint32_t>(key.seed >> 32)}};
}

// Four 32-bit words for the block of elements [4*block, 4*block + 4).
TR_HOST_DEVICE inline r123::Philox4x32::ctr_type philox_block(const PhiloxKey& key, std::uint64_t block) {
  r123::Philox4x32 rng;
  return rng(philox_counter(key, block), philox_key(key));
}

// Uniform in [0, 1) with 24 random bits: exactly representable in float and double alike, so a
// float and a double backend compare it against p identically.
TR_HOST_DEVICE inline double philox_word_uniform(std::uint32_t word) {
  return static_cast<double>(word >> 8) * (1.0 / 16777216.0);
}
// The uniform of `element`: word element % 4 of block element / 4 (kernels that own a whole
// block use philox_block and philox_word_uniform directly, one Philox call for four elements).
TR_HOST_DEVICE inline double philox_uniform(const PhiloxKey& key, std::uint64_t element) {
  return philox_word_uniform(philox_block(key, element >> 2).v[element & 3u]);
}

// Dropout keeps element `element` with probability 1 - p.
TR_HOST_DEVICE inline bool dropout_keep(const PhiloxKey& key, double p, std::uint64_t element) {
  return philox_uniform(key, element) >= p;
}

}  // namespace trepro
