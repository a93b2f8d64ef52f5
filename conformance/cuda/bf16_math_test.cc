// core/bf16.h, the float <-> bfloat16 conversion of the bf16 mode: known bit patterns, ties to
// even, NaN and Inf, subnormals, overflow to Inf, and round to nearest checked against the two
// neighbouring bfloat16 values computed independently (in double).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/philox.h"
#include "core/bf16.h"

namespace trepro::testing {
namespace {

float from_bits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

TEST(Bf16Math, ExactValuesKeepTheirBits) {
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(0.5f), 0x3F00);
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-7f), 0x3F81);  // the next bfloat16 after 1
  EXPECT_EQ(bf16_to_float(0x3F81), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_to_float(0x7F7F), 0x1.FEp127f);     // the largest finite bfloat16
  EXPECT_EQ(bf16_to_float(0x0080), 0x1p-126f);       // the smallest normal
  EXPECT_EQ(bf16_to_float(0x0001), 0x1p-133f);       // the smallest subnormal
}

TEST(Bf16Math, RoundsToNearest) {
  // pi = 0x40490FDB: the dropped half 0x0FDB is below halfway, so it truncates to 3.140625.
  EXPECT_EQ(float_to_bf16(3.14159265f), 0x4049);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  // 1/3 = 0x3EAAAAAB: the dropped half 0xAAAB is above halfway, so it rounds up.
  EXPECT_EQ(float_to_bf16(1.0f / 3.0f), 0x3EAB);
  EXPECT_EQ(float_to_bf16(from_bits(0x3F808001)), 0x3F81);  // just above the tie: up
  EXPECT_EQ(float_to_bf16(from_bits(0x3F807FFF)), 0x3F80);  // just below the tie: down
}

TEST(Bf16Math, TiesGoToEven) {
  // 1 + 2^-8 lies halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): even wins.
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 0x3F81 (odd) and 0x3F82 (even): up to even.
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(float_to_bf16(-(1.0f + 0x1p-8f)), 0xBF80);
  EXPECT_EQ(float_to_bf16(-(1.0f + 3 * 0x1p-8f)), 0xBF82);
}

TEST(Bf16Math, InfinitiesAndNaNs) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_bf16(inf), 0x7F80);
  EXPECT_EQ(float_to_bf16(-inf), 0xFF80);
  EXPECT_TRUE(std::isinf(bf16_to_float(0x7F80)));
  // A quiet NaN, and signaling NaNs whose payload is only in the dropped half (truncation would
  // turn them into Inf): all stay NaN, keeping the sign.
  for (const std::uint32_t nan : {0x7FC00000u, 0x7F800001u, 0x7F80FFFFu, 0xFF800001u, 0x7FFFFFFFu}) {
    SCOPED_TRACE(nan);
    const Bf16Bits b = float_to_bf16(from_bits(nan));
    EXPECT_TRUE(std::isnan(bf16_to_float(b)));
    EXPECT_EQ(b >> 15, nan >> 31);
  }
}

TEST(Bf16Math, OverflowRoundsToInfinity) {
  // Halfway between the largest finite bfloat16 (0x7F7F) and 2^128 is 0x7F7F8000: a tie with an
  // odd kept half, so it rounds up to Inf, as does everything above it up to FLT_MAX.
  EXPECT_EQ(float_to_bf16(from_bits(0x7F7F8000)), 0x7F80);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::max()), 0xFF80);
  EXPECT_EQ(float_to_bf16(from_bits(0x7F7F7FFF)), 0x7F7F);  // just below: the largest finite
}

TEST(Bf16Math, SubnormalsRoundWithinTheSubnormals) {
  EXPECT_EQ(float_to_bf16(from_bits(0x00000001)), 0x0000);  // the smallest float subnormal: to +0
  EXPECT_EQ(float_to_bf16(from_bits(0x80000001)), 0x8000);  // and to -0
  EXPECT_EQ(float_to_bf16(from_bits(0x00008000)), 0x0000);  // tie, even kept half: down
  EXPECT_EQ(float_to_bf16(from_bits(0x00018000)), 0x0002);  // tie, odd kept half: up
  EXPECT_EQ(float_to_bf16(from_bits(0x00008001)), 0x0001);  // above the tie
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(float_to_bf16(from_bits(0x007FFFFF)), 0x0080);
}

TEST(Bf16Math, EveryBf16RoundTrips) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float x = bf16_to_float(static_cast<Bf16Bits>(b));
    if (std::isnan(x)) continue;  // NaNs are quieted (checked above)
    ASSERT_EQ(float_to_bf16(x), b) << "bf16 0x" << std::hex << b;
  }
}

// Round to nearest, ties to even, against the two bfloat16 neighbours of x computed from the
// exponent in double: lower = x truncated to 8 significant bits, upper = lower + one bf16 ulp.
TEST(Bf16Math, RandomFloatsRoundToTheNearestNeighbour) {
  // Uniform bit patterns: every exponent equally often, so subnormals and values near overflow
  // are drawn too.
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const std::uint32_t bits = philox_block({7, 0, 0}, i).v[0];
    const float x = from_bits(bits);
    if (!std::isfinite(x) || x == 0.0f) continue;
    const double a = std::abs(static_cast<double>(x));
    // bf16 spacing at a: 2^(e - 7) for normal values, 2^-133 in the subnormal range.
    const double ulp = a >= 0x1p-126 ? std::ldexp(1.0, std::ilogb(a) - 7) : 0x1p-133;
    const double lower = std::floor(a / ulp) * ulp, upper = lower + ulp;
    const bool lower_even = static_cast<std::uint64_t>(lower / ulp) % 2 == 0;
    double nearest = a - lower < upper - a ? lower : upper - a < a - lower ? upper : lower_even ? lower : upper;
    if (nearest > 0x1.FEp127) nearest = std::numeric_limits<double>::infinity();
    const double got = std::abs(static_cast<double>(round_to_bf16(x)));
    ASSERT_EQ(got, nearest) << "x = " << x << " (0x" << std::hex << bits << ")";
    ASSERT_EQ(std::signbit(round_to_bf16(x)), std::signbit(x));
  }
}

}  // namespace
}  // namespace trepro::testing
