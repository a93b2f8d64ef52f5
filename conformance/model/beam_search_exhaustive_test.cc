// Beam search against brute-force enumeration on a tiny vocabulary: every output of at most
// L tokens is scored by hand (log-probability summed over its tokens, EOS included, divided
// once by the GNMT length penalty of its length), and the best of them is the exact answer.
// A beam wider than the number of prefixes at any step keeps every hypothesis, so it must find
// that answer; a beam of 4 must at least score what it returns exactly as the enumeration does.
// Run on hand-made random distributions (exact in double) and on a model, whose enumeration
// recomputes the full forward while the search runs on the key/value cache.
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "conformance/model/decoding_testing.h"
#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tolerances.h"
#include "model/beam_search.h"

namespace trepro::testing {
namespace {

using Prefix = std::vector<std::int64_t>;
using Distribution = TableScorer::Distribution;
const SearchTokens kTokens{0, kBos, kEos};

struct Output {
  Prefix tokens;
  bool ended = false;
  double log_prob = 0.0;
  double score = 0.0;
};

// Every output reachable from `fed` (BOS, then the tokens so far): ended by EOS at any length
// below max_length, or stopped without EOS at max_length, as model/beam_search.h defines them.
void enumerate(const Distribution& next, Prefix& fed, double log_prob, std::int64_t max_length, double alpha,
               std::vector<Output>& out) {
  const Prefix tokens(fed.begin() + 1, fed.end());
  const auto produced = static_cast<std::int64_t>(tokens.size());
  if (produced == max_length) {
    out.push_back({tokens, false, log_prob, log_prob / length_penalty(produced, alpha)});
    return;
  }
  const std::vector<double> log_probs = next(fed);
  const double ended = log_prob + log_probs[static_cast<std::size_t>(kEos)];
  out.push_back({tokens, true, ended, ended / length_penalty(produced + 1, alpha)});
  for (std::int64_t v = kFirstWord; v < static_cast<std::int64_t>(log_probs.size()); ++v) {
    fed.push_back(v);
    enumerate(next, fed, log_prob + log_probs[static_cast<std::size_t>(v)], max_length, alpha, out);
    fed.pop_back();
  }
}

// All outputs, best score first.
std::vector<Output> all_outputs(const Distribution& next, std::int64_t max_length, double alpha) {
  std::vector<Output> out;
  Prefix fed{kBos};
  enumerate(next, fed, 0.0, max_length, alpha, out);
  std::sort(out.begin(), out.end(), [](const Output& a, const Output& b) { return a.score > b.score; });
  return out;
}

const Output& find_output(const std::vector<Output>& outputs, const Hypothesis& h) {
  for (const Output& o : outputs) {
    if (o.tokens == h.tokens && o.ended == h.ended) return o;
  }
  throw std::logic_error("the search returned an output the enumeration does not have");
}

// More than the live prefixes at any step (words^(L-1)), so that no hypothesis is pruned.
std::int64_t exhaustive_beam(std::int64_t words, std::int64_t max_length) {
  return static_cast<std::int64_t>(std::pow(static_cast<double>(words), static_cast<double>(max_length))) + 1;
}

// Random log-probabilities over {pad, BOS, EOS, 4 words}, a fixed function of the prefix. Pad
// and BOS get the largest logits, so a search that produced them would be visibly wrong.
Distribution random_distribution(std::uint64_t seed) {
  return [seed](const Prefix& prefix) {
    std::vector<std::uint64_t> key = {seed};
    key.insert(key.end(), prefix.begin(), prefix.end());
    std::seed_seq seq(key.begin(), key.end());
    std::mt19937_64 rng(seq);
    std::uniform_real_distribution<double> logit(-2.5, 2.5);
    std::vector<double> logits = {4.0, 4.0};
    for (int v = 0; v < 5; ++v) logits.push_back(logit(rng));
    double sum = 0.0;
    for (double l : logits) sum += std::exp(l);
    for (double& l : logits) l -= std::log(sum);
    return logits;
  };
}

TEST(BeamSearchExhaustive, WideBeamFindsTheBestOutputOfRandomDistributions) {
  constexpr std::int64_t kMaxLength = 4, kWords = 4;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (double alpha : {0.0, 0.6, 1.0}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", alpha " + std::to_string(alpha));
      const Distribution next = random_distribution(seed);
      const std::vector<Output> outputs = all_outputs(next, kMaxLength, alpha);
      TableScorer scorer(1, next);
      const Hypothesis found =
          beam_search(scorer, {kMaxLength}, kTokens, {exhaustive_beam(kWords, kMaxLength), alpha, 0}).front();
      EXPECT_EQ(found.tokens, outputs.front().tokens);
      EXPECT_EQ(found.ended, outputs.front().ended);
      // The same terms summed in the same order.
      EXPECT_DOUBLE_EQ(found.log_prob, outputs.front().log_prob);
      EXPECT_DOUBLE_EQ(found.score, outputs.front().score);
    }
  }
}

TEST(BeamSearchExhaustive, BeamOfFourScoresItsOutputAsTheEnumerationDoes) {
  constexpr std::int64_t kMaxLength = 4;
  int exact = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Distribution next = random_distribution(seed);
    const std::vector<Output> outputs = all_outputs(next, kMaxLength, 0.6);
    TableScorer scorer(1, next);
    const Hypothesis found = beam_search(scorer, {kMaxLength}, kTokens, {4, 0.6, 0}).front();
    const Output& same = find_output(outputs, found);
    EXPECT_DOUBLE_EQ(found.log_prob, same.log_prob);
    EXPECT_DOUBLE_EQ(found.score, same.score);
    EXPECT_LE(found.score, outputs.front().score);
    exact += found.tokens == outputs.front().tokens ? 1 : 0;
  }
  // A beam of 4 over 4 words is nearly exhaustive: it should usually find the best output.
  EXPECT_GE(exact, 15);
}

class BeamSearchExhaustiveModelTest : public BackendTest {};

TEST_P(BeamSearchExhaustiveModelTest, WideBeamOnTheCacheFindsTheBestOutputOfTheFullForward) {
  constexpr std::int64_t kMaxExtra = 1;
  ModelConfig config = tiny_config();
  config.vocab_size = 7;  // 4 words
  Transformer model(config, backend());
  model.initialize(5);
  const Tensor src = Tensor::from_values({1, 2}, DType::i32, {3.0, 5.0});
  const std::int64_t max_length = 2 + kMaxExtra;
  const Tolerance per_step = tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  const double atol = per_step.atol * static_cast<double>(max_length + 1);
  // The enumeration's distribution: the full forward over BOS + prefix (the oracle scorer).
  const Distribution next = [&](const Prefix& fed) {
    RecomputingScorer oracle(model, src);
    Tensor log_probs;
    for (std::int64_t token : fed) log_probs = oracle.next_log_probs({token});
    std::vector<double> out;
    for (std::int64_t v = 0; v < log_probs.dim(1); ++v) out.push_back(log_probs.at(v));
    return out;
  };
  for (double alpha : {0.0, 0.6}) {
    SCOPED_TRACE("alpha " + std::to_string(alpha));
    const std::vector<Output> outputs = all_outputs(next, max_length, alpha);
    const Output& best = outputs[0];
    const double tol = atol + per_step.rtol * std::abs(best.score);
    // Otherwise the two computations could disagree on a near-tie without either being wrong.
    ASSERT_GT(best.score - outputs[1].score, 2 * tol) << "near-tie: choose another seed";
    const Hypothesis found =
        beam_search(model, src, kTokens, {exhaustive_beam(config.vocab_size - kFirstWord, max_length), alpha, kMaxExtra})
            .front();
    EXPECT_EQ(found.tokens, best.tokens);
    EXPECT_EQ(found.ended, best.ended);
    EXPECT_NEAR(found.log_prob, best.log_prob, atol + per_step.rtol * std::abs(best.log_prob));
    EXPECT_NEAR(found.score, best.score, tol);
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(BeamSearchExhaustiveModelTest);

}  // namespace
}  // namespace trepro::testing
