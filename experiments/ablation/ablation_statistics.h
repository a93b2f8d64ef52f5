// The statistics of a seeded ablation: the spread of a metric over seeds, the paired bootstrap of
// a BLEU difference over test sentences (sacreBLEU's paired-bs, Koehn 2004), and the verdict on a
// claim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/bleu/bleu.h"

namespace trepro {

struct SeedSpread {
  std::size_t n = 0;
  double mean = 0.0;
  double sd = 0.0;  // sample standard deviation (n - 1); 0 for one value, where it is undefined
};
SeedSpread seed_spread(const std::vector<double>& values);

// Student's t and the normal distribution at any point (Boost.Math): a Holm-adjusted test needs
// quantiles far beyond the 97.5% a table holds. `degrees` > 0 and may be fractional (Welch-
// Satterthwaite); +infinity gives the normal's. Throw std::invalid_argument on a bad argument.
double student_t_quantile(double probability, double degrees);
double student_t_cdf(double t, double degrees);
// P(|T| >= |t|) for T ~ t(degrees).
double student_t_two_sided_p(double t, double degrees);

// numpy.percentile's default (linear interpolation between the closest ranks) of sorted values,
// q in [0, 1].
double sorted_percentile(const std::vector<double>& sorted, double q);

struct Interval {
  double low = 0.0, high = 0.0;
};

// The mean of `differences` (one per seed) with its 95% t interval; nullopt for fewer than 2.
struct MeanDifference {
  double mean = 0.0;
  Interval interval;
};
std::optional<MeanDifference> t_interval(const std::vector<double>& differences);

// Corpus BLEU (sacreBLEU's defaults) of sentences' statistics summed.
double corpus_bleu_of(const std::vector<bleu::BleuStats>& sentences);

// Per-sentence BLEU statistics of one system's hypotheses (sacreBLEU's defaults: 13a, mixed case).
std::vector<bleu::BleuStats> sentence_bleu_stats(const std::vector<std::string>& hypotheses,
                                                 const std::vector<std::string>& references);

// The two p values of a bootstrap with resampled differences d* and observed difference d:
// - bootstrap_p_value, the two-sided test of the resampled differences shifted to mean zero (the
//   null hypothesis of no difference): (1 + #{|d* - mean(d*)| >= |d|}) / (1 + R). Two identical
//   systems get p = 1.
// - sacrebleu_p_value, sacreBLEU 2.x's paired-bs formula on the same resamples (ours are drawn by
//   Philox, sacreBLEU's by numpy, so the values match its output only in distribution):
//   (1 + #{|d*| - mean(|d*|) > |d|}) / (1 + R). Centring after taking magnitudes makes it smaller
//   (1 / (1 + R) for identical systems), so it is reported, not used.
double bootstrap_p_value(const std::vector<double>& resampled, double observed);
double sacrebleu_p_value(const std::vector<double>& resampled, double observed);

// Paired bootstrap resampling of the test sentences, sacreBLEU's paired-bs method: `resamples`
// samples of the sentence indices with replacement, drawn from `seed`; in each, the corpus BLEU
// of every system on the sample. The difference is the mean over seeds (pairs) of
// BLEU(system) - BLEU(baseline), pairs[k] = {system stats, baseline stats} of seed k, all on the
// same sentences. The interval is the 2.5 and 97.5 percentiles of the resampled differences. It
// measures the test sentences' sampling error only, not the spread between training seeds
// (t_interval over the per-seed differences gives that).
struct BootstrapResult {
  double difference = 0.0;  // on the whole test set
  Interval interval;
  double variance = 0.0;  // sample variance (R - 1) of the resampled differences: the test set's part
  double p_value = 1.0;            // bootstrap_p_value
  double p_value_sacrebleu = 1.0;  // sacrebleu_p_value
  std::size_t resamples = 0;
};
using SystemPair = std::pair<std::vector<bleu::BleuStats>, std::vector<bleu::BleuStats>>;
BootstrapResult paired_bootstrap(const std::vector<SystemPair>& pairs, std::size_t resamples, std::uint64_t seed);

// 10,000: a p value floored at 1 / 1,001 would sit just under Holm's first threshold for 37
// claims (0.05 / 37 = 0.00135), and the variance of the resampled differences is then within
// about 1.4% of its limit.
inline constexpr std::size_t kBootstrapResamples = 10000;
inline constexpr std::uint64_t kBootstrapSeed = 12345;  // sacreBLEU's default

// The verdict of a claim whose every seed was decided by a divergence (advantages +-infinity,
// ablation_summary.h): "reproduced" when only the worse variant diverged in every seed,
// "contradicted" when only the better one did; nullopt otherwise (some seed has a finite value
// or none: the statistical test, verdict_rule.h, decides).
std::optional<std::string> divergence_verdict(const std::vector<double>& advantages);

}  // namespace trepro
