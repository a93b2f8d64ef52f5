// translate_all (model/decoding.h): sentences sorted by length into token-budget batches give
// the same hypotheses, in the input order, as decoding each sentence alone.
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tolerances.h"
#include "model/beam_search.h"
#include "model/greedy_search.h"

namespace trepro::testing {
namespace {

const SearchTokens kTokens{0, kBos, kEos};

class TranslateAllTest : public BackendTest {};

TEST_P(TranslateAllTest, BatchedEqualsOneAtATimeInInputOrder) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  model.initialize(13);
  // Lengths out of order, an empty one, and a budget of 9 tokens: several batches of 1-3 rows.
  std::vector<std::vector<std::int64_t>> sources;
  const Tensor words = random_words({7, 6}, config.vocab_size, 21);
  for (std::int64_t length : {5, 2, 0, 6, 3, 2, 4}) {
    std::vector<std::int64_t> ids;
    for (std::int64_t j = 0; j + 1 < length; ++j) ids.push_back(static_cast<std::int64_t>(words.at(static_cast<std::int64_t>(sources.size()) * 6 + j)));
    if (length > 0) ids.push_back(kEos);
    sources.push_back(ids);
  }
  const Tolerance per_step = tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  for (bool greedy : {true, false}) {
    SCOPED_TRACE(greedy ? "greedy" : "beam 4");
    TranslateOptions options;
    options.greedy = greedy;
    options.max_extra = 6;
    options.max_tokens = 9;
    const std::vector<Hypothesis> batched = translate_all(model, sources, kTokens, options);
    ASSERT_EQ(batched.size(), sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      SCOPED_TRACE("sentence " + std::to_string(i));
      if (sources[i].empty()) {
        EXPECT_TRUE(batched[i].tokens.empty());
        continue;
      }
      Tensor alone = Tensor::empty({1, static_cast<std::int64_t>(sources[i].size())}, DType::i64);
      for (std::size_t j = 0; j < sources[i].size(); ++j) alone.set(static_cast<std::int64_t>(j), static_cast<double>(sources[i][j]));
      const Hypothesis expected = greedy ? greedy_search(model, alone, kTokens, options.max_extra).front()
                                         : beam_search(model, alone, kTokens, {4, 0.6, options.max_extra}).front();
      EXPECT_EQ(batched[i].tokens, expected.tokens);
      EXPECT_EQ(batched[i].ended, expected.ended);
      const double steps = static_cast<double>(expected.length());
      EXPECT_NEAR(batched[i].log_prob, expected.log_prob, per_step.atol * steps + per_step.rtol * std::abs(expected.log_prob));
    }
  }
}

TEST_P(TranslateAllTest, RejectsAZeroTokenBudget) {
  Transformer model(tiny_config(), backend());
  TranslateOptions options;
  options.max_tokens = 0;
  EXPECT_THROW(translate_all(model, {{3, 2}}, kTokens, options), std::invalid_argument);
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(TranslateAllTest);

// Lengths 0..9, shuffled: every non-empty sentence in exactly one batch, shortest first, each
// batch within both limits (the last sentence sets its width).
TEST(TranslationBatches, KeepBothLimitsAndCoverEverySentenceOnce) {
  std::vector<std::vector<std::int64_t>> sources;
  for (std::int64_t length : {4, 9, 0, 1, 7, 3, 8, 2, 6, 5, 3, 3, 3}) sources.emplace_back(length, kEos);
  for (std::int64_t max_sentences : {0, 1, 2, 3}) {
    SCOPED_TRACE("max_sentences " + std::to_string(max_sentences));
    TranslateOptions options;
    options.max_tokens = 12;
    options.max_sentences = max_sentences;
    std::vector<int> seen(sources.size(), 0);
    std::size_t previous_length = 0;
    for (const std::vector<std::size_t>& batch : translation_batches(sources, options)) {
      ASSERT_FALSE(batch.empty());
      const std::size_t width = sources[batch.back()].size();
      if (batch.size() > 1) {
        EXPECT_LE(batch.size() * width, 12u);
      }
      if (max_sentences > 0) {
        EXPECT_LE(batch.size(), static_cast<std::size_t>(max_sentences));
      }
      for (std::size_t i : batch) {
        ++seen[i];
        EXPECT_GE(sources[i].size(), previous_length);
        previous_length = sources[i].size();
      }
    }
    for (std::size_t i = 0; i < sources.size(); ++i) EXPECT_EQ(seen[i], sources[i].empty() ? 0 : 1) << "sentence " << i;
  }
  TranslateOptions negative;
  negative.max_sentences = -1;
  EXPECT_THROW(translation_batches(sources, negative), std::invalid_argument);
}

// The paper's decoding (section 6.1): beam 4, length penalty alpha 0.6, outputs up to the input
// length + 50; the defaults every command starts from.
TEST(TranslateOptions, DefaultsAreThePapers) {
  const TranslateOptions translate;
  EXPECT_FALSE(translate.greedy);
  EXPECT_EQ(translate.beam, 4);
  EXPECT_EQ(translate.alpha, 0.6);
  EXPECT_EQ(translate.max_extra, 50);
  const BeamOptions beam;
  EXPECT_EQ(beam.beam, 4);
  EXPECT_EQ(beam.alpha, 0.6);
  EXPECT_EQ(beam.max_extra, 50);
}

}  // namespace
}  // namespace trepro::testing
