// The model's masks, seen from its outputs: a decoder position never sees later target tokens,
// and padded positions (their number, or the values at them) never reach a real position.
//
// The two forwards compared differ only where a mask hides the difference, so in exact
// arithmetic they are equal; a backend may still sum in another order when a shape changes
// (more padded keys), and that difference goes through every later layer like a backend's own
// rounding: hence Check::model_vs_reference at the model's widest sum, which is 1e-13 in
// float64 and ~6e-5 in float32, while a leak moves logits by O(0.01 - 1).
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 11;

class MaskingTest : public BackendTest {
 protected:
  Tolerance tol(const ModelConfig& config) {
    return tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  }
  // Logits of a fresh forward as a host matrix [rows, V].
  Tensor logits(Transformer& model, const Batch& batch) { return backend().download(model.forward(batch)); }
  // Host matrices are compared through the reference backend, whose download is a copy.
  ::testing::AssertionResult same(const std::string& what, const Tensor& actual, const Tensor& expected,
                                  Tolerance t) {
    return all_close(what, reference(), actual, reference(), expected, t);
  }
};

// `ids` [B, T] with every real position after `last` replaced by another word.
Tensor change_after(const Tensor& ids, std::int64_t last, const ModelConfig& config) {
  Tensor out = ids.clone();
  const std::int64_t length = ids.dim(1), words = config.vocab_size - kFirstWord;
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    if (i % length > last && out.at(i) != static_cast<double>(config.pad_id)) {
      out.set(i, static_cast<double>(kFirstWord +
                                     (static_cast<std::int64_t>(out.at(i)) - kFirstWord + 1) % words));
    }
  }
  return out;
}

// `ids` [B, T] followed by `extra` pad columns.
Tensor append_pads(const Tensor& ids, std::int64_t extra, std::int64_t pad_id) {
  const std::int64_t rows = ids.dim(0), length = ids.dim(1);
  Tensor out = Tensor::empty({rows, length + extra}, ids.dtype());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t t = 0; t < length + extra; ++t) {
      out.set(r * (length + extra) + t, t < length ? ids.at(r * length + t) : static_cast<double>(pad_id));
    }
  }
  return out;
}

TEST_P(MaskingTest, LaterTargetTokensDoNotChangeEarlierLogits) {
  for (Architecture architecture : {Architecture::encoder_decoder, Architecture::decoder_only}) {
    const ModelConfig config = with_architecture(tiny_config(), architecture);
    SCOPED_TRACE(to_string(architecture));
    Transformer model(config, backend());
    model.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed);
    const Tensor before = logits(model, batch);
    const std::int64_t length = batch.tgt.dim(1);
    for (std::int64_t last = 0; last + 1 < length; ++last) {
      Batch changed = batch;
      changed.tgt = change_after(batch.tgt, last, config);
      const Tensor after = logits(model, changed);
      const std::vector<std::int64_t> seen = real_rows(batch.tgt, config.pad_id, last);
      EXPECT_TRUE(same("logits up to position " + std::to_string(last), take_rows(after, seen),
                       take_rows(before, seen), tol(config)));
      // The test's own power: the changed tokens do change the next position's logits.
      EXPECT_FALSE(same("logits at position " + std::to_string(last + 1), take_rows(after, {last + 1}),
                        take_rows(before, {last + 1}), tol(config)));
    }
  }
}

TEST_P(MaskingTest, ExtraSourcePaddingChangesNoLogit) {
  for (Architecture architecture : {Architecture::encoder_decoder, Architecture::encoder_only}) {
    const ModelConfig config = with_architecture(tiny_config(), architecture);
    SCOPED_TRACE(to_string(architecture));
    Transformer model(config, backend());
    model.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed);
    Batch padded = batch;
    constexpr std::int64_t kExtra = 3;
    padded.src = append_pads(batch.src, kExtra, config.pad_id);
    const Tensor before = logits(model, batch);
    Tensor after = logits(model, padded);
    if (architecture == Architecture::encoder_only) {
      // One logits row per source position: keep the original positions.
      std::vector<std::int64_t> original;
      const std::int64_t length = batch.src.dim(1);
      for (std::int64_t r = 0; r < batch.src.dim(0); ++r) {
        for (std::int64_t t = 0; t < length; ++t) original.push_back(r * (length + kExtra) + t);
      }
      after = take_rows(after, original);
    }
    EXPECT_TRUE(same("logits", after, before, tol(config)));
  }
}

TEST_P(MaskingTest, ExtraTargetPaddingChangesNoRealPosition) {
  for (Architecture architecture : {Architecture::encoder_decoder, Architecture::decoder_only}) {
    const ModelConfig config = with_architecture(tiny_config(), architecture);
    SCOPED_TRACE(to_string(architecture));
    Transformer model(config, backend());
    model.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed);
    Batch padded = batch;
    constexpr std::int64_t kExtra = 3;
    padded.tgt = append_pads(batch.tgt, kExtra, config.pad_id);
    const std::int64_t length = batch.tgt.dim(1);
    const std::vector<std::int64_t> rows = real_rows(batch.tgt, config.pad_id, length);
    const std::vector<std::int64_t> padded_rows = real_rows(padded.tgt, config.pad_id, length);
    EXPECT_TRUE(same("logits of real positions", take_rows(logits(model, padded), padded_rows),
                     take_rows(logits(model, batch), rows), tol(config)));
  }
}

// Whatever vector sits at a padded source position cannot reach a real position: change the
// embedding row of the pad token (untied, so only the source side reads it).
TEST_P(MaskingTest, ValuesAtPaddedSourcePositionsDoNotReachRealPositions) {
  for (Architecture architecture : {Architecture::encoder_decoder, Architecture::encoder_only}) {
    ModelConfig config = tiny_config();
    config.tie_embeddings = false;
    config = with_architecture(config, architecture);
    SCOPED_TRACE(to_string(architecture));
    Transformer model(config, backend());
    model.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed);
    const Tensor before = logits(model, batch);
    Parameter& table = model.parameters().at("src_embed.weight");
    Tensor host = backend().download(table.value);
    for (std::int64_t i = 0; i < config.d_model; ++i) host.set(config.pad_id * config.d_model + i, 3.0 - i);
    table.value = backend().upload(host);
    const Tensor after = logits(model, batch);
    if (architecture == Architecture::encoder_decoder) {
      EXPECT_TRUE(same("logits", after, before, tol(config)));
      continue;
    }
    // Encoder-only: a padded position's own logits do change (the test's power); real ones do not.
    const std::vector<std::int64_t> real = real_rows(batch.src, config.pad_id, batch.src.dim(1));
    EXPECT_TRUE(
        same("logits of real positions", take_rows(after, real), take_rows(before, real), tol(config)));
    EXPECT_FALSE(same("all logits", after, before, tol(config)));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(MaskingTest);

}  // namespace
}  // namespace trepro::testing
