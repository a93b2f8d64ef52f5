// softmax_math.h, the running softmax of the attention, cross-entropy and log-softmax kernels:
// a row folded in pieces and merged gives the reference's log-sum-exp whatever the split;
// masked (-inf) scores contribute nothing and never make a NaN.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/softmax_math.h"

namespace trepro::testing {
namespace {

using State = cuda::SoftmaxState<float>;
constexpr float kInf = std::numeric_limits<float>::infinity();

State fold(const std::vector<float>& values, std::size_t begin, std::size_t end) {
  State s;
  for (std::size_t i = begin; i < end; ++i) cuda::softmax_add(s, values[i]);
  return s;
}

TEST(SoftmaxMath, PiecewiseLseMatchesReferenceLogSoftmax) {
  HostMath h;
  Backend& ref = *h.reference;
  const std::int64_t rows = 4, length = 300;
  Tensor x = h.random({rows, length}, 1, -30.0, 30.0);  // wide range: the rescaling matters
  Tensor y = ref.empty({rows, length}, DType::f64);
  ref.log_softmax_forward(x, y);
  const std::vector<float> xs = floats(x);
  for (std::size_t piece : {1u, 7u, 32u, 300u}) {
    SCOPED_TRACE("piece " + std::to_string(piece));
    std::vector<float> lse(rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::vector<float> row(xs.begin() + r * length, xs.begin() + (r + 1) * length);
      State total;
      for (std::size_t begin = 0; begin < row.size(); begin += piece) {
        total = cuda::softmax_merge(total, fold(row, begin, std::min(row.size(), begin + piece)));
      }
      lse[r] = cuda::softmax_lse(total);
    }
    // lse = x - log_softmax(x), from any column of the reference.
    std::vector<double> expected;
    for (std::int64_t r = 0; r < rows; ++r) expected.push_back(x.at(r * length) - y.at(r * length));
    Tensor expected_lse = ref.upload(Tensor::from_values({rows}, DType::f64, expected));
    EXPECT_TRUE(all_close("lse", *h.holder, h.result({rows}, lse), ref, expected_lse,
                          tolerance(Check::op_vs_reference, DType::f32, length)));
  }
}

TEST(SoftmaxMath, MaskedScoresContributeNothing) {
  const std::vector<float> plain = {0.5f, -1.0f, 2.0f};
  const std::vector<float> masked = {-kInf, 0.5f, -kInf, -1.0f, 2.0f, -kInf};
  const State a = fold(plain, 0, plain.size()), b = fold(masked, 0, masked.size());
  EXPECT_EQ(a.max, b.max);
  EXPECT_FLOAT_EQ(a.sum, b.sum);
  EXPECT_FLOAT_EQ(cuda::softmax_lse(a), cuda::softmax_lse(b));
}

TEST(SoftmaxMath, AllMaskedIsMinusInfinityWithoutNaN) {
  const std::vector<float> masked = {-kInf, -kInf};
  const State s = fold(masked, 0, masked.size());
  EXPECT_EQ(s.sum, 0.0f);
  EXPECT_EQ(cuda::softmax_lse(s), -kInf);
  const State merged = cuda::softmax_merge(s, State{});
  EXPECT_EQ(merged.sum, 0.0f);
  EXPECT_FALSE(std::isnan(merged.max));
  State empty;
  EXPECT_EQ(cuda::softmax_rescale(empty, 3.0f), 0.0f);  // nothing accumulated to rescale
  EXPECT_EQ(cuda::softmax_weight(-kInf, -kInf), 0.0f);
  // Merging an empty state into a full one changes nothing.
  const State full = fold({1.0f, 2.0f}, 0, 2);
  const State same = cuda::softmax_merge(full, s);
  EXPECT_EQ(same.max, full.max);
  EXPECT_EQ(same.sum, full.sum);
}

}  // namespace
}  // namespace trepro::testing
