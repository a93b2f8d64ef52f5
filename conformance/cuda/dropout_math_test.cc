// dropout_math.h: the kernels' masks are bit-identical to every other backend's (core/philox.h):
// the one-Philox-per-four-elements path equals the per-element path, and both equal the
// reference's dropout_forward, including partial last groups.
#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/dropout_math.h"

namespace trepro::testing {
namespace {

TEST(DropoutMath, GroupAndElementFactorsEqualReferenceMask) {
  HostMath h;
  Backend& ref = *h.reference;
  for (double p : {0.1, 0.5, 0.9}) {
    for (std::int64_t n : {1, 3, 4, 5, 1023}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " n=" + std::to_string(n));
      const DropoutSpec dropout{p, PhiloxKey{42, 7, 3}};
      Tensor ones = ref.empty({n}, DType::f64), y = ref.empty({n}, DType::f64);
      ref.fill(ones, 1.0);
      ref.dropout_forward(ones, dropout, y);
      const float kept = static_cast<float>(1 / (1 - p));
      for (std::int64_t group = 0; group < (n + 3) / 4; ++group) {
        float factors[4];
        cuda::dropout_group_factors(dropout.key, p, kept, static_cast<std::uint64_t>(group), factors);
        for (int lane = 0; lane < 4 && 4 * group + lane < n; ++lane) {
          const std::int64_t i = 4 * group + lane;
          const float single = cuda::dropout_factor(dropout.key, p, kept, static_cast<std::uint64_t>(i));
          EXPECT_EQ(factors[lane], single) << "element " << i;
          EXPECT_EQ(single == 0.0f, y.at(i) == 0.0) << "element " << i;  // same mask
          if (single != 0.0f) EXPECT_NEAR(single, y.at(i), 1e-7 * y.at(i)) << "element " << i;
        }
      }
    }
  }
}

TEST(DropoutMath, AttentionElementIndexIsRowMajorBHTqTk) {
  // ((b * H + h) * Tq + i) * Tk + j, core/backend.h; consecutive j are consecutive elements.
  EXPECT_EQ(cuda::attention_dropout_element(0, 0, 3, 5, 0, 7, 0), 0u);
  EXPECT_EQ(cuda::attention_dropout_element(0, 0, 3, 5, 0, 7, 6), 6u);
  EXPECT_EQ(cuda::attention_dropout_element(0, 0, 3, 5, 1, 7, 0), 7u);
  EXPECT_EQ(cuda::attention_dropout_element(0, 1, 3, 5, 0, 7, 0), 35u);
  EXPECT_EQ(cuda::attention_dropout_element(1, 0, 3, 5, 0, 7, 0), 105u);
  EXPECT_EQ(cuda::attention_dropout_element(1, 2, 3, 5, 4, 7, 6), 209u);  // the last of 2*3*5*7
}

}  // namespace
}  // namespace trepro::testing
