// Beam search against its invariants: beam 1 is greedy; the key/value cache changes nothing
// (against an oracle recomputing the full forward each step); a sentence decodes alike alone or
// in a padded batch; and, on hand-made distributions, the length penalty, EOS, pad, early stop
// and maximum length behave as documented in model/beam_search.h.
#include <cmath>

#include <gtest/gtest.h>

#include "conformance/model/decoding_testing.h"
#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tolerances.h"
#include "model/beam_search.h"
#include "model/greedy_search.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 11;
// Outputs up to source length + 8: long enough to reach EOS or the maximum length, short enough
// that random weights leave no near-ties among candidates (a float32 near-tie could flip a choice
// between two computations that agree within tolerance).
constexpr std::int64_t kMaxExtra = 8;
const SearchTokens kTokens{0, kBos, kEos};

// A log-probability summed over L steps, each within `per_step`: L atol + rtol |sum| (the terms
// share a sign, so sum |terms| = |sum|).
Tolerance summed(Tolerance per_step, std::int64_t steps) {
  return {per_step.atol * static_cast<double>(steps), per_step.rtol};
}

void expect_same_hypotheses(const std::vector<Hypothesis>& actual, const std::vector<Hypothesis>& expected,
                            Tolerance per_step) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t b = 0; b < actual.size(); ++b) {
    SCOPED_TRACE("sentence " + std::to_string(b));
    EXPECT_EQ(actual[b].tokens, expected[b].tokens);
    EXPECT_EQ(actual[b].ended, expected[b].ended);
    const Tolerance tol = summed(per_step, expected[b].length());
    EXPECT_NEAR(actual[b].log_prob, expected[b].log_prob, tol.atol + tol.rtol * std::abs(expected[b].log_prob));
    EXPECT_NEAR(actual[b].score, expected[b].score, tol.atol + tol.rtol * std::abs(expected[b].score));
  }
}

class BeamSearchTest : public BackendTest {
 protected:
  // Three sources, row 1 with its last two positions padded.
  Tensor sources(const ModelConfig& config) { return tiny_batch(config, kSeed, 3).src; }
  Tolerance per_step(const ModelConfig& config) {
    return tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  }
};

TEST_P(BeamSearchTest, BeamOfOneIsGreedy) {
  for (NormPlacement norm : {NormPlacement::post, NormPlacement::pre}) {
    SCOPED_TRACE(to_string(norm));
    ModelConfig config = tiny_config();
    config.norm = norm;
    Transformer model(config, backend());
    model.initialize(kSeed);
    const Tensor src = sources(config);
    const std::vector<Hypothesis> greedy = greedy_search(model, src, kTokens, kMaxExtra);
    const std::vector<Hypothesis> beam = beam_search(model, src, kTokens, {1, 0.6, kMaxExtra});
    ASSERT_EQ(beam.size(), greedy.size());
    for (std::size_t b = 0; b < beam.size(); ++b) {
      // The same cache computations in the same order: equal bit for bit.
      EXPECT_EQ(beam[b].tokens, greedy[b].tokens) << "sentence " << b;
      EXPECT_EQ(beam[b].ended, greedy[b].ended) << "sentence " << b;
      EXPECT_EQ(beam[b].log_prob, greedy[b].log_prob) << "sentence " << b;
    }
  }
}

TEST_P(BeamSearchTest, CachedEqualsRecomputingTheFullForwardEachStep) {
  for (Positional positional : {Positional::sinusoidal, Positional::learned, Positional::rope}) {
    SCOPED_TRACE(to_string(positional));
    ModelConfig config = tiny_config();
    config.positional = positional;
    Transformer model(config, backend());
    model.initialize(kSeed);
    const Tensor src = sources(config);
    const std::vector<std::int64_t> max_lengths = max_output_lengths(config, src, kMaxExtra);
    const BeamOptions options{4, 0.6, kMaxExtra};
    RecomputingScorer oracle(model, src);
    const std::vector<Hypothesis> expected = beam_search(oracle, max_lengths, kTokens, options);
    expect_same_hypotheses(beam_search(model, src, kTokens, options), expected, per_step(config));
    RecomputingScorer greedy_oracle(model, src);
    expect_same_hypotheses(greedy_search(model, src, kTokens, kMaxExtra),
                           greedy_search(greedy_oracle, max_lengths, kTokens), per_step(config));
  }
}

TEST_P(BeamSearchTest, SentenceAloneEqualsSentenceInPaddedBatch) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Tensor src = sources(config);
  const std::vector<std::int64_t> lengths = source_lengths(src, config.pad_id);
  ASSERT_LT(lengths[1], src.dim(1)) << "the batch must pad a sentence";
  const BeamOptions options{4, 0.6, kMaxExtra};
  const std::vector<Hypothesis> batched_beam = beam_search(model, src, kTokens, options);
  const std::vector<Hypothesis> batched_greedy = greedy_search(model, src, kTokens, kMaxExtra);
  for (std::int64_t b = 0; b < src.dim(0); ++b) {
    SCOPED_TRACE("sentence " + std::to_string(b));
    Tensor alone = Tensor::empty({1, lengths[static_cast<std::size_t>(b)]}, DType::i32);
    for (std::int64_t j = 0; j < alone.dim(1); ++j) alone.set(j, src.at(b * src.dim(1) + j));
    expect_same_hypotheses(beam_search(model, alone, kTokens, options), {batched_beam[static_cast<std::size_t>(b)]},
                           per_step(config));
    expect_same_hypotheses(greedy_search(model, alone, kTokens, kMaxExtra),
                           {batched_greedy[static_cast<std::size_t>(b)]}, per_step(config));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(BeamSearchTest);

// ---- Hand-made distributions over {pad 0, BOS 1, EOS 2, a 3, b 4, c 5} ------------------------

constexpr std::int64_t kA = 3, kB = 4, kC = 5;

// log of probabilities given for EOS, a, b, c (pad and BOS get a tiny share).
std::vector<double> log_probs(double eos, double a, double b, double c) {
  return {std::log(1e-9), std::log(1e-9), std::log(eos), std::log(a), std::log(b), std::log(c)};
}

using Prefix = std::vector<std::int64_t>;

// After BOS: EOS 0.50, "a" 0.46; then a -> b -> c -> EOS each with 0.98. Unnormalised, the short
// output (EOS) has log-prob ln 0.5 = -0.693 and "a b c EOS" ln 0.46 + 3 ln 0.98 = -0.837; with
// alpha 0.6 the long one's score is -0.837 / lp(4) = -0.837 / 1.275 = -0.656 > -0.693.
// Elsewhere EOS is nearly impossible, so no other hypothesis finishes within a few steps.
std::vector<double> short_or_long(const Prefix& prefix) {
  if (prefix == Prefix{kBos}) return log_probs(0.50, 0.46, 0.02, 0.02);
  if (prefix == Prefix{kBos, kA}) return log_probs(0.02 / 3, 0.02 / 3, 0.98, 0.02 / 3);
  if (prefix == Prefix{kBos, kA, kB}) return log_probs(0.02 / 3, 0.02 / 3, 0.02 / 3, 0.98);
  if (prefix == Prefix{kBos, kA, kB, kC}) return log_probs(0.98, 0.02 / 3, 0.02 / 3, 0.02 / 3);
  return log_probs(1e-6, 1.0 / 3, 1.0 / 3, 1.0 / 3);
}

std::vector<Hypothesis> search_short_or_long(std::int64_t beam, double alpha) {
  TableScorer scorer(1, short_or_long);
  return beam_search(scorer, {10}, kTokens, {beam, alpha, 0});
}

TEST(LengthPenalty, IsTheGnmtFormula) {
  // ((5 + n) / 6)^alpha at points computed by hand.
  EXPECT_DOUBLE_EQ(length_penalty(1, 0.6), 1.0);
  EXPECT_DOUBLE_EQ(length_penalty(7, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(length_penalty(13, 0.5), std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(length_penalty(19, 2.0), 16.0);
  EXPECT_DOUBLE_EQ(length_penalty(40, 0.0), 1.0);
  EXPECT_NEAR(length_penalty(4, 0.6), std::exp(0.6 * std::log(1.5)), 1e-15);
}

TEST(LengthPenalty, ChangesTheChosenHypothesis) {
  const Hypothesis without = search_short_or_long(4, 0.0).front();
  EXPECT_TRUE(without.tokens.empty());
  EXPECT_TRUE(without.ended);
  EXPECT_NEAR(without.score, std::log(0.5), 1e-12);

  const Hypothesis with = search_short_or_long(4, 0.6).front();
  EXPECT_EQ(with.tokens, (Prefix{kA, kB, kC}));
  EXPECT_TRUE(with.ended);
  const double log_prob = std::log(0.46) + 3 * std::log(0.98);
  EXPECT_NEAR(with.log_prob, log_prob, 1e-12);
  // Applied once, to the finished hypothesis of 4 tokens (EOS included).
  EXPECT_NEAR(with.score, log_prob / std::pow(9.0 / 6.0, 0.6), 1e-12);
}

TEST(BeamSearch, BeamOfOneTakesTheGreedyShortOutput) {
  EXPECT_TRUE(search_short_or_long(1, 0.6).front().tokens.empty());
  TableScorer scorer(1, short_or_long);
  EXPECT_TRUE(greedy_search(scorer, {10}, kTokens).front().tokens.empty());
}

TEST(BeamSearch, NeverProducesPadOrBos) {
  // Pad and BOS are the most probable tokens everywhere; "a" next, EOS after three tokens.
  auto distribution = [](const Prefix& prefix) {
    std::vector<double> p = {std::log(0.4), std::log(0.3), std::log(0.01), std::log(0.2), std::log(0.05),
                             std::log(0.04)};
    if (prefix.size() == 4) p[kEos] = std::log(0.25);
    return p;
  };
  TableScorer beam_scorer(1, distribution);
  const Hypothesis beam = beam_search(beam_scorer, {10}, kTokens, {2, 0.6, 0}).front();
  EXPECT_EQ(beam.tokens, (Prefix{kA, kA, kA}));
  TableScorer greedy_scorer(1, distribution);
  EXPECT_EQ(greedy_search(greedy_scorer, {10}, kTokens).front().tokens, (Prefix{kA, kA, kA}));
}

TEST(BeamSearch, StopsAtTheMaximumLengthWithoutEos) {
  auto never_eos = [](const Prefix&) { return log_probs(1e-9, 0.5, 0.3, 0.2); };
  TableScorer scorer(2, never_eos);
  const std::vector<Hypothesis> out = beam_search(scorer, {3, 5}, kTokens, {4, 0.6, 0});
  EXPECT_EQ(out[0].tokens, (Prefix{kA, kA, kA}));
  EXPECT_EQ(out[1].tokens, (Prefix{kA, kA, kA, kA, kA}));
  EXPECT_FALSE(out[0].ended);
  EXPECT_NEAR(out[1].score, 5 * std::log(0.5) / length_penalty(5, 0.6), 1e-12);
}

// Beam 2, alpha 0.6. Step 1: a 0.45, EOS 0.35, b 0.20: the empty output finishes, ln 0.35 / lp(1)
// = -1.050. Step 2: after "a", c 0.95; after "b", EOS 0.9: "b EOS" finishes, ln(0.2 * 0.9) /
// lp(2) = -1.563. k_finished stops there, with two finished, and returns the empty output; but
// "a c EOS" (EOS 0.99 after "a c") scores ln(0.45 * 0.95 * 0.99) / lp(3) = -0.724, and the bound
// after step 2, ln(0.45 * 0.95) / lp(10) = -0.49, says it still may win: bound finds it, as greedy
// search does.
std::vector<double> early_short_finish(const Prefix& prefix) {
  if (prefix == Prefix{kBos}) return log_probs(0.35, 0.45, 0.20, 1e-6);
  if (prefix == Prefix{kBos, kA}) return log_probs(0.02, 1e-6, 0.03, 0.95);
  if (prefix == Prefix{kBos, kB}) return log_probs(0.9, 0.05, 0.05, 1e-6);
  if (prefix == Prefix{kBos, kA, kC}) return log_probs(0.99, 0.005, 0.005, 1e-6);
  return log_probs(1e-6, 1.0 / 3, 1.0 / 3, 1.0 / 3);
}

TEST(BeamSearch, KFinishedStopsBeforeABetterLongerHypothesisThatBoundFinds) {
  TableScorer k_finished_scorer(1, early_short_finish);
  const Hypothesis k_finished = beam_search(k_finished_scorer, {10}, kTokens, {2, 0.6, 0, BeamStop::k_finished}).front();
  EXPECT_TRUE(k_finished.tokens.empty());
  EXPECT_NEAR(k_finished.score, std::log(0.35), 1e-12);  // lp(1) = 1

  TableScorer bound_scorer(1, early_short_finish);
  const Hypothesis bound = beam_search(bound_scorer, {10}, kTokens, {2, 0.6, 0, BeamStop::bound}).front();
  EXPECT_EQ(bound.tokens, (Prefix{kA, kC}));
  EXPECT_NEAR(bound.score, std::log(0.45 * 0.95 * 0.99) / length_penalty(3, 0.6), 1e-12);

  TableScorer greedy_scorer(1, early_short_finish);
  EXPECT_EQ(greedy_search(greedy_scorer, {10}, kTokens).front().tokens, (Prefix{kA, kC}));
}

// With bound, an EOS ranked between K and 2K finishes its hypothesis too (k_finished drops it):
// at step 2 "a EOS", ln(0.6 * 0.3) = -1.71, is the 4th of the best 4 with beam 2 (after "a b",
// "a c" and "b a"), scored -1.71 / lp(2) = -1.56; every other path goes on with tokens of 0.5 at
// best and ends at length 4 without EOS, ln(0.6 * 0.35 * 0.5^2) / lp(4) = -2.31.
TEST(BeamSearch, BoundFinishesAnEosAmongTheBestTwoK) {
  auto distribution = [](const Prefix& prefix) {
    if (prefix == Prefix{kBos}) return log_probs(1e-6, 0.6, 0.4, 1e-6);
    if (prefix == Prefix{kBos, kA}) return log_probs(0.3, 1e-6, 0.35, 0.35);
    return log_probs(1e-9, 0.5, 0.25, 0.25);
  };
  TableScorer bound_scorer(1, distribution);
  const Hypothesis bound = beam_search(bound_scorer, {4}, kTokens, {2, 0.6, 0, BeamStop::bound}).front();
  EXPECT_EQ(bound.tokens, (Prefix{kA}));
  EXPECT_TRUE(bound.ended);
  TableScorer k_finished_scorer(1, distribution);
  EXPECT_FALSE(beam_search(k_finished_scorer, {4}, kTokens, {2, 0.6, 0, BeamStop::k_finished}).front().ended);
}

TEST(BeamStop, NamesAreTheCommandLines) {
  EXPECT_EQ(to_string(BeamStop::k_finished), "k_finished");
  EXPECT_EQ(to_string(BeamStop::bound), "bound");
}

// A scorer that counts its calls.
class CountingScorer : public TableScorer {
 public:
  using TableScorer::TableScorer;
  Tensor next_log_probs(const std::vector<std::int64_t>& tokens) override {
    ++calls;
    return TableScorer::next_log_probs(tokens);
  }
  int calls = 0;
};

TEST(BeamSearch, StopsEarlyWhenNoLiveHypothesisCanWin) {
  // EOS first with 0.999: every live hypothesis has log-prob <= ln(0.001 / 3) = -8.0, and its
  // best possible score -8.0 / lp(10) = -4.6 cannot beat ln 0.999; stop after one step although
  // only one of the four beams finished.
  CountingScorer scorer(1, [](const Prefix&) { return log_probs(0.999, 0.001 / 3, 0.001 / 3, 0.001 / 3); });
  const Hypothesis h = beam_search(scorer, {10}, kTokens, {4, 0.6, 0}).front();
  EXPECT_TRUE(h.tokens.empty());
  EXPECT_EQ(scorer.calls, 1);
  // Where a live hypothesis could still win (EOS 0.4), the search goes on.
  CountingScorer undecided(1, [](const Prefix& prefix) {
    return prefix.size() == 1 ? log_probs(0.4, 0.5, 0.05, 0.05) : log_probs(0.9, 0.05, 0.03, 0.02);
  });
  beam_search(undecided, {10}, kTokens, {4, 0.6, 0});
  EXPECT_GT(undecided.calls, 1);
}

TEST(BeamSearch, MaxOutputLengthIsTheSourceLengthPlusExtra) {
  // The paper (section 6.1): at most input length + 50 tokens. Pad ids do not count as input;
  // a learned position table has no row past max_len - 1, so it caps the length there.
  ModelConfig config = tiny_config();
  const Tensor src = Tensor::from_values({2, 5}, DType::i32, {5, 6, 7, 0, 0, 5, 6, 7, 8, 9});
  EXPECT_EQ(source_lengths(src, config.pad_id), (std::vector<std::int64_t>{3, 5}));
  config.positional = Positional::sinusoidal;
  EXPECT_EQ(max_output_lengths(config, src, 50), (std::vector<std::int64_t>{53, 55}));
  config.positional = Positional::learned;
  config.max_len = 54;
  EXPECT_EQ(max_output_lengths(config, src, 50), (std::vector<std::int64_t>{53, 54}));
}

TEST(BeamSearch, RejectsBadOptions) {
  TableScorer scorer(1, short_or_long);
  EXPECT_THROW(beam_search(scorer, {10}, kTokens, {0, 0.6, 0}), std::invalid_argument);
  EXPECT_THROW(beam_search(scorer, {10}, kTokens, {4, -1.0, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace trepro::testing
