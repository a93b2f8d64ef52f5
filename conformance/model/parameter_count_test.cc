// The paper's base model (37000 shared BPE tokens, tied embeddings, 6 + 6 layers, d_model 512,
// d_ff 2048, 8 heads) has 63,082,496 parameters; Table 3 rounds it to 65M. The count, and each
// part of it, follows from the shapes alone, so the check reads parameter_specs (no allocation).
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/parameter_specs.h"

namespace trepro::testing {
namespace {

ModelConfig paper_base() {
  ModelConfig c;
  c.vocab_size = 37000;
  validate(Config{c, TrainConfig{}}, "<paper base>");
  return c;
}

// Scalars in the parameters whose names start with `prefix`.
std::int64_t count(const std::vector<ParameterSpec>& specs, const std::string& prefix = "") {
  std::int64_t n = 0;
  for (const ParameterSpec& spec : specs) {
    if (spec.name.starts_with(prefix)) n += shape_numel(spec.shape);
  }
  return n;
}

// Widths that pass the config's checks but whose tensors, or whose sum, do not fit in an int64
// are an error naming the first parameter past it, before anything is allocated.
TEST(ParameterCountTest, AModelPastInt64IsAnErrorNamingTheParameter) {
  ModelConfig wide = paper_base();
  wide.d_ff = std::int64_t{1} << 62;
  try {
    parameter_specs(wide);
    FAIL() << "d_ff 2^62 counted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameter encoder.layers.0.ffn.w1.weight"), std::string::npos) << e.what();
  }
  wide.d_ff = std::int64_t{1} << 52;  // each FFN weight fits (2^61 elements), their sum does not
  try {
    parameter_specs(wide);
    FAIL() << "a sum past 2^63 counted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("past what an int64 counts"), std::string::npos) << e.what();
  }
}

TEST(ParameterCountTest, PaperBaseModelHas63082496Parameters) {
  const std::vector<ParameterSpec> specs = parameter_specs(paper_base());
  EXPECT_EQ(count(specs), 63'082'496);
}

TEST(ParameterCountTest, PaperBaseModelBreakdown) {
  const std::vector<ParameterSpec> specs = parameter_specs(paper_base());
  // One shared table: 37000 x 512.
  EXPECT_EQ(count(specs, "embed."), 18'944'000);
  EXPECT_EQ(count(specs, "pos_embed."), 0);  // sinusoidal positions have no parameters
  // Self-attention 4 x (512 x 512 + 512), FFN 512 x 2048 + 2048 + 2048 x 512 + 512, 2 LayerNorms.
  EXPECT_EQ(count(specs, "encoder.layers.0."), 3'152'384);
  // The same plus cross-attention (4 x 262,656) and a third LayerNorm.
  EXPECT_EQ(count(specs, "decoder.layers.0."), 4'204'032);
  for (int i = 1; i < 6; ++i) {
    EXPECT_EQ(count(specs, "encoder.layers." + std::to_string(i) + "."), 3'152'384) << "encoder layer " << i;
    EXPECT_EQ(count(specs, "decoder.layers." + std::to_string(i) + "."), 4'204'032) << "decoder layer " << i;
  }
  // Post-LN: no final stack norms, and the output projection is the shared table.
  EXPECT_EQ(count(specs), 18'944'000 + 6 * 3'152'384 + 6 * 4'204'032);
}

// Table 3 row (B) with d_k = d_v = 16: q, k, v are [128, 512] (+ bias 128), o is [512, 128]
// (+ bias 512); the FFN, norms and embedding are the base model's.
TEST(ParameterCountTest, HeadDimNarrowsTheAttentionProjections) {
  ModelConfig c = paper_base();
  c.head_dim = 16;
  validate(Config{c, TrainConfig{}}, "<row B>");
  const std::vector<ParameterSpec> specs = parameter_specs(c);
  const std::int64_t attention = 3 * (128 * 512 + 128) + (512 * 128 + 512);  // 263,040
  const std::int64_t ffn_and_norms = 3'152'384 - 4 * 262'656;                // the base layer less its attention
  EXPECT_EQ(count(specs, "encoder.layers.0.self_attn."), attention);
  EXPECT_EQ(count(specs, "encoder.layers.0."), attention + ffn_and_norms);
  EXPECT_EQ(count(specs, "decoder.layers.0."), 2 * attention + ffn_and_norms + 1'024);  // + norm3
  EXPECT_EQ(count(specs), 18'944'000 + 6 * (attention + ffn_and_norms) + 6 * (2 * attention + ffn_and_norms + 1'024));
}

}  // namespace
}  // namespace trepro::testing
