// Dropout factors of the optimized CPU backend, drawn exactly as the reference draws its mask
// (dropout_keep in core/philox.h), so that every backend drops the same elements; compiled once
// per Highway target. Philox runs on as many blocks at once as the target has 64-bit lanes: its
// words are integers, so the vector draw is the scalar one, bit for bit, on every target.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_DROPOUT_MASK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_DROPOUT_MASK_INL_H_
#undef TREPRO_DROPOUT_MASK_INL_H_
#else
#define TREPRO_DROPOUT_MASK_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <hwy/highway.h>

#include "core/backend.h"
#include "core/philox.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using WordTag = hn::ScalableTag<std::uint64_t>;  // one 32-bit Philox word per 64-bit lane
using WordVec = hn::Vec<WordTag>;

// The four counter words of Lanes(WordTag) consecutive blocks, one block per lane.
struct PhiloxLanes {
  WordVec w[4];
};

// word * m, exactly, for a word below 2^32: the 32x32 -> 64-bit product of the even 32-bit halves
// (the single-lane target multiplies its one 64-bit lane directly).
HWY_INLINE WordVec multiply_word(WordVec word, std::uint32_t m) {
  const WordTag d64;
#if HWY_TARGET == HWY_SCALAR
  return word * hn::Set(d64, m);
#else
  const hn::Repartition<std::uint32_t, WordTag> d32;
  return hn::MulEven(hn::BitCast(d32, word), hn::BitCast(d32, hn::Set(d64, m)));
#endif
}

// One Philox 4x32 round on every lane: the 32x32 -> 64-bit products of words 0 and 2 with the
// round multipliers, split into their high and low halves (Random123's philox4x32round).
HWY_INLINE PhiloxLanes philox_round(const PhiloxLanes& c, std::uint32_t key0, std::uint32_t key1) {
  const WordTag d64;
  const WordVec low_half = hn::Set(d64, 0xFFFFFFFFull);
  const WordVec product0 = multiply_word(c.w[0], PHILOX_M4x32_0);
  const WordVec product1 = multiply_word(c.w[2], PHILOX_M4x32_1);
  return {{hn::Xor(hn::Xor(hn::ShiftRight<32>(product1), c.w[1]), hn::Set(d64, key0)), hn::And(product1, low_half),
           hn::Xor(hn::Xor(hn::ShiftRight<32>(product0), c.w[3]), hn::Set(d64, key1)), hn::And(product0, low_half)}};
}

// philox_block(key, first_block + lane) for every lane: Philox 4x32 with its 10 rounds.
HWY_INLINE PhiloxLanes philox_lanes(const PhiloxKey& key, std::uint64_t first_block) {
  const WordTag d64;
  const auto counter = philox_counter(key, 0);
  const auto k = philox_key(key);
  const WordVec blocks = hn::Iota(d64, first_block);
  PhiloxLanes c{{hn::And(blocks, hn::Set(d64, 0xFFFFFFFFull)), hn::ShiftRight<32>(blocks), hn::Set(d64, counter.v[2]),
                 hn::Set(d64, counter.v[3])}};
  std::uint32_t key0 = k.v[0], key1 = k.v[1];
  c = philox_round(c, key0, key1);
  for (int round = 1; round < 10; ++round) {  // the key is bumped before each later round
    key0 += PHILOX_W32_0;
    key1 += PHILOX_W32_1;
    c = philox_round(c, key0, key1);
  }
  return c;
}

// The factors of elements [4 block, 4 block + 4 lanes) as float bit patterns in element order,
// two per 64-bit word: element e keeps when word e % 4 of block e / 4, shifted right by 8, is at
// least `threshold` (below 2^24, so the signed compare is the unsigned one).
HWY_INLINE void block_factor_bits(const PhiloxLanes& c, std::int64_t threshold, std::int64_t kept_bits,
                                  std::int64_t* out) {
  const hn::Repartition<std::int64_t, WordTag> di;
  const auto factor = [&](WordVec word) {
    const auto dropped = hn::Lt(hn::BitCast(di, hn::ShiftRight<8>(word)), hn::Set(di, threshold));
    return hn::IfThenZeroElse(dropped, hn::Set(di, kept_bits));
  };
  const auto words01 = hn::Or(factor(c.w[0]), hn::ShiftLeft<32>(factor(c.w[1])));
  const auto words23 = hn::Or(factor(c.w[2]), hn::ShiftLeft<32>(factor(c.w[3])));
  hn::StoreInterleaved2(words01, words23, di, out);
}

// factor[n] = keep(first + n) / (1 - p) for n < count, the inverted-dropout factor of element
// first + n. keep is u >= p with u = (word >> 8) / 2^24, which is word >> 8 >= ceil(p 2^24)
// (both sides exact integers); element e is word e % 4 of block e / 4. 1 / (1 - p) is rounded to
// float once, as the reference does.
HWY_INLINE void dropout_factors(const DropoutSpec& dropout, std::uint64_t first, std::size_t count, float* factor) {
  const std::size_t lanes = hn::Lanes(WordTag());
  const auto threshold = static_cast<std::int64_t>(std::ceil(dropout.p * 16777216.0));
  const auto kept = static_cast<float>(1.0 / (1.0 - dropout.p));
  std::uint32_t kept_bits = 0;
  std::memcpy(&kept_bits, &kept, sizeof(kept));
  HWY_ALIGN std::int64_t bits[2 * HWY_MAX_BYTES / sizeof(std::int64_t)];
  const std::uint64_t end = first + count;
  for (std::uint64_t block = first >> 2; 4 * block < end; block += lanes) {
    block_factor_bits(philox_lanes(dropout.key, block), threshold, kept_bits, bits);
    // Elements [from, to) of these blocks are wanted.
    const std::uint64_t from = std::max(first, 4 * block), to = std::min(end, 4 * (block + lanes));
    std::memcpy(factor + (from - first), reinterpret_cast<const unsigned char*>(bits) + (from - 4 * block) * 4,
                (to - from) * sizeof(float));
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_DROPOUT_MASK_INL_H_
