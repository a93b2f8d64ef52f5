#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

struct Case {
  std::int64_t batch, time, heads, d, offset;
};

std::string describe(const Case& c) {
  return "B " + std::to_string(c.batch) + " T " + std::to_string(c.time) + " H " + std::to_string(c.heads) +
         " D " + std::to_string(c.d) + " offset " + std::to_string(c.offset);
}

// 1 and 4 heads, odd T, the smallest head, and a decoding step far into a sequence.
std::vector<Case> cases() { return {{2, 5, 1, 6, 0}, {1, 3, 4, 8, 7}, {3, 1, 4, 2, 1000}}; }

Tensor rope(Backend& backend, const Tensor& x, std::int64_t heads, std::int64_t offset) {
  Tensor y = backend.empty(x.shape(), backend.dtype());
  backend.rope_forward(x, static_cast<int>(heads), offset, y);
  return y;
}

Tensor rope_grad(Backend& backend, const Tensor& dy, std::int64_t heads, std::int64_t offset) {
  Tensor dx = backend.empty(dy.shape(), backend.dtype());
  backend.rope_backward(dy, static_cast<int>(heads), offset, dx);
  return dx;
}

// The same values on another backend (float converts to double exactly).
Tensor copy_to(Backend& to, Backend& from, const Tensor& x) { return to.upload(from.download(x)); }

class RopeTest : public BackendTest {};

// Each output is a 2-term sum: x_i cos - x_j sin.
TEST_P(RopeTest, ForwardAndBackwardMatchReference) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    const Tensor x = random_tensor(backend(), {c.batch, c.time, c.heads * c.d}, 1);
    const Tensor x_ref = copy_to(reference(), backend(), x);
    const Tolerance tol = tolerance(Check::op_vs_reference, backend().dtype(), 2);
    EXPECT_TRUE(all_close("y", backend(), rope(backend(), x, c.heads, c.offset), reference(),
                          rope(reference(), x_ref, c.heads, c.offset), tol));
    EXPECT_TRUE(all_close("dx", backend(), rope_grad(backend(), x, c.heads, c.offset), reference(),
                          rope_grad(reference(), x_ref, c.heads, c.offset), tol));
  }
}

// Rotate-half: element i pairs with i + D/2, and pair i turns by p / 10000^(2i/D). With D = 4
// at position 3: e_0 -> (cos 3, 0, sin 3, 0) and e_1 -> (0, cos 0.03, 0, sin 0.03).
TEST_P(RopeTest, PairsElementIWithIPlusHalfTheHead) {
  Backend& b = backend();
  const Tensor e0 =
      b.download(rope(b, b.upload(Tensor::from_values({1, 1, 4}, DType::f64, {1, 0, 0, 0})), 1, 3));
  const Tensor e1 =
      b.download(rope(b, b.upload(Tensor::from_values({1, 1, 4}, DType::f64, {0, 1, 0, 0})), 1, 3));
  const double tol = tolerance(Check::invariant, b.dtype()).atol;
  const double expected0[] = {std::cos(3.0), 0, std::sin(3.0), 0};
  const double expected1[] = {0, std::cos(0.03), 0, std::sin(0.03)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(e0.at(i), expected0[i], tol) << "e_0, element " << i;
    EXPECT_NEAR(e1.at(i), expected1[i], tol) << "e_1, element " << i;
  }
}

TEST_P(RopeTest, PositionZeroIsTheIdentityAndBackwardUndoesForward) {
  Backend& b = backend();
  const Tensor x = random_tensor(b, {2, 1, 8}, 2);
  EXPECT_TRUE(all_close("rope(x, 0)", b, rope(b, x, 2, 0), b, x, tolerance(Check::invariant, b.dtype(), 2)));
  const Tensor y = random_tensor(b, {2, 4, 8}, 3);
  EXPECT_TRUE(all_close("R(-theta) R(theta) x", b, rope_grad(b, rope(b, y, 2, 9), 2, 9), b, y,
                        tolerance(Check::invariant, b.dtype(), 4)));
}

// A rotation keeps the norm of each (x_i, x_{i+D/2}) pair.
TEST_P(RopeTest, PreservesTheNormOfEveryPair) {
  Backend& b = backend();
  const std::int64_t heads = 2, d = 6, time = 4;
  const Tensor x = b.download(random_tensor(b, {1, time, heads * d}, 4));
  const Tensor y = b.download(rope(b, b.upload(x), heads, 11));
  const Tolerance tol = tolerance(Check::invariant, b.dtype(), 4);
  for (std::int64_t t = 0; t < time; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < d / 2; ++i) {
        const std::int64_t first = (t * heads + h) * d + i, second = first + d / 2;
        const double before = x.at(first) * x.at(first) + x.at(second) * x.at(second);
        const double after = y.at(first) * y.at(first) + y.at(second) * y.at(second);
        EXPECT_NEAR(after, before, tol.atol + tol.rtol * before) << "t " << t << " h " << h << " pair " << i;
      }
    }
  }
}

// <rope(q, m), rope(k, n)> = <q, R(n - m) k>: it depends on m - n only (per head), which is
// what makes rope a relative position encoding.
TEST_P(RopeTest, ScoreDependsOnlyOnTheRelativePosition) {
  Backend& b = backend();
  const std::int64_t heads = 2, d = 8;
  const Tensor q = random_tensor(b, {1, 1, heads * d}, 5), k = random_tensor(b, {1, 1, heads * d}, 6);
  const auto scores = [&](std::int64_t m, std::int64_t n) {
    const Tensor rq = b.download(rope(b, q, heads, m)), rk = b.download(rope(b, k, heads, n));
    std::vector<double> per_head(heads, 0.0);
    for (std::int64_t i = 0; i < heads * d; ++i) per_head[i / d] += rq.at(i) * rk.at(i);
    return per_head;
  };
  const std::vector<double> base = scores(3, 0);
  const Tolerance tol = tolerance(Check::invariant, b.dtype(), d);
  for (const auto& [m, n] : {std::pair{5, 2}, std::pair{10, 7}, std::pair{103, 100}}) {
    const std::vector<double> shifted = scores(m, n);
    for (std::int64_t h = 0; h < heads; ++h) {
      EXPECT_NEAR(shifted[h], base[h], tol.atol + tol.rtol * std::abs(base[h])) << "m " << m << " n " << n;
    }
  }
  const std::vector<double> other = scores(4, 0);
  EXPECT_GT(std::abs(other[0] - base[0]) + std::abs(other[1] - base[1]), 1e-3) << "m - n must matter";
}

TEST_P(RopeTest, RejectsBadShapesNamingTheTensor) {
  Backend& b = backend();
  const Tensor x = random_tensor(b, {1, 2, 6}, 7);
  Tensor y = b.empty({1, 2, 6}, b.dtype());
  EXPECT_THAT([&] { b.rope_forward(x, 2, 0, y); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("rope_forward: head width 3 is odd")));
  EXPECT_THAT(
      [&] { b.rope_forward(x, 4, 0, y); },
      ThrowsMessage<std::invalid_argument>(HasSubstr("rope_forward: x width 6 is not divisible by heads 4")));
  Tensor y_long = b.empty({1, 3, 6}, b.dtype());
  EXPECT_THAT([&] { b.rope_forward(x, 1, 0, y_long); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("rope_forward: y has shape [1, 3, 6], expected [1, 2, 6]")));
  EXPECT_THAT([&] { b.rope_forward(x, 1, -2, y); },
              ThrowsMessage<std::out_of_range>(HasSubstr("rope_forward: position offset -2 is negative")));
  EXPECT_THAT([&] { b.rope_backward(x, 1, 0, y_long); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("rope_backward: dx has shape [1, 3, 6], expected [1, 2, 6]")));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(RopeTest);

// Central differences of L = <r, rope(x)>.
class RopeGradientTest : public BackendTest {};

TEST_P(RopeGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    Tensor x = random_tensor(b, {c.batch, c.time, c.heads * c.d}, 8);
    const Tensor r = random_tensor(b, x.shape(), 9);
    const Tensor dx = rope_grad(b, r, c.heads, c.offset);
    EXPECT_TRUE(check_gradient(
        "dx", b, x, dx, [&] { return dot(b, r, rope(b, x, c.heads, c.offset)); }, 512));
  }
}

TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(RopeGradientTest);

}  // namespace
}  // namespace trepro::testing
