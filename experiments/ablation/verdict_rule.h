// The statistics behind a claim's verdict (issue 55): the between-seed variance of one config
// pooled over many, the test of a difference between two arms with it (plus, for BLEU, the test
// set's own sampling variance from the paired bootstrap), Holm and Benjamini-Hochberg adjusted p
// values over all claims, the A/A calibration of the bootstrap against the seeds, and the seeds per
// arm a test needs for 80% power. Seed agreement is no part of the rule: a rule that needs every
// seed on one side gets less likely to pass as seeds are added.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "experiments/ablation/ablation_statistics.h"

namespace trepro {

// Holm's step-down adjusted p values (Holm 1979), in the input's order: p_(i) * (m - i + 1),
// made monotone and capped at 1. A claim is rejected at level alpha when its value is < alpha.
std::vector<double> holm_adjusted(const std::vector<double>& p);
// Benjamini-Hochberg q values (1995), in the input's order: min over j >= i of p_(j) * m / j.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

// One config's seeds: the sample variance (n - 1) of a metric over its n seeds.
struct SeedSample {
  double variance = 0.0;
  std::size_t n = 0;
};
struct PooledVariance {
  double variance = 0.0;   // sum (n_i - 1) s_i^2 / sum (n_i - 1)
  double df = 0.0;         // sum (n_i - 1)
  std::size_t configs = 0; // those with n_i >= 2
};
// Configs with fewer than 2 seeds add nothing; df 0 when none has 2.
PooledVariance pool_variances(const std::vector<SeedSample>& samples);

// A/A calibration: each config's between-seed variance s_i^2 against the per-system variance
// the sentence bootstrap predicts, v_i (half the bootstrap variance of the BLEU difference of two
// of its seeds). Under "seeds vary as the bootstrap says, times c", (n_i - 1) s_i^2 / v_i ~
// c chi^2(n_i - 1), so the estimate sum (n_i - 1) s_i^2 / v_i / df has a chi-square interval.
struct CalibrationSample {
  double seed_variance = 0.0;       // s_i^2
  double bootstrap_variance = 0.0;  // v_i
  std::size_t n = 0;
};
struct Calibration {
  double factor = 0.0;
  Interval interval;  // 95%
  double df = 0.0;    // sum (n_i - 1)
  std::size_t configs = 0;
};
// nullopt when no config has 2 seeds with a bootstrap variance > 0.
std::optional<Calibration> calibrate(const std::vector<CalibrationSample>& samples);

// The standard error of a difference of arm means with n_better and n_worse seeds, pooled
// per-arm seed variance `seed_variance` (df `seed_df`) and a test-set variance of the difference
// that seeds do not average out (0 for perplexity), with Welch-Satterthwaite's degrees of freedom
// (the test-set part counted as known: 10,000 resamples).
struct ErrorModel {
  double standard_error = 0.0;
  double df = 0.0;
};
ErrorModel error_model(double seed_variance, double seed_df, std::size_t n_better, std::size_t n_worse,
                       double test_set_variance);

struct DifferenceTest {
  double statistic = 0.0;
  double p_value = 1.0;
  Interval interval;  // 95%, unadjusted
};
// H0: no difference; two-sided.
DifferenceTest directional_test(double estimate, const ErrorModel& error);
// Equivalence within (-margin, margin) by two one-sided tests (Lakens 2017): p = the larger one-
// sided p. Beyond the margin, `p_beyond` tests H0: |difference| <= margin two-sided (twice the
// smaller one-sided p), so that a difference clearly outside counts as a contradiction.
struct EquivalenceTest {
  double p_equivalent = 1.0;
  double p_beyond = 1.0;
  Interval interval;  // 90%: inside the margin exactly when TOST rejects at 5%
};
EquivalenceTest equivalence_test(double estimate, const ErrorModel& error, double margin);

// Power of the two-sided test at `level` when the true difference is `effect` (the shifted-t
// approximation of the noncentral t, as G*Power's and R's power.t.test(strict = TRUE) tails).
double directional_power(double effect, const ErrorModel& error, double level);
// Power of TOST at `level` for a true difference `effect` within `margin`.
double equivalence_power(double effect, const ErrorModel& error, double margin, double level);

// The least seeds per arm, 2 to kMaxSeedsPerArm, at which the claim's test reaches `target`
// power, the pool gaining 2 df per seed added to the claim's arms; nullopt when none does (the
// test set's variance alone may make an effect undecidable at any seeds).
inline constexpr std::size_t kMaxSeedsPerArm = 1000;
struct PowerQuestion {
  double effect = 0.0;
  double seed_variance = 0.0, seed_df = 0.0;
  std::size_t seeds_now = 0;  // per arm, already in the pool
  double test_set_variance = 0.0;
  double level = 0.05;
  double margin = 0.0;  // > 0: an equivalence test
};
std::optional<std::size_t> seeds_for_power(const PowerQuestion& q, double target = 0.8);

}  // namespace trepro
