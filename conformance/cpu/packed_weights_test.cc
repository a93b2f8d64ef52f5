// Constant-weights scopes on the cpu backend (core/backend.h: begin_constant_weights): inside one,
// linear_forward reads each weight packed once (optimized/cpu/packed_weights.h) and gives the
// bits it gives outside; the outermost scope's end drops the packed copies, so a weight written
// after it is read afresh; an end without a begin is refused.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/philox.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::cpu {
namespace {

Tensor random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  Tensor t = Tensor::empty({rows, cols}, DType::f32);
  for (std::int64_t i = 0; i < rows * cols; ++i) t.data<float>()[i] = static_cast<float>(2 * philox_uniform({seed, 0, 0}, i) - 1);
  return t;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

class PackedWeightsTest : public ::testing::TestWithParam<std::int64_t> {
 protected:
  std::unique_ptr<Backend> backend = make_cpu_backend(GetParam(), 2);
  Tensor w = random_matrix(37, 300, 2);
  Tensor bias = random_matrix(1, 37, 3).view({37});

  std::vector<float> linear(const Tensor& x) {
    Tensor y = backend->empty({x.dim(0), w.dim(0)}, DType::f32);
    backend->linear_forward(x, w, &bias, Activation::none, y, nullptr);
    return values(y);
  }
};

TEST_P(PackedWeightsTest, InsideAScopeLinearGivesTheSameBits) {
  for (std::int64_t rows : {1, 4, 8, 9, 40}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    const Tensor x = random_matrix(rows, 300, 1);
    const std::vector<float> outside = linear(x);
    const ConstantWeights scope(*backend);
    EXPECT_EQ(linear(x), outside);
    EXPECT_EQ(linear(x), outside);  // from the packed copy made by the first call
  }
}

TEST_P(PackedWeightsTest, InsideAScopeTheWeightIsPackedOnce) {
  // Writing a weight inside a scope breaks its promise: the write is not seen, which shows that
  // the packed copy, not the weight, is read.
  const Tensor x = random_matrix(4, 300, 1);
  const ConstantWeights scope(*backend);
  const std::vector<float> before = linear(x);
  w.data<float>()[0] += 1.0f;
  EXPECT_EQ(linear(x), before);
}

TEST_P(PackedWeightsTest, TheOutermostEndDropsThePackedWeights) {
  const Tensor x = random_matrix(4, 300, 1);
  const std::vector<float> before = linear(x);
  {
    const ConstantWeights outer(*backend);
    {
      const ConstantWeights inner(*backend);
      linear(x);
    }
    w.data<float>()[0] += 1.0f;  // still inside the outer scope: its packed copy stays
    EXPECT_EQ(linear(x), before);
  }
  // After the scope the weight is read afresh, and packed afresh in a new scope.
  const std::vector<float> fresh = linear(x);
  EXPECT_NE(fresh, before);
  const ConstantWeights again(*backend);
  EXPECT_EQ(linear(x), fresh);
}

TEST_P(PackedWeightsTest, AnEndWithoutABeginIsRefused) {
  EXPECT_THROW(backend->end_constant_weights(), std::logic_error);
}

std::string target_test_name(const ::testing::TestParamInfo<std::int64_t>& info) { return target_name(info.param); }

INSTANTIATE_TEST_SUITE_P(AllTargets, PackedWeightsTest, ::testing::ValuesIn(compiled_targets()), target_test_name);

}  // namespace
}  // namespace trepro::cpu
