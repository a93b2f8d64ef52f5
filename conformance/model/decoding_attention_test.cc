// The attention maps of `trepro attention` (model/decoding_attention.h): one [heads, queries,
// keys] matrix per layer and attention, rows that are probability distributions, nothing on
// the future in the decoder's self-attention, and a known answer: with a zero query projection
// every score is equal, so each query spreads evenly over the keys it may see.
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tolerances.h"
#include "model/decoding_attention.h"

namespace trepro::testing {
namespace {

class DecodingAttentionTest : public BackendTest {
 protected:
  // One sentence pair: source 5 ids, target 6 (BOS first).
  Batch pair(const ModelConfig& config) {
    const Batch two = tiny_batch(config, 3, 1);
    return {two.src, two.tgt, Tensor()};
  }
  Tolerance tol(const ModelConfig& config) {
    return tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  }
};

TEST_P(DecodingAttentionTest, EveryLayerAndHeadIsADistributionOverVisibleKeys) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  model.initialize(7);
  const Batch batch = pair(config);
  const AttentionMaps maps = attention_maps(model, batch);
  ASSERT_EQ(static_cast<std::int64_t>(maps.encoder_self.size()), config.encoder_layers);
  ASSERT_EQ(static_cast<std::int64_t>(maps.decoder_self.size()), config.decoder_layers);
  ASSERT_EQ(static_cast<std::int64_t>(maps.decoder_cross.size()), config.decoder_layers);
  const std::int64_t s = batch.src.dim(1), t = batch.tgt.dim(1);
  auto check = [&](const Tensor& p, std::int64_t queries, std::int64_t keys, bool causal, const char* what) {
    SCOPED_TRACE(what);
    ASSERT_EQ(p.shape(), (Shape{config.heads, queries, keys}));
    for (std::int64_t row = 0; row < config.heads * queries; ++row) {
      double sum = 0.0;
      for (std::int64_t j = 0; j < keys; ++j) {
        const double value = p.at(row * keys + j);
        EXPECT_GE(value, 0.0);
        if (causal && j > row % queries) {
          EXPECT_EQ(value, 0.0) << "row " << row << " sees key " << j;
        }
        sum += value;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << row;
    }
  };
  for (const Tensor& p : maps.encoder_self) check(p, s, s, false, "encoder self");
  for (const Tensor& p : maps.decoder_self) check(p, t, t, true, "decoder self");
  for (const Tensor& p : maps.decoder_cross) check(p, t, s, false, "decoder cross");
}

TEST_P(DecodingAttentionTest, ZeroQueriesAttendEvenly) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  model.initialize(7);
  for (const char* name : {"encoder.layers.0.self_attn.q_proj", "decoder.layers.1.self_attn.q_proj",
                           "decoder.layers.0.cross_attn.q_proj"}) {
    for (const char* part : {".weight", ".bias"}) {
      Parameter& p = model.parameters().at(std::string(name) + part);
      p.value = backend().upload(Tensor::zeros(p.value.shape(), backend().dtype()));
    }
  }
  const Batch batch = pair(config);
  const AttentionMaps maps = attention_maps(model, batch);
  const std::int64_t s = batch.src.dim(1), t = batch.tgt.dim(1);
  const double atol = tol(config).atol;
  for (std::int64_t h = 0; h < config.heads; ++h) {
    for (std::int64_t i = 0; i < s; ++i) {
      for (std::int64_t j = 0; j < s; ++j) EXPECT_NEAR(maps.encoder_self[0].at((h * s + i) * s + j), 1.0 / s, atol);
    }
    for (std::int64_t i = 0; i < t; ++i) {
      for (std::int64_t j = 0; j <= i; ++j) {
        EXPECT_NEAR(maps.decoder_self[1].at((h * t + i) * t + j), 1.0 / static_cast<double>(i + 1), atol);
      }
      for (std::int64_t j = 0; j < s; ++j) EXPECT_NEAR(maps.decoder_cross[0].at((h * t + i) * s + j), 1.0 / s, atol);
    }
  }
  // The layers left alone are not uniform: the test can tell.
  EXPECT_GT(std::abs(maps.encoder_self[1].at(0) - 1.0 / s), 10 * atol);
}

TEST_P(DecodingAttentionTest, RejectsMoreThanOneSentence) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  const Batch two = tiny_batch(config, 3, 2);
  EXPECT_THROW(attention_maps(model, two), std::invalid_argument);
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(DecodingAttentionTest);

}  // namespace
}  // namespace trepro::testing
