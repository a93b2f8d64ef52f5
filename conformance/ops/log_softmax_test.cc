#include <cmath>
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr std::int64_t kRows = 5, kVocab = 13;

Tensor log_softmax(Backend& backend, const Tensor& x) {
  Tensor y = backend.empty(x.shape(), backend.dtype());
  backend.log_softmax_forward(x, y);
  return y;
}

class LogSoftmaxTest : public BackendTest {};

// Each output is x - lse, lse a sum of V exponentials.
TEST_P(LogSoftmaxTest, ForwardMatchesReference) {
  const Tensor x = random_tensor(backend(), {kRows, kVocab}, 1, -4.0, 4.0);
  const Tensor expected = log_softmax(reference(), reference().upload(backend().download(x)));
  EXPECT_TRUE(all_close("y", backend(), log_softmax(backend(), x), reference(), expected,
                        tolerance(Check::op_vs_reference, backend().dtype(), kVocab)));
}

TEST_P(LogSoftmaxTest, RowsExponentiateToADistribution) {
  Backend& b = backend();
  const Tensor y = b.download(log_softmax(b, random_tensor(b, {kRows, kVocab}, 2, -4.0, 4.0)));
  const Tolerance tol = tolerance(Check::invariant, b.dtype(), kVocab);
  for (std::int64_t n = 0; n < kRows; ++n) {
    double sum = 0.0;
    for (std::int64_t v = 0; v < kVocab; ++v) sum += std::exp(y.at(n * kVocab + v));
    EXPECT_NEAR(sum, 1.0, tol.atol + tol.rtol) << "row " << n;
  }
}

// Logits around +-1e4 overflow (or underflow to log 0) unless the max is subtracted; shifting a
// row changes nothing. The logits are multiples of 1/8, exact in float even at 1e4, but lse
// itself is rounded at the magnitude of the logits: that bounds the float error.
TEST_P(LogSoftmaxTest, IsShiftInvariantAndDoesNotOverflow) {
  Backend& b = backend();
  const Tensor base_host = b.download(random_tensor(b, {kRows, kVocab}, 3, -4.0, 4.0));
  Tensor base = Tensor::empty({kRows, kVocab}, DType::f64),
         shifted = Tensor::empty({kRows, kVocab}, DType::f64);
  constexpr double kShift[kRows] = {1e4, -1e4, 1e4, -1e4, 0.0};
  for (std::int64_t n = 0; n < kRows; ++n) {
    for (std::int64_t v = 0; v < kVocab; ++v) {
      const double eighths = std::round(8.0 * base_host.at(n * kVocab + v)) / 8.0;
      base.set(n * kVocab + v, eighths);
      shifted.set(n * kVocab + v, eighths + kShift[n]);
    }
  }
  const Tensor y = log_softmax(b, b.upload(shifted));
  EXPECT_TRUE(b.all_finite(y));
  const double atol = 4 * unit_roundoff(b.dtype()) * 1e4;
  EXPECT_TRUE(all_close("log_softmax(x + shift)", b, y, b, log_softmax(b, b.upload(base)), {atol, 0.0}));
}

TEST_P(LogSoftmaxTest, RejectsBadShapesNamingTheTensor) {
  Backend& b = backend();
  const Tensor x = random_tensor(b, {kRows, kVocab}, 4);
  Tensor y_narrow = b.empty({kRows, kVocab - 1}, b.dtype());
  EXPECT_THAT([&] { b.log_softmax_forward(x, y_narrow); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("log_softmax_forward: y has shape [5, 12], expected [5, 13]")));
  const Tensor x3 = random_tensor(b, {2, 3, 4}, 5);
  Tensor y3 = b.empty({2, 3, 4}, b.dtype());
  EXPECT_THAT([&] { b.log_softmax_forward(x3, y3); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("log_softmax_forward: x has shape [2, 3, 4], expected rank 2")));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(LogSoftmaxTest);

}  // namespace
}  // namespace trepro::testing
