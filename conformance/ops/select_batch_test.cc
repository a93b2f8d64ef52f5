#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

class SelectBatchTest : public BackendTest {};

TEST_P(SelectBatchTest, GathersRowsInIndexOrderWithRepeats) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 2, 4}, 5);
  Tensor indices = int_tensor(b, {4}, {2, 0, 2, 1});
  Tensor out = b.empty({4, 2, 4}, b.dtype());
  b.select_batch(x, indices, out);
  Tensor hx = b.download(x), ho = b.download(out);
  const int source[] = {2, 0, 2, 1};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 8; ++j) EXPECT_EQ(ho.at(i * 8 + j), hx.at(source[i] * 8 + j)) << "row " << i;
  }
}

TEST_P(SelectBatchTest, RejectsAnIndexOutOfRange) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 5);
  Tensor indices = int_tensor(b, {2}, {0, 3});
  Tensor out = b.empty({2, 4}, b.dtype());
  try {
    b.select_batch(x, indices, out);
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("select_batch: indices[1] = 3 is outside [0, 3)"));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(SelectBatchTest);

}  // namespace
}  // namespace trepro::testing
