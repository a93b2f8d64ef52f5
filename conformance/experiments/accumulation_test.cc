// Gradient accumulation and the step's guards (model/trainer.h Trainer::step over several
// batches): update_freq batches make one step equal to a step on their union, clipping is off
// unless asked for, and a NaN (in a weight, or injected into one gradient by a decorating
// backend) stops the step naming the step and the tensor, before any parameter changes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tolerances.h"
#include "core/forwarding_backend.h"
#include "experiments/data/token_batches.h"
#include "model/trainer.h"

namespace trepro::testing {
namespace {

Config small_config() {
  Config config;
  ModelConfig& m = config.model;
  m.vocab_size = 13;
  m.d_model = 16;
  m.heads = 2;
  m.d_ff = 32;
  m.encoder_layers = 1;
  m.decoder_layers = 1;
  m.max_len = 16;
  m.dropout = 0.0;  // the masks of split and union batches are keyed differently
  config.train.schedule.kind = ScheduleKind::constant;
  config.train.schedule.warmup = 0;
  config.train.optimizer.lr = 1e-2;
  config.train.label_smoothing = 0.1;
  config.train.seed = 3;
  validate(config, "<accumulation test config>");
  return config;
}

// Pairs of different lengths, so the split batches pad differently from their union.
std::vector<TokenPair> pairs() {
  return {{{4, 5, 6, 7}, {8, 9}},          {{10, 11}, {12, 4, 5, 6, 7}}, {{6}, {7, 8, 9}},
          {{9, 8, 7, 6, 5, 4}, {11}},      {{12, 12}, {10, 10, 10}}};
}

Batch batch_of(const std::vector<std::size_t>& rows) { return make_batch(pairs(), rows, 0, 1, 2); }

class Accumulation : public BackendTest {};

TEST_P(Accumulation, SplitBatchesTakeTheStepOfTheirUnion) {
  const Config config = small_config();
  Transformer split_model(config.model, backend()), union_model(config.model, backend());
  split_model.initialize(config.train.seed);
  union_model.initialize(config.train.seed);
  Trainer split(split_model, config), whole(union_model, config);
  const StepResult a = split.step(std::vector<Batch>{batch_of({0, 1, 2}), batch_of({3, 4})});
  const StepResult b = whole.step(batch_of({0, 1, 2, 3, 4}));
  ASSERT_EQ(a.tokens, b.tokens);
  // The loss and every gradient are sums over the same tokens in another order and grouping. The
  // batch shapes differ too, so a backend may sum each matrix product's inner terms (at most d_ff)
  // in another order as well (Eigen picks its product kernel by size): to first order the errors
  // of the ~27 ops on a token's path (1+1 layers) add to the token sum's. K = tokens x d_ff is of
  // that order for these ~20 tokens (tokens + 27 x d_ff is larger), not a loosening of the token
  // sum's bound alone.
  const Tolerance tol = tolerance(Check::invariant, backend().dtype(), a.tokens * config.model.d_ff);
  EXPECT_NEAR(a.loss, b.loss, tol.atol + tol.rtol * std::abs(b.loss));
  EXPECT_NEAR(a.grad_norm, b.grad_norm, tol.atol + tol.rtol * b.grad_norm);
  EXPECT_EQ(a.learning_rate, b.learning_rate);
  EXPECT_EQ(split.steps_done(), 1);
}

// Data-parallel shards in one process (train.replicas W: batch j to shard j mod W, the shard sums
// added in the fixed tree): the step is still the union's, whatever W, so a per-shard token count,
// a division by W or a norm taken before the reduction shows here. (The mpirun tests compare
// rank counts at one W and cannot see those.)
TEST_P(Accumulation, ShardsTakeTheStepOfTheirUnion) {
  for (const std::int64_t replicas : {2, 4}) {
    SCOPED_TRACE("train.replicas " + std::to_string(replicas));
    Config config = small_config();
    config.train.replicas = replicas;
    config.train.update_freq = 4;
    validate(config, "<accumulation test config>");
    Transformer sharded_model(config.model, backend()), union_model(config.model, backend());
    sharded_model.initialize(config.train.seed);
    union_model.initialize(config.train.seed);
    Trainer sharded(sharded_model, config), whole(union_model, small_config());
    // 9, 4, 2 and 4 target tokens: shards of unequal weight.
    const StepResult a =
        sharded.step(std::vector<Batch>{batch_of({0, 1}), batch_of({2}), batch_of({3}), batch_of({4})});
    const StepResult b = whole.step(batch_of({0, 1, 2, 3, 4}));
    ASSERT_EQ(a.tokens, b.tokens);
    const Tolerance tol = tolerance(Check::invariant, backend().dtype(), a.tokens * config.model.d_ff);
    EXPECT_NEAR(a.loss, b.loss, tol.atol + tol.rtol * std::abs(b.loss));
    EXPECT_NEAR(a.grad_norm, b.grad_norm, tol.atol + tol.rtol * b.grad_norm);
  }
}

TEST_P(Accumulation, AClipNormAboveTheGradientNormChangesNothing) {
  Config plain = small_config(), clipped = small_config();
  clipped.train.clip_norm = 1e6;
  Transformer m1(plain.model, backend()), m2(clipped.model, backend());
  m1.initialize(plain.train.seed);
  m2.initialize(plain.train.seed);
  Trainer t1(m1, plain), t2(m2, clipped);
  for (int i = 0; i < 2; ++i) {
    t1.step(batch_of({0, 1, 2, 3, 4}));
    t2.step(batch_of({0, 1, 2, 3, 4}));
  }
  EXPECT_EQ(m1.parameters().values(backend()).at("encoder.layers.0.ffn.w1.weight").at(0),
            m2.parameters().values(backend()).at("encoder.layers.0.ffn.w1.weight").at(0));
}

TEST_P(Accumulation, ClippingChangesTheSecondUpdate) {
  // Adam's first update is g / |g| elementwise and a constant gradient scale would cancel in
  // every later one; clipping scales step t by clip_norm / |g_t|, which varies with t, so the
  // updates differ from the second step on.
  Config plain = small_config(), clipped = small_config();
  Transformer probe(plain.model, backend());
  probe.initialize(plain.train.seed);
  const double first_norm = Trainer(probe, plain).step(batch_of({0, 1, 2, 3, 4})).grad_norm;
  clipped.train.clip_norm = first_norm / 4;
  Transformer m1(plain.model, backend()), m2(clipped.model, backend());
  m1.initialize(plain.train.seed);
  m2.initialize(plain.train.seed);
  Trainer t1(m1, plain), t2(m2, clipped);
  for (int i = 0; i < 3; ++i) {
    t1.step(batch_of({0, 1, 2, 3, 4}));
    t2.step(batch_of({0, 1, 2, 3, 4}));
  }
  const auto v1 = m1.parameters().values(backend()).at("embed.weight");
  const auto v2 = m2.parameters().values(backend()).at("embed.weight");
  double difference = 0.0;
  for (std::int64_t i = 0; i < v1.numel(); ++i) difference = std::max(difference, std::abs(v1.at(i) - v2.at(i)));
  EXPECT_GT(difference, 0.0);
}

TEST_P(Accumulation, ANaNStopsTheStepNamingItBeforeAnyUpdate) {
  const Config config = small_config();
  Transformer model(config.model, backend());
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  trainer.step(batch_of({0, 1}));
  Parameter& poisoned = model.parameters().at("decoder.layers.0.ffn.w2.bias");
  Tensor value = model.parameters().values(backend()).at(poisoned.spec.name);
  value.set(0, std::numeric_limits<double>::quiet_NaN());
  poisoned.value = backend().upload(value);
  const Tensor before = model.parameters().values(backend()).at("embed.weight");
  try {
    trainer.step(batch_of({0, 1}));
    FAIL() << "no error";
  } catch (const NonFiniteError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("step 2: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(trainer.steps_done(), 1);
  const Tensor after = model.parameters().values(backend()).at("embed.weight");
  for (std::int64_t i = 0; i < before.numel(); ++i) ASSERT_EQ(before.at(i), after.at(i)) << i;
}

// Fills the gradient of one weight matrix with NaN in every linear backward once armed: a NaN
// born in a kernel, which no weight or loss shows before the gradients are checked.
class GradientPoisoner final : public ForwardingBackend {
 public:
  explicit GradientPoisoner(Backend& inner) : ForwardingBackend(inner, Decorates::whole_backend) {}
  void arm(const Tensor& gradient) { target_ = &gradient; }
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override {
    ForwardingBackend::linear_backward(x, w, pre, act, dy, dx, dw, db);
    if (&dw == target_) fill(dw, std::numeric_limits<double>::quiet_NaN());
  }

 private:
  const Tensor* target_ = nullptr;
};

TEST_P(Accumulation, ANaNGradientStopsTheStepNamingTheStepAndTheTensor) {
  Config config = small_config();
  config.train.update_freq = 2;
  GradientPoisoner poisoner(backend());
  Transformer model(config.model, poisoner);
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  const std::vector<Batch> batches = {batch_of({0, 1, 2}), batch_of({3, 4})};
  trainer.step(batches);
  // One in the middle of the parameter list, so that a check of the first or the last alone
  // misses it.
  const std::string poisoned = "encoder.layers.0.ffn.w2.weight";
  poisoner.arm(model.parameters().at(poisoned).grad);
  const auto before = model.parameters().values(backend());
  try {
    trainer.step(batches);
    FAIL() << "no error";
  } catch (const NonFiniteError& e) {
    EXPECT_EQ(std::string(e.what()), "step 2: the gradient of " + poisoned + " is not finite");
  }
  EXPECT_EQ(trainer.steps_done(), 1);
  const auto after = model.parameters().values(backend());
  for (const auto& [name, value] : before) {
    for (std::int64_t i = 0; i < value.numel(); ++i) ASSERT_EQ(value.at(i), after.at(name).at(i)) << name << " " << i;
  }
}

TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(Accumulation);

}  // namespace
}  // namespace trepro::testing
