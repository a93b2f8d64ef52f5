// The end-to-end check of decoding: a small model trained on the copy task within the test
// decodes held-out inputs exactly, with greedy and with beam search. A wrong cache, mask, EOS
// rule or length penalty shows as wrong tokens here.
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "experiments/copy_task.h"
#include "model/beam_search.h"
#include "model/greedy_search.h"
#include "model/trainer.h"

namespace trepro::testing {
namespace {

// Training runs until the model predicts every held-out label from the true prefix, checked
// every kCheckEvery steps up to kMaxTrainSteps: how many steps that takes depends on the
// summation order the build's flags give (FMA or not, vector widths), which the search does not.
constexpr std::int64_t kCheckEvery = 100;
constexpr std::int64_t kMaxTrainSteps = 1500;
constexpr std::int64_t kHeldOutSentences = 16;

Config copy_config() {
  Config config;
  ModelConfig& m = config.model;
  m.vocab_size = 12;
  m.d_model = 32;
  m.heads = 4;
  m.d_ff = 64;
  m.encoder_layers = 1;
  m.decoder_layers = 1;
  m.max_len = 16;
  m.dropout = 0.0;
  // Pre-LN at a constant 5e-3 copies every held-out sentence after 200-300 steps in the release
  // build (Post-LN needs about 500).
  m.norm = NormPlacement::pre;
  config.train.schedule.kind = ScheduleKind::constant;
  config.train.schedule.warmup = 0;
  config.train.optimizer.lr = 5e-3;
  config.train.label_smoothing = 0.0;
  config.train.seed = 23;
  validate(config, "<copy decoding config>");
  return config;
}

CopyTask task(std::int64_t batch_size) {
  CopyTask t;
  t.min_length = 3;
  t.max_length = 7;
  t.batch_size = batch_size;
  return t;
}

// The words of a copy-task source row: everything before EOS.
std::vector<std::int64_t> words(const Tensor& src, std::int64_t row, std::int64_t eos) {
  std::vector<std::int64_t> out;
  for (std::int64_t j = 0; j < src.dim(1); ++j) {
    const auto id = static_cast<std::int64_t>(src.at(row * src.dim(1) + j));
    if (id == eos) break;
    out.push_back(id);
  }
  return out;
}

// Whether the model's argmax from the true prefix (teacher forcing, no search) is every non-pad
// label of `batch`: what exact decoding asks of training.
bool predicts_every_label(Transformer& model, Backend& backend, const Batch& batch, std::int64_t pad) {
  const Tensor logits = backend.download(model.forward(batch));
  const std::int64_t vocab = logits.dim(1);
  for (std::int64_t row = 0; row < logits.dim(0); ++row) {
    const auto label = static_cast<std::int64_t>(batch.labels.at(row));
    if (label == pad) continue;
    std::int64_t best = 0;
    for (std::int64_t v = 1; v < vocab; ++v) {
      if (logits.at(row * vocab + v) > logits.at(row * vocab + best)) best = v;
    }
    if (best != label) return false;
  }
  return true;
}

class CopyTaskDecodingTest : public BackendTest {};

TEST_P(CopyTaskDecodingTest, TrainedModelDecodesHeldOutInputsExactly) {
  const Config config = copy_config();
  Transformer model(config.model, backend());
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  const SpecialTokens special = special_tokens(config.model);
  const SearchTokens tokens{special.pad, special.bos, special.eos};
  // Another seed: sentences the model never saw.
  const Batch held_out = copy_task_batch(config.model, task(kHeldOutSentences), config.train.seed + 1, 0);
  bool trained = false;
  for (std::int64_t s = 1; s <= kMaxTrainSteps && !trained; ++s) {
    trainer.step(copy_task_batch(config.model, task(32), config.train.seed, static_cast<std::uint64_t>(s)));
    trained = s % kCheckEvery == 0 && predicts_every_label(model, backend(), held_out, special.pad);
  }
  ASSERT_TRUE(trained) << "after " << kMaxTrainSteps << " steps the model still mispredicts a held-out label "
                       << "from the true prefix: training, not the search, is what fails";
  const std::vector<Hypothesis> greedy = greedy_search(model, held_out.src, tokens);
  const std::vector<Hypothesis> beam = beam_search(model, held_out.src, tokens);
  for (std::int64_t b = 0; b < kHeldOutSentences; ++b) {
    const std::vector<std::int64_t> expected = words(held_out.src, b, special.eos);
    EXPECT_EQ(greedy[static_cast<std::size_t>(b)].tokens, expected) << "greedy, sentence " << b;
    EXPECT_TRUE(greedy[static_cast<std::size_t>(b)].ended) << "greedy, sentence " << b;
    EXPECT_EQ(beam[static_cast<std::size_t>(b)].tokens, expected) << "beam, sentence " << b;
    EXPECT_TRUE(beam[static_cast<std::size_t>(b)].ended) << "beam, sentence " << b;
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(CopyTaskDecodingTest);

}  // namespace
}  // namespace trepro::testing
