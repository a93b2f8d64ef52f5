// The optimized CPU backend allocates no new memory in the steady state of a training step: from
// the second step on, every tensor's storage comes from its caching allocator's cache, on
// every compiled target (issue 5: "no allocation in the steady state of a training step").
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "model/trainer.h"
#include "model/transformer.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::cpu {
namespace {

class SteadyStateMemoryTest : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(SteadyStateMemoryTest, TrainingStepsAfterTheFirstAllocateNothingNew) {
  CpuBackend backend(GetParam(), 2);
  Config config;
  config.model = testing::tiny_config();
  config.model.dropout = 0.1;  // the dropout masks and their buffers too
  Transformer model(config.model, backend);
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  const Batch batch = testing::tiny_batch(config.model, 7);
  trainer.step(batch);
  trainer.step(batch);
  const CachingAllocator::Stats before = backend.context().allocator->stats();
  for (int step = 0; step < 3; ++step) trainer.step(batch);
  const CachingAllocator::Stats after = backend.context().allocator->stats();
  EXPECT_EQ(after.raw_allocations, before.raw_allocations);
  EXPECT_GT(after.cache_hits, before.cache_hits);
  EXPECT_EQ(after.evictions, before.evictions);
}

// Repeated inference forwards (bench/model_bench times them from the third on) come from the cache
// too. The largest tensor, the logits (600 MB for the paper-base model at 32 x 128), already from
// the second: a forward drops the previous logits before making its own, so it gets their block.
TEST_P(SteadyStateMemoryTest, ForwardsReuseTheirMemoryTheLogitsFromTheSecond) {
  CpuBackend backend(GetParam(), 2);
  ModelConfig config = testing::tiny_config();
  config.vocab_size = 3001;  // logits in a size bin of their own (core/caching_allocator.h)
  Transformer model(config, backend);
  model.initialize(1);
  const Batch batch = testing::tiny_batch(config, 7);
  const float* first_logits = model.forward(batch).data<float>();
  EXPECT_EQ(model.forward(batch).data<float>(), first_logits);
  const CachingAllocator::Stats before = backend.context().allocator->stats();
  for (int call = 0; call < 3; ++call) model.forward(batch);
  const CachingAllocator::Stats after = backend.context().allocator->stats();
  EXPECT_EQ(after.raw_allocations, before.raw_allocations);
  EXPECT_GT(after.cache_hits, before.cache_hits);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, SteadyStateMemoryTest, ::testing::ValuesIn(compiled_targets()),
                         [](const ::testing::TestParamInfo<std::int64_t>& info) { return target_name(info.param); });

}  // namespace
}  // namespace trepro::cpu
