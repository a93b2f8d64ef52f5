// Every backend rejects the same bad call with the same message (one implementation of the
// checks: core/backend_checks.h), and a call rejected for its values (an index, a label out of
// range) writes nothing: the checks run before the op touches its outputs.
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/exception_message.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

class RejectedCallsTest : public BackendTest {};

// True when every element of a equals the one of b.
bool same_values(Backend& b, const Tensor& a, const Tensor& other) {
  Tensor ha = b.download(a), hb = b.download(other);
  for (std::int64_t i = 0; i < ha.numel(); ++i) {
    if (ha.at(i) != hb.at(i)) return false;
  }
  return true;
}

TEST_P(RejectedCallsTest, SelectBatchWithABadLaterIndexWritesNoRow) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1);
  Tensor indices = int_tensor(b, {2}, {1, 3});
  Tensor out = random_tensor(b, {2, 4}, 2), before = random_tensor(b, {2, 4}, 2);
  EXPECT_EQ(message_of<std::out_of_range>([&] { b.select_batch(x, indices, out); }),
            "select_batch: indices[1] = 3 is outside [0, 3)");
  EXPECT_TRUE(same_values(b, out, before));
}

TEST_P(RejectedCallsTest, CrossEntropyWithABadLabelWritesNoLse) {
  Backend& b = backend();
  Tensor logits = random_tensor(b, {3, 5}, 3);
  Tensor labels = int_tensor(b, {3}, {1, 2, 9});
  Tensor lse = random_tensor(b, {3}, 4), before = random_tensor(b, {3}, 4);
  EXPECT_EQ(message_of<std::out_of_range>(
                [&] { b.cross_entropy_forward(logits, labels, 0, 0.1, SmoothingForm::uniform, lse, nullptr); }),
            "cross_entropy_forward: labels[2] = 9 is outside [0, 5) and is not pad_id 0");
  EXPECT_TRUE(same_values(b, lse, before));
}

// Ids read from files are int64; every backend stores them as int32.
TEST_P(RejectedCallsTest, UploadRefusesAnIntegerOutsideInt32NamingItsElement) {
  Backend& b = backend();
  const Tensor above = Tensor::from_values({3}, DType::i64, {1, 2147483648.0, 5});
  EXPECT_EQ(message_of<std::out_of_range>([&] { b.upload(above); }),
            "upload: integer 2147483648 at element 1 does not fit in int32");
  const Tensor below = Tensor::from_values({2, 2}, DType::i64, {0, 0, 0, -2147483649.0});
  EXPECT_EQ(message_of<std::out_of_range>([&] { b.upload(below); }),
            "upload: integer -2147483649 at element 3 does not fit in int32");
  const Tensor extremes = Tensor::from_values({2}, DType::i64, {-2147483648.0, 2147483647.0});
  const Tensor uploaded = b.download(b.upload(extremes));
  EXPECT_EQ(uploaded.dtype(), DType::i32);
  EXPECT_EQ(uploaded.at(0), -2147483648.0);
  EXPECT_EQ(uploaded.at(1), 2147483647.0);
}

TEST_P(RejectedCallsTest, ShapeAndArgumentMessagesAreTheSameOnEveryBackend) {
  Backend& b = backend();
  const Tensor x = random_tensor(b, {2, 4}, 5), gamma = random_tensor(b, {4}, 6);
  Tensor y = b.empty({2, 4}, b.dtype()), stat = b.empty({2}, b.dtype());
  EXPECT_EQ(message_of<std::invalid_argument>(
                [&] { b.norm_forward(NormKind::layer, x, gamma, nullptr, 1e-5, y, stat, stat); }),
            "norm_forward: beta is required for layer norm");
  Tensor w = random_tensor(b, {3, 4}, 7), out = b.empty({2, 3}, b.dtype());
  EXPECT_EQ(message_of<std::invalid_argument>([&] { b.linear_forward(x, w, nullptr, Activation::gelu, out, nullptr); }),
            "linear_forward: pre is required when the activation is not none");
  Tensor r = random_tensor(b, {1, 2, 6}, 8), ry = b.empty({1, 2, 6}, b.dtype());
  EXPECT_EQ(message_of<std::invalid_argument>([&] { b.rope_forward(r, 2, 0, ry); }),
            "rope_forward: head width 3 is odd: rope rotates pairs");
  Tensor a = random_tensor(b, {1, 2, 4}, 9), cat = b.empty({1, 2, 4}, b.dtype());
  EXPECT_EQ(message_of<std::invalid_argument>([&] { b.concat_time(a, a, cat); }),
            "concat_time: out has shape [1, 2, 4], expected [1, 4, 4]");
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(RejectedCallsTest);

}  // namespace
}  // namespace trepro::testing
