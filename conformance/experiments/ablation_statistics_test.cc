// The statistics of seeded ablations (experiments/ablation/ablation_statistics.h): spreads over
// seeds, t intervals (Boost.Math against scipy's values), the paired bootstrap of BLEU differences and
// the divergence rule, each against values worked out by hand or by scipy.
#include "experiments/ablation/ablation_statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace trepro {
namespace {

TEST(SeedSpread, MeanAndSampleStandardDeviation) {
  const SeedSpread s = seed_spread({1.0, 2.0, 6.0});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.sd, std::sqrt(7.0));  // ((4 + 1 + 9) / 2)^0.5
  EXPECT_EQ(seed_spread({5.0}).sd, 0.0);
}

TEST(TInterval, UsesStudentsQuantile) {
  EXPECT_EQ(t_interval({1.0}), std::nullopt);
  // mean 2, sd sqrt(2), half-width t(0.975, 1) * sqrt(2) / sqrt(2)
  const auto t = t_interval({1.0, 3.0});
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->mean, 2.0);
  EXPECT_NEAR(t->interval.low, 2.0 - 12.706204736432095, 1e-8);
  EXPECT_NEAR(t->interval.high, 2.0 + 12.706204736432095, 1e-8);
}

// Boost.Math against scipy.stats 1.10 (t.ppf, t.sf, t.cdf, norm.ppf, norm.sf), at the 97.5% a
// table would hold and at the far tails a Holm-adjusted test needs.
TEST(StudentT, QuantilesAndTailsMatchScipy) {
  // Boost inverts the cdf to about 1e-10 relative (its default policy); the tails are exact.
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302652729911275, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0422724563012373, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 31), 2.0395134463964077, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 1000), 1.9623390808264074, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.9995, 7.5), 5.2077256558412905, 1e-8);  // fractional df
  EXPECT_NEAR(student_t_quantile(0.975, INFINITY), 1.959963984540054, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(2.5, 4), 0.06676654481198813, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(-10, 3.3), 0.0014024814276670861, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(7, INFINITY) / 2.55962508777167e-12, 1.0, 1e-9);  // the tail's digits kept
  EXPECT_NEAR(student_t_cdf(-1.2, 6), 0.13768358139007608, 1e-14);
  EXPECT_EQ(student_t_two_sided_p(0, 5), 1.0);
  EXPECT_THROW(student_t_quantile(0.975, 0), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1.0, 5), std::invalid_argument);
  EXPECT_THROW(student_t_two_sided_p(std::nan(""), 5), std::invalid_argument);
}

TEST(SortedPercentile, InterpolatesLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4, 10], [2.5, 97.5]) = [1.1, 9.4]
  EXPECT_NEAR(sorted_percentile({1, 2, 3, 4, 10}, 0.025), 1.1, 1e-12);
  EXPECT_NEAR(sorted_percentile({1, 2, 3, 4, 10}, 0.975), 9.4, 1e-12);
  EXPECT_EQ(sorted_percentile({7}, 0.975), 7.0);
  EXPECT_THROW(sorted_percentile({}, 0.5), std::invalid_argument);
}

TEST(BootstrapPValue, CentresBeforeTakingMagnitudesUnlikeSacreBleu) {
  // d* = {-1, 0.5, 1, 2.5}, d = 1. Centred: mean 0.75, |d* - 0.75| = {1.75, 0.25, 0.25, 1.75},
  // two >= 1: p = 3 / 5. sacreBLEU: |d*| = {1, 0.5, 1, 2.5}, mean 1.25, |d*| - 1.25 =
  // {-0.25, -0.75, -0.25, 1.25}, one > 1: p = 2 / 5 (sacrebleu/significance.py, _compute_p_value).
  const std::vector<double> resampled = {-1.0, 0.5, 1.0, 2.5};
  EXPECT_DOUBLE_EQ(bootstrap_p_value(resampled, 1.0), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(sacrebleu_p_value(resampled, 1.0), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(bootstrap_p_value(resampled, -1.0), 3.0 / 5.0);  // two-sided
  // Ties: >= counts them in the centred test, sacreBLEU's strict > does not.
  EXPECT_DOUBLE_EQ(bootstrap_p_value({0.0, 0.0}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(sacrebleu_p_value({0.0, 0.0}, 0.0), 1.0 / 3.0);
}

TEST(DivergenceVerdict, OnlyADivergenceInEverySeedDecides) {
  constexpr double worse_diverged = INFINITY, better_diverged = -INFINITY;
  EXPECT_EQ(divergence_verdict({worse_diverged, worse_diverged}), "reproduced");
  EXPECT_EQ(divergence_verdict({better_diverged, better_diverged}), "contradicted");
  EXPECT_EQ(divergence_verdict({worse_diverged, 1.0}), std::nullopt);  // the test decides, or nothing
  EXPECT_EQ(divergence_verdict({worse_diverged, better_diverged}), std::nullopt);
  EXPECT_EQ(divergence_verdict({std::nan(""), worse_diverged}), std::nullopt);
  EXPECT_EQ(divergence_verdict({}), std::nullopt);
}

std::vector<std::string> numbered(const std::string& stem, int count) {
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) lines.push_back(stem + " number " + std::to_string(i) + " is here .");
  return lines;
}

TEST(PairedBootstrap, IdenticalSystemsDifferByNothing) {
  const std::vector<std::string> refs = numbered("a sentence", 40);
  const auto stats = sentence_bleu_stats(numbered("a sentence", 40), refs);
  const BootstrapResult r = paired_bootstrap({{stats, stats}}, 200, kBootstrapSeed);
  EXPECT_EQ(r.difference, 0.0);
  EXPECT_EQ(r.interval.low, 0.0);
  EXPECT_EQ(r.interval.high, 0.0);
  EXPECT_EQ(r.p_value, 1.0);  // every resample is as extreme as 0
  EXPECT_EQ(r.p_value_sacrebleu, 1.0 / 201.0);
}

TEST(PairedBootstrap, AClearlyBetterSystemHasAnIntervalAboveZero) {
  const std::vector<std::string> refs = numbered("a sentence", 60);
  std::vector<std::string> worse = refs;
  for (std::size_t i = 0; i < worse.size(); i += 2) worse[i] = "something else entirely";
  const auto good = sentence_bleu_stats(refs, refs), bad = sentence_bleu_stats(worse, refs);
  const BootstrapResult r = paired_bootstrap({{good, bad}, {good, bad}}, 1000, kBootstrapSeed);
  EXPECT_GT(r.difference, 10.0);
  EXPECT_GT(r.interval.low, 0.0);
  EXPECT_LT(r.p_value, 0.01);
  EXPECT_EQ(r.resamples, 1000u);
  // Deterministic: the same seed resamples the same sentences.
  const BootstrapResult again = paired_bootstrap({{good, bad}, {good, bad}}, 1000, kBootstrapSeed);
  EXPECT_EQ(again.interval.low, r.interval.low);
  EXPECT_EQ(again.p_value, r.p_value);
  // The reversed comparison mirrors it.
  const BootstrapResult reversed = paired_bootstrap({{bad, good}}, 1000, kBootstrapSeed);
  EXPECT_LT(reversed.interval.high, 0.0);
  EXPECT_DOUBLE_EQ(reversed.difference, -r.difference);
}

TEST(PairedBootstrap, MismatchedSystemsAreErrors) {
  const auto three = sentence_bleu_stats(numbered("x", 3), numbered("x", 3));
  const auto two = sentence_bleu_stats(numbered("x", 2), numbered("x", 2));
  EXPECT_THROW(paired_bootstrap({{three, two}}, 10, 1), std::invalid_argument);
  EXPECT_THROW(paired_bootstrap({}, 10, 1), std::invalid_argument);
  EXPECT_THROW(sentence_bleu_stats(numbered("x", 3), numbered("x", 2)), std::invalid_argument);
}

}  // namespace
}  // namespace trepro
