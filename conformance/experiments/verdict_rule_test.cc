// The verdict rule's statistics (experiments/ablation/verdict_rule.h): Holm and Benjamini-Hochberg
// on textbook p values, pooling, the A/A calibration on synthetic configs with a known seed
// variance, the difference and equivalence tests, and power. scipy checks the same functions on
// the committed summaries (verdicts_scipy_check.py).
#include "experiments/ablation/verdict_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace trepro {
namespace {

// Benjamini & Hochberg (1995), section 4: 15 p values from a study of myocardial infarction
// treatments. BH at 0.05 rejects the 4 smallest; Holm (like Bonferroni, p <= 0.0033) the 3
// smallest. The adjusted values are p.adjust's in R ("BH", "holm").
const std::vector<double> kBenjaminiHochberg1995 = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                                                    0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000};

TEST(Multiplicity, BenjaminiHochbergOnTheir1995Example) {
  const std::vector<double> expected = {0.0015, 0.003,  0.0095,   0.035625, 0.0603,   0.0638571, 0.0638571, 0.0645,
                                        0.0765, 0.486,  0.581182, 0.714875, 0.753231, 0.813214,  1.0};
  const std::vector<double> q = benjamini_hochberg(kBenjaminiHochberg1995);
  ASSERT_EQ(q.size(), expected.size());
  for (std::size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], expected[i], 1e-6) << i;
  EXPECT_EQ(std::count_if(q.begin(), q.end(), [](double v) { return v < 0.05; }), 4);
}

TEST(Multiplicity, HolmOnTheSameExample) {
  const std::vector<double> expected = {0.0015, 0.0056, 0.0247, 0.114, 0.2211, 0.278, 0.278, 0.278,
                                        0.3213, 1.0,    1.0,    1.0,   1.0,    1.0,   1.0};
  const std::vector<double> holm = holm_adjusted(kBenjaminiHochberg1995);
  for (std::size_t i = 0; i < holm.size(); ++i) EXPECT_NEAR(holm[i], expected[i], 1e-12) << i;
  EXPECT_EQ(std::count_if(holm.begin(), holm.end(), [](double v) { return v < 0.05; }), 3);
}

TEST(Multiplicity, KeepsTheInputOrderAndMonotonicity) {
  // Holm: sorted 0.005 * 4, 0.01 * 3, 0.03 * 2, 0.04 * 1 -> 0.02, 0.03, 0.06, max(0.06, 0.04).
  const std::vector<double> holm = holm_adjusted({0.01, 0.04, 0.03, 0.005});
  EXPECT_NEAR(holm[0], 0.03, 1e-15);
  EXPECT_NEAR(holm[1], 0.06, 1e-15);
  EXPECT_NEAR(holm[2], 0.06, 1e-15);
  EXPECT_NEAR(holm[3], 0.02, 1e-15);
  // BH: 0.005 * 4 / 1, 0.01 * 4 / 2, 0.03 * 4 / 3, 0.04 * 4 / 4 -> 0.02, 0.02, 0.04, 0.04.
  const std::vector<double> q = benjamini_hochberg({0.01, 0.04, 0.03, 0.005});
  EXPECT_NEAR(q[0], 0.02, 1e-15);
  EXPECT_NEAR(q[1], 0.04, 1e-15);
  EXPECT_NEAR(q[2], 0.04, 1e-15);
  EXPECT_NEAR(q[3], 0.02, 1e-15);
  EXPECT_TRUE(holm_adjusted({}).empty());
  EXPECT_THROW(holm_adjusted({0.5, 1.5}), std::invalid_argument);
  EXPECT_THROW(benjamini_hochberg({std::nan("")}), std::invalid_argument);
}

TEST(PoolVariances, WeighsEachConfigByItsDegreesOfFreedom) {
  const PooledVariance p = pool_variances({{1.0, 2}, {4.0, 3}, {100.0, 1}});  // the last: one seed, nothing
  EXPECT_DOUBLE_EQ(p.variance, (1.0 * 1 + 4.0 * 2) / 3);
  EXPECT_EQ(p.df, 3.0);
  EXPECT_EQ(p.configs, 2u);
  EXPECT_EQ(pool_variances({{1.0, 1}}).df, 0.0);
}

// Synthetic configs: seeds drawn around each config's mean with variance k * v_i, v_i the
// bootstrap's per-system variance. The factor is about k, and its interval holds k.
Calibration synthetic_calibration(double k, std::uint32_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> bootstrap_variance(0.05, 0.3);
  std::vector<CalibrationSample> samples;
  for (int config = 0; config < 400; ++config) {
    const double v = bootstrap_variance(random);
    std::normal_distribution<double> bleu(30.0 + config % 7, std::sqrt(k * v));
    const std::size_t n = 2 + config % 2;
    std::vector<double> seeds;
    for (std::size_t s = 0; s < n; ++s) seeds.push_back(bleu(random));
    const SeedSpread spread = seed_spread(seeds);
    samples.push_back({spread.sd * spread.sd, v, n});
  }
  const std::optional<Calibration> c = calibrate(samples);
  if (!c) throw std::runtime_error("no calibration");
  return *c;
}

TEST(Calibration, ComesOutNearOneWhenTheBootstrapMatchesTheSeeds) {
  const Calibration c = synthetic_calibration(1.0, 7);
  EXPECT_EQ(c.df, 600.0);  // 200 configs of 2 seeds, 200 of 3
  EXPECT_NEAR(c.factor, 1.0, 0.15);
  EXPECT_LT(c.interval.low, 1.0);
  EXPECT_GT(c.interval.high, 1.0);
}

TEST(Calibration, ComesOutNearKWhenTheSeedsVaryKTimesMore) {
  for (const double k : {2.0, 4.0}) {
    const Calibration c = synthetic_calibration(k, 11);
    EXPECT_NEAR(c.factor / k, 1.0, 0.15) << k;
    EXPECT_LT(c.interval.low, k) << k;
    EXPECT_GT(c.interval.high, k) << k;
    EXPECT_GT(c.interval.low, 1.0) << k;  // distinguishable from a calibrated bootstrap
  }
  EXPECT_EQ(calibrate({{1.0, 0.5, 1}}), std::nullopt);
}

TEST(Calibration, TheChiSquareIntervalOfTwoPairs) {
  // Two configs of two seeds, s^2 / v = 1 and 3: factor 2 on 2 df; scipy.stats.chi2.ppf(0.975, 2)
  // = 7.377758908227871, ppf(0.025, 2) = 0.05063561596857975.
  const std::optional<Calibration> c = calibrate({{1.0, 1.0, 2}, {1.5, 0.5, 2}});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->factor, 2.0);
  EXPECT_NEAR(c->interval.low, 4.0 / 7.377758908227871, 1e-12);
  EXPECT_NEAR(c->interval.high, 4.0 / 0.05063561596857975, 1e-9);
}

TEST(ErrorModel, AddsTheTestSetPartAndSatterthwaitesDegrees) {
  // Seed part 0.18 * (1/2 + 1/2) = 0.18, test set 0.02: se sqrt(0.2); df 34 * (0.2 / 0.18)^2.
  const ErrorModel e = error_model(0.18, 34, 2, 2, 0.02);
  EXPECT_NEAR(e.standard_error, std::sqrt(0.2), 1e-15);
  EXPECT_NEAR(e.df, 34 * (0.2 / 0.18) * (0.2 / 0.18), 1e-12);
  EXPECT_EQ(error_model(0.18, 34, 3, 2, 0.0).df, 34.0);
  EXPECT_THROW(error_model(0.18, 0, 2, 2, 0.0), std::invalid_argument);
}

TEST(DifferenceTest, IsStudentsTwoSidedTest) {
  // t = 1 / 0.4 = 2.5 on 4 df: scipy 2 * t.sf(2.5, 4) = 0.06676654481198813; t.ppf(0.975, 4)
  // = 2.7764451051977987.
  const DifferenceTest t = directional_test(1.0, {0.4, 4});
  EXPECT_DOUBLE_EQ(t.statistic, 2.5);
  EXPECT_NEAR(t.p_value, 0.06676654481198813, 1e-14);
  EXPECT_NEAR(t.interval.low, 1.0 - 0.4 * 2.7764451051977987, 1e-12);
  EXPECT_EQ(directional_test(-1.0, {0.4, 4}).p_value, t.p_value);
}

TEST(EquivalenceTest, TwoOneSidedTestsAgainstTheMargin) {
  // d 0.2, margin 1, se 0.3, df 10: p = max(t.sf((0.2 + 1) / 0.3, 10), t.cdf((0.2 - 1) / 0.3, 10))
  // = t.cdf(-2.6667, 10) (scipy 0.011813676598822329).
  const EquivalenceTest inside = equivalence_test(0.2, {0.3, 10}, 1.0);
  EXPECT_NEAR(inside.p_equivalent, 0.011813676598822329, 1e-12);
  EXPECT_GT(inside.p_beyond, 0.5);
  // d 2, margin 1: beyond it; 2 * t.sf((2 - 1) / 0.3, 10) = (scipy 0.007575166498185299).
  const EquivalenceTest beyond = equivalence_test(2.0, {0.3, 10}, 1.0);
  EXPECT_NEAR(beyond.p_beyond, 0.007575166498185299, 1e-12);
  EXPECT_GT(beyond.p_equivalent, 0.99);
  EXPECT_THROW(equivalence_test(0.0, {0.3, 10}, 0.0), std::invalid_argument);
}

TEST(Power, SeedsForEightyPercent) {
  // No test-set part, sd 1, effect 1, level 0.05, a large pool: about 2 (1.96 + 0.84)^2 = 15.7,
  // so 16 or 17 seeds per arm (the t's tails add one).
  PowerQuestion q{.effect = 1.0, .seed_variance = 1.0, .seed_df = 200, .seeds_now = 2, .test_set_variance = 0.0,
                  .level = 0.05};
  const std::optional<std::size_t> n = seeds_for_power(q);
  ASSERT_TRUE(n);
  EXPECT_GE(*n, 16u);
  EXPECT_LE(*n, 17u);
  // Power at the returned n reaches 80%, one seed fewer does not.
  EXPECT_GE(directional_power(1.0, error_model(1.0, 200 + 2.0 * (*n - 2), *n, *n, 0.0), 0.05), 0.8);
  EXPECT_LT(directional_power(1.0, error_model(1.0, 200 + 2.0 * (*n - 3), *n - 1, *n - 1, 0.0), 0.05), 0.8);
  // A stricter level needs more seeds.
  q.level = 0.05 / 30;
  EXPECT_GT(*seeds_for_power(q), *n);
  // The test set's own variance floors the error: an effect below it is never decided.
  q.test_set_variance = 1.0;
  q.effect = 0.5;
  EXPECT_EQ(seeds_for_power(q), std::nullopt);
  // TOST at a true difference of 0 with margin 1 needs fewer seeds than detecting 1.
  PowerQuestion e = q;
  e.test_set_variance = 0.0;
  e.level = 0.05;
  e.effect = 0.0;
  e.margin = 1.0;
  ASSERT_TRUE(seeds_for_power(e));
  EXPECT_LT(*seeds_for_power(e), 20u);
}

}  // namespace
}  // namespace trepro
