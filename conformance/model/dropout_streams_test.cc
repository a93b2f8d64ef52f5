// The randomness streams of training: every dropout of a training forward draws under its own
// Philox key, and the keys of another optimizer step or another micro-batch of the same step
// share none of them. A backend that records the keys the model asks for sees what a mask
// comparison would miss where two masks of different shapes never meet. (That one key gives the
// same mask on every backend and thread count is determinism_test's and the op suites'.)
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "core/forwarding_backend.h"
#include "model/trainer.h"
#include "registry/registry.h"

namespace trepro::testing {
namespace {

using Key = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>;  // seed, stream, site

Key key_of(const DropoutSpec& dropout) { return {dropout.key.seed, dropout.key.stream, dropout.key.site}; }

// Records the key of every dropout a forward draws (backward redraws the same masks).
class KeyRecordingBackend : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  std::vector<Key> keys;

  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                         bool causal, double scale, const DropoutSpec& dropout, Tensor& out, Tensor& lse) override {
    record(dropout);
    ForwardingBackend::attention_forward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse);
  }
  void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) override {
    record(dropout);
    ForwardingBackend::dropout_forward(x, dropout, y);
  }
  void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) override {
    record(dropout);
    ForwardingBackend::add_dropout_forward(residual, x, dropout, out);
  }
  void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                const Tensor& gamma, const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                Tensor& mean, Tensor& rstd) override {
    record(dropout);
    ForwardingBackend::add_dropout_norm_forward(kind, residual, x, dropout, gamma, beta, eps, sum, y, mean, rstd);
  }

 private:
  void record(const DropoutSpec& dropout) {
    if (dropout.active()) keys.push_back(key_of(dropout));
  }
};

// The tiny 2 + 2 layer model with residual, embedding and attention-weight dropout: 2 embeddings,
// 3 per encoder layer (self-attention weights, 2 residuals), 5 per decoder layer (self and
// cross-attention weights, 3 residuals).
constexpr std::size_t kDropoutsPerForward = 2 + 2 * 3 + 2 * 5;

Config training_config(NormPlacement norm) {
  Config config;
  config.model = tiny_config();
  config.model.dropout = 0.3;
  config.model.attention_dropout = 0.2;
  config.model.norm = norm;
  config.train.seed = 77;
  return config;
}

std::set<Key> distinct(const std::vector<Key>& keys) { return {keys.begin(), keys.end()}; }

bool disjoint(const std::set<Key>& a, const std::set<Key>& b) {
  for (const Key& k : a) {
    if (b.count(k) != 0) return false;
  }
  return true;
}

class DropoutStreams : public ::testing::TestWithParam<NormPlacement> {
 protected:
  std::unique_ptr<Backend> inner_ = make_reference_backend(DType::f64);
  KeyRecordingBackend backend_{*inner_, Decorates::whole_backend};
};

// Layers, sublayers, the two embeddings and attention weights vs residuals: one site each.
TEST_P(DropoutStreams, EveryDropoutOfAForwardHasItsOwnKey) {
  const Config config = training_config(GetParam());
  Transformer model(config.model, backend_);
  model.initialize(1);
  model.forward(tiny_batch(config.model, 1), true, DropoutStream{config.train.seed, 1, 0});
  EXPECT_EQ(backend_.keys.size(), kDropoutsPerForward);
  EXPECT_EQ(distinct(backend_.keys).size(), backend_.keys.size()) << "two dropouts share a key";
}

// Through the trainer: the micro-batches of one step (train.update_freq) and the next step
// each draw fresh keys, all under the configured seed.
TEST_P(DropoutStreams, StepsAndMicroBatchesDrawDisjointKeys) {
  const Config config = training_config(GetParam());
  Transformer model(config.model, backend_);
  model.initialize(1);
  Trainer trainer(model, config);
  const Batch batch = tiny_batch(config.model, 1);
  trainer.step({batch, batch});
  ASSERT_EQ(backend_.keys.size(), 2 * kDropoutsPerForward);
  const std::set<Key> micro0 = distinct({backend_.keys.begin(), backend_.keys.begin() + kDropoutsPerForward});
  const std::set<Key> micro1 = distinct({backend_.keys.begin() + kDropoutsPerForward, backend_.keys.end()});
  EXPECT_TRUE(disjoint(micro0, micro1)) << "micro-batches 0 and 1 of step 1 share a key";
  backend_.keys.clear();
  trainer.step(batch);
  const std::set<Key> step2 = distinct(backend_.keys);
  EXPECT_TRUE(disjoint(step2, micro0)) << "steps 1 and 2 share a key";
  for (const Key& k : step2) EXPECT_EQ(std::get<0>(k), config.train.seed);
}

INSTANTIATE_TEST_SUITE_P(Norms, DropoutStreams, ::testing::Values(NormPlacement::post, NormPlacement::pre),
                         [](const auto& info) { return info.param == NormPlacement::post ? "PostLN" : "PreLN"; });

}  // namespace
}  // namespace trepro::testing
