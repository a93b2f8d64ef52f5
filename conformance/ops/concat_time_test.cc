#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

class ConcatTimeTest : public BackendTest {};

TEST_P(ConcatTimeTest, AppendsEachBatchRowAlongTime) {
  Backend& b = backend();
  Tensor a = random_tensor(b, {3, 2, 5}, 1);
  Tensor tail = random_tensor(b, {3, 1, 5}, 2);
  Tensor out = b.empty({3, 3, 5}, b.dtype());
  b.concat_time(a, tail, out);
  Tensor ha = b.download(a), ht = b.download(tail), ho = b.download(out);
  for (std::int64_t row = 0; row < 3; ++row) {
    for (std::int64_t t = 0; t < 3; ++t) {
      for (std::int64_t i = 0; i < 5; ++i) {
        const double expected = t < 2 ? ha.at((row * 2 + t) * 5 + i) : ht.at(row * 5 + i);
        EXPECT_EQ(ho.at((row * 3 + t) * 5 + i), expected) << "row " << row << " t " << t << " i " << i;
      }
    }
  }
}

TEST_P(ConcatTimeTest, EmptyCacheGivesTheNewRows) {
  Backend& b = backend();
  Tensor a = b.empty({2, 0, 4}, b.dtype());
  Tensor tail = random_tensor(b, {2, 3, 4}, 3);
  Tensor out = b.empty({2, 3, 4}, b.dtype());
  b.concat_time(a, tail, out);
  EXPECT_TRUE(all_close("out", b, out, b, tail, {0.0, 0.0}));
}

TEST_P(ConcatTimeTest, RejectsMismatchedWidths) {
  Backend& b = backend();
  Tensor a = random_tensor(b, {2, 2, 4}, 1);
  Tensor tail = random_tensor(b, {2, 1, 5}, 2);
  Tensor out = b.empty({2, 3, 4}, b.dtype());
  try {
    b.concat_time(a, tail, out);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("concat_time: b has shape [2, 1, 5]"));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ConcatTimeTest);

}  // namespace
}  // namespace trepro::testing
