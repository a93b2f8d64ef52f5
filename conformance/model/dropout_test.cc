// Dropout is on in training only, and its masks are a pure function of the key: evaluation is
// deterministic and ignores the rate, a training forward repeats bit for bit under the same key
// and changes under another. The same backend running the same ops on the same inputs gives
// the same bits (ARCHITECTURE.md, "Randomness and determinism"), so equalities here are exact.
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"
#include "model/beam_search.h"
#include "model/greedy_search.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 3;
constexpr Tolerance kExact{0.0, 0.0};

class DropoutTest : public BackendTest {
 protected:
  // The tiny model with residual/embedding dropout and attention-weight dropout.
  static ModelConfig with_dropout(double p) {
    ModelConfig config = tiny_config();
    config.dropout = p;
    config.attention_dropout = p;
    return config;
  }
  ::testing::AssertionResult same(const std::string& what, const Tensor& actual, const Tensor& expected,
                                  Tolerance t) {
    return all_close(what, backend(), actual, backend(), expected, t);
  }
};

TEST_P(DropoutTest, EvaluationIsDeterministic) {
  const ModelConfig config = with_dropout(0.3);
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed);
  const Tensor first = backend().download(model.forward(batch, false));
  EXPECT_TRUE(same("second evaluation", model.forward(batch, false), first, kExact));
}

// The classic bug "dropout active at evaluation": evaluation with p = 0.3 must equal the same
// parameters with p = 0.
TEST_P(DropoutTest, EvaluationIgnoresTheDropoutRate) {
  Transformer with(with_dropout(0.3), backend()), without(with_dropout(0.0), backend());
  with.initialize(kSeed);
  without.initialize(kSeed);
  const Batch batch = tiny_batch(tiny_config(), kSeed);
  const Tensor expected = backend().download(without.forward(batch, false));
  EXPECT_TRUE(same("logits", with.forward(batch, false), expected, kExact));
}

// The same bug in the decoding path, which runs its own forwards (IncrementalDecoder): greedy and
// beam search with p = 0.3 must find the same tokens with the same log-probabilities as with p = 0.
TEST_P(DropoutTest, DecodingIgnoresTheDropoutRate) {
  Transformer with(with_dropout(0.3), backend()), without(with_dropout(0.0), backend());
  with.initialize(kSeed);
  without.initialize(kSeed);
  const Tensor src = tiny_batch(tiny_config(), kSeed).src;
  const SearchTokens tokens{tiny_config().pad_id, kBos, kEos};
  constexpr std::int64_t kMaxExtra = 8;
  const auto expect_same = [](const std::vector<Hypothesis>& a, const std::vector<Hypothesis>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].tokens, b[i].tokens) << "sentence " << i;
      EXPECT_EQ(a[i].log_prob, b[i].log_prob) << "sentence " << i;
    }
  };
  expect_same(greedy_search(with, src, tokens, kMaxExtra), greedy_search(without, src, tokens, kMaxExtra));
  const BeamOptions beam{4, 0.6, kMaxExtra};
  expect_same(beam_search(with, src, tokens, beam), beam_search(without, src, tokens, beam));
}

TEST_P(DropoutTest, TrainingWithZeroRateEqualsEvaluation) {
  const ModelConfig config = with_dropout(0.0);
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed);
  const Tensor evaluation = backend().download(model.forward(batch, false));
  EXPECT_TRUE(same("logits", model.forward(batch, true, DropoutStream{kSeed, 1, 0}), evaluation, kExact));
}

TEST_P(DropoutTest, TrainingMasksArePureFunctionsOfTheKey) {
  const ModelConfig config = with_dropout(0.3);
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed);
  const Tolerance different = tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  const Tensor evaluation = backend().download(model.forward(batch, false));
  const Tensor first = backend().download(model.forward(batch, true, DropoutStream{kSeed, 1, 0}));
  EXPECT_TRUE(same("same key", model.forward(batch, true, DropoutStream{kSeed, 1, 0}), first, kExact));
  EXPECT_FALSE(same("another step", model.forward(batch, true, DropoutStream{kSeed, 2, 0}), first, different));
  EXPECT_FALSE(
      same("another seed", model.forward(batch, true, DropoutStream{kSeed + 1, 1, 0}), first, different));
  EXPECT_FALSE(same("training vs evaluation", first, evaluation, different));
}

// The micro-batches of one step (train.update_freq) each draw their own masks; micro-batch 0
// draws what the step drew before micro-batches had their own streams.
TEST_P(DropoutTest, MicroBatchesOfOneStepDrawDifferentMasks) {
  const ModelConfig config = with_dropout(0.3);
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed);
  const Tolerance different = tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  const Tensor first = backend().download(model.forward(batch, true, DropoutStream{kSeed, 1, 0}));
  EXPECT_FALSE(same("micro-batch 1", model.forward(batch, true, DropoutStream{kSeed, 1, 1}), first, different));
  EXPECT_FALSE(same("micro-batch 2 of step 2", model.forward(batch, true, DropoutStream{kSeed, 2, 2}),
                    backend().download(model.forward(batch, true, DropoutStream{kSeed, 2, 1})), different));
  EXPECT_EQ((DropoutStream{kSeed, 7, 0}.philox_stream()), 7u);
}

// Attention-weight dropout alone (a separate, default-off setting) is also keyed and active.
TEST_P(DropoutTest, AttentionWeightDropoutIsKeyedToo) {
  ModelConfig config = tiny_config();
  config.attention_dropout = 0.3;
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed);
  const Tolerance different = tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  const Tensor evaluation = backend().download(model.forward(batch, false));
  const Tensor first = backend().download(model.forward(batch, true, DropoutStream{kSeed, 1, 0}));
  EXPECT_TRUE(same("same key", model.forward(batch, true, DropoutStream{kSeed, 1, 0}), first, kExact));
  EXPECT_FALSE(same("another key", model.forward(batch, true, DropoutStream{kSeed, 2, 0}), first, different));
  EXPECT_FALSE(same("training vs evaluation", first, evaluation, different));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(DropoutTest);

}  // namespace
}  // namespace trepro::testing
