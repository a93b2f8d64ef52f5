#include "core/philox.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace trepro {
namespace {

std::vector<double> draws(const PhiloxKey& key, std::uint64_t first = 0, int n = 64) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(philox_uniform(key, first + static_cast<std::uint64_t>(i)));
  return out;
}

// Known-answer vectors published with Random123 (kat_vectors, "philox4x32 10"): they pin the generator
// that the CPU and CUDA backends share, whatever version of the headers is installed.
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Kat {
    r123::Philox4x32::ctr_type ctr;
    r123::Philox4x32::key_type key;
    r123::Philox4x32::ctr_type expected;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       {{0xffffffffu, 0xffffffffu}},
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
  };
  for (const Kat& kat : kats) {
    r123::Philox4x32 rng;
    auto got = rng(kat.ctr, kat.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], kat.expected.v[i]) << "word " << i;
  }
}

// How (seed, stream, site, block) become counter and key is part of the checkpoint contract: a resumed
// run must draw the same masks, so the layout is pinned here word by word.
TEST(Philox, BlockLayout) {
  const PhiloxKey key{0x0123456789abcdefull, 0x0000000500000007ull, 3};
  const std::uint64_t block = 0x0000000200000001ull;
  r123::Philox4x32 rng;
  auto expected = rng({{0x00000001u, 0x00000002u, 3u, 0x00000007u}},
                      {{0x89abcdefu ^ static_cast<std::uint32_t>(5u * 0x9E3779B9u), 0x01234567u}});
  auto got = philox_block(key, block);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], expected.v[i]) << "word " << i;
  for (std::uint64_t e = 0; e < 4; ++e) {
    EXPECT_EQ(philox_uniform(key, 4 * block + e), (got.v[e] >> 8) / 16777216.0);
  }
}

TEST(Philox, UniformIsInUnitIntervalAndExactInFloat) {
  for (std::uint64_t seed : {0ull, 1ull, 0xffffffffffffffffull}) {
    for (double u : draws({seed, 7, 2}, 0, 4096)) {
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      ASSERT_EQ(static_cast<double>(static_cast<float>(u)), u);
    }
  }
}

TEST(Philox, IsDeterministic) {
  const PhiloxKey key{1234, 56, 7};
  EXPECT_EQ(draws(key), draws(key));
  EXPECT_EQ(philox_uniform(key, 1000003), philox_uniform(PhiloxKey{1234, 56, 7}, 1000003));
}

TEST(Philox, DiffersAcrossSeedStreamSiteAndElement) {
  const PhiloxKey base{1234, 56, 7};
  const std::vector<double> reference = draws(base);
  // The high halves of seed and stream must matter as much as the low ones.
  EXPECT_NE(draws({1235, 56, 7}), reference);
  EXPECT_NE(draws({1234 + (1ull << 32), 56, 7}), reference);
  EXPECT_NE(draws({1234, 57, 7}), reference);
  EXPECT_NE(draws({1234, 56 + (1ull << 32), 7}), reference);
  EXPECT_NE(draws({1234, 56, 8}), reference);
  EXPECT_NE(draws(base, 64), reference);
  EXPECT_NE(draws(base, 1ull << 34), reference);  // block index past 32 bits
  // Neighbouring elements within one block are different words, not copies.
  EXPECT_NE(reference[0], reference[1]);
}

TEST(Philox, DropoutKeepFrequencyMatchesOneMinusP) {
  constexpr std::uint64_t kN = 1000000;
  for (double p : {0.1, 0.5}) {
    SCOPED_TRACE(p);
    const PhiloxKey key{42, 3, 1};
    std::uint64_t kept = 0;
    for (std::uint64_t e = 0; e < kN; ++e) kept += dropout_keep(key, p, e);
    const double mean = kN * (1 - p);
    const double sd = std::sqrt(kN * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(kept), mean, 5 * sd);
  }
}

TEST(Philox, DropoutEdgeProbabilities) {
  const PhiloxKey key{9, 9, 9};
  for (std::uint64_t e = 0; e < 1000; ++e) {
    EXPECT_TRUE(dropout_keep(key, 0.0, e));
    EXPECT_FALSE(dropout_keep(key, 1.0, e));
  }
}

}  // namespace
}  // namespace trepro
