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
  double sd = 0.0;  // sample standard deviation (n - 1); 0 for one value
};
SeedSpread seed_spread(const std::vector<double>& values);

// The two-sided 95% quantile of Student's t with `degrees` degrees of freedom (>= 1).
double student_t_975(std::size_t degrees);

struct Interval {
  double low = 0.0, high = 0.0;
  bool excludes_zero() const { return low > 0.0 || high < 0.0; }
};

// The mean of `differences` (one per seed) with its 95% t interval; nullopt for fewer than 2.
struct MeanDifference {
  double mean = 0.0;
  Interval interval;
};
std::optional<MeanDifference> t_interval(const std::vector<double>& differences);

// Per-sentence BLEU statistics of one system's hypotheses (sacreBLEU's defaults: 13a, mixed case).
std::vector<bleu::BleuStats> sentence_bleu_stats(const std::vector<std::string>& hypotheses,
                                                 const std::vector<std::string>& references);

// Paired bootstrap resampling of the test sentences, as sacreBLEU's paired-bs: `resamples`
// samples of the sentence indices with replacement, drawn from `seed`; in each, the corpus BLEU
// of every system on the sample. The difference is the mean over seeds (pairs) of
// BLEU(system) - BLEU(baseline), pairs[k] = {system stats, baseline stats} of seed k, all on the
// same sentences. The interval is the 2.5 and 97.5 percentiles of the resampled differences; p is
// sacreBLEU's: (1 + #{|d* - mean(d*)| >= |d|}) / (1 + resamples), the chance of a difference this
// large under the null hypothesis centred at zero.
struct BootstrapResult {
  double difference = 0.0;  // on the whole test set
  Interval interval;
  double p_value = 1.0;
  std::size_t resamples = 0;
};
using SystemPair = std::pair<std::vector<bleu::BleuStats>, std::vector<bleu::BleuStats>>;
BootstrapResult paired_bootstrap(const std::vector<SystemPair>& pairs, std::size_t resamples, std::uint64_t seed);

inline constexpr std::size_t kBootstrapResamples = 1000;
inline constexpr std::uint64_t kBootstrapSeed = 12345;  // sacreBLEU's default

// A claim's verdict from the per-seed advantages (positive: the claimed direction) and the
// pooled interval of the advantage:
//   reproduced   the advantage is positive in every seed and the interval lies above 0;
//   contradicted the advantage is negative in every seed and the interval lies below 0;
//   inconclusive anything else (including a missing interval, as with one seed).
std::string claim_verdict(const std::vector<double>& advantages, const std::optional<Interval>& interval);

}  // namespace trepro
