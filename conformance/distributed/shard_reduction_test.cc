// The pieces of data-parallel determinism that one process can check: the summation tree's
// shape depends on W alone, the shard plan deals batches as documented, the reduction adds in
// that tree (not left to right), and every batch of a step, whichever shard or rank runs it,
// draws its own dropout masks. The mpirun jobs of this folder check N ranks against one.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "conformance/support/backend_fixture.h"
#include "distributed/fixed_tree_sum.h"
#include "distributed/gradient_reduction.h"
#include "distributed/single_process_communicator.h"
#include "experiments/data/token_batches.h"
#include "model/trainer.h"

namespace trepro::testing {
namespace {

std::string tree_of(int leaves) {
  auto merge = [](std::string& sum, const std::string& x) { sum = "(" + sum + "+" + x + ")"; };
  FixedTreeSum<std::string, decltype(merge)> tree(merge);
  for (int i = 0; i < leaves; ++i) tree.push(std::to_string(i));
  return tree.finish();
}

TEST(FixedTreeSum, TheShapeIsABinaryCounterFoldedFromTheRight) {
  EXPECT_EQ(tree_of(1), "0");
  EXPECT_EQ(tree_of(3), "((0+1)+2)");
  EXPECT_EQ(tree_of(4), "((0+1)+(2+3))");
  EXPECT_EQ(tree_of(6), "(((0+1)+(2+3))+(4+5))");
  EXPECT_EQ(tree_of(7), "(((0+1)+(2+3))+((4+5)+6))");
}

TEST(ShardPlan, DealsBatchesRoundRobinAndShardsInRankBlocks) {
  const ShardPlan plan(4, 2, 1);
  EXPECT_EQ(plan.shards_per_rank(), 2);
  EXPECT_EQ(plan.first_shard(), 2);
  EXPECT_EQ(plan.batches_of_shard(1, 7), (std::vector<std::int64_t>{1, 5}));
  EXPECT_EQ(plan.batches_of_shard(3, 3), (std::vector<std::int64_t>{}));  // a short last step
  for (std::int64_t j : {0, 1, 4, 5}) EXPECT_EQ(plan.rank_of_batch(j), 0) << j;
  for (std::int64_t j : {2, 3, 6, 7}) EXPECT_EQ(plan.rank_of_batch(j), 1) << j;
}

TEST(ShardPlan, RanksThatDoNotDivideTheReplicasAreRefused) {
  try {
    ShardPlan(3, 2, 0);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "train.replicas 3 is not a multiple of the 2 ranks of this job (the ranks must divide the virtual shards)");
  }
}

class ShardReduction : public BackendTest {};

// 1 + big - big + 1 with big beyond the dtype's integers (2^24 in float, 2^53 in double): the
// tree ((1 + big) + (-big + 1)) gives 0, left to right gives 1.
TEST_P(ShardReduction, AddsTheShardsInTheFixedTree) {
  const double big = backend().dtype() == DType::f32 ? 1e8 : 1e17;
  SingleProcessCommunicator alone;
  const ShardPlan plan(4, 1, 0);
  std::vector<Tensor> leaves;
  for (double value : {1.0, big, -big, 1.0}) {
    Tensor leaf = backend().empty({3}, backend().dtype());
    backend().fill(leaf, value);
    leaves.push_back(leaf);
  }
  const Tensor sum = backend().download(reduce_shard_gradients(backend(), alone, plan, leaves));
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(sum.at(i), 0.0) << i;
}

Config dropout_config(double dropout, std::int64_t replicas) {
  Config config;
  ModelConfig& m = config.model;
  m.vocab_size = 13;
  m.d_model = 16;
  m.heads = 2;
  m.d_ff = 32;
  m.encoder_layers = 1;
  m.decoder_layers = 1;
  m.max_len = 16;
  m.dropout = dropout;
  config.train.seed = 3;
  config.train.replicas = replicas;
  config.train.update_freq = replicas;
  validate(config, "<dropout test config>");
  return config;
}

// With the same masks in both copies the gradient of a step over [b, b] is that of [b] up to
// rounding (two halves of the same sum); different masks move it by far more than rounding.
double grad_norm_of(Backend& backend, const Config& config, std::vector<Batch> batches) {
  Transformer model(config.model, backend);
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  return trainer.step(batches).grad_norm;
}

double doubling_change(Backend& backend, const Config& config, const Batch& b) {
  const double single = grad_norm_of(backend, config, {b});
  return std::abs(grad_norm_of(backend, config, {b, b}) - single) / single;
}

TEST_P(ShardReduction, EveryBatchOfAStepDrawsItsOwnDropoutMasks) {
  const std::vector<TokenPair> pairs = {{{4, 5, 6, 7}, {8, 9, 10}}, {{10, 11, 5}, {12, 4, 5, 6}}};
  const Batch b = make_batch(pairs, {0, 1}, 0, 1, 2);
  // The control: without dropout, doubling the batch changes only the rounding.
  EXPECT_LT(doubling_change(backend(), dropout_config(0.0, 1), b), 1e-5);
  // Two micro-batches of one shard, and two shards (which ranks run under mpirun).
  for (std::int64_t replicas : {1, 2}) {
    EXPECT_GT(doubling_change(backend(), dropout_config(0.3, replicas), b), 1e-3) << "replicas " << replicas;
  }
}

// A rank may leave out the batches other ranks run (their label counts come from those ranks),
// never one of its own.
TEST_P(ShardReduction, ARankMustBeGivenEveryBatchItRuns) {
  const Config config = dropout_config(0.0, 2);
  Transformer model(config.model, backend());
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  const std::vector<TokenPair> pairs = {{{4, 5, 6}, {8, 9}}};
  std::vector<std::optional<Batch>> batches = {make_batch(pairs, {0}, 0, 1, 2), std::nullopt};
  try {
    trainer.step_sharded(batches);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "Trainer::step: batch 1 of the step is run by rank 0 of 1, which was not given it");
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ShardReduction);

}  // namespace
}  // namespace trepro::testing
