#include "experiments/ablation/ablation_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "core/philox.h"

namespace trepro {

namespace {

void add_into(bleu::BleuStats& sum, const bleu::BleuStats& s) {
  if (sum.correct.empty()) {
    sum.correct.assign(s.correct.size(), 0.0);
    sum.total.assign(s.total.size(), 0.0);
  }
  for (std::size_t n = 0; n < s.correct.size(); ++n) {
    sum.correct[n] += s.correct[n];
    sum.total[n] += s.total[n];
  }
  sum.hyp_len += s.hyp_len;
  sum.ref_len += s.ref_len;
}

// Corpus BLEU of the sentences `rows` (repeats counted) of one system.
double corpus_bleu_of(const std::vector<bleu::BleuStats>& sentences, const std::vector<std::size_t>& rows) {
  bleu::BleuStats sum;
  for (std::size_t row : rows) add_into(sum, sentences[row]);
  return bleu::compute_bleu(sum, bleu::BleuOptions{}).score;
}

double mean_difference(const std::vector<SystemPair>& pairs, const std::vector<std::size_t>& rows) {
  double sum = 0.0;
  for (const SystemPair& pair : pairs) sum += corpus_bleu_of(pair.first, rows) - corpus_bleu_of(pair.second, rows);
  return sum / static_cast<double>(pairs.size());
}

// The share of `resamples` at least as extreme as the observation, counting the observation
// itself among them so that p is never 0 (Davison & Hinkley 1997).
double bootstrap_p(std::size_t extreme, std::size_t resamples) {
  return static_cast<double>(extreme + 1) / static_cast<double>(resamples + 1);
}

}  // namespace

double sorted_percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("sorted_percentile: no values");
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - static_cast<double>(below));
}

SeedSpread seed_spread(const std::vector<double>& values) {
  SeedSpread s;
  s.n = values.size();
  if (s.n == 0) return s;
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(s.n);
  if (s.n > 1) {
    double squares = 0.0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(squares / static_cast<double>(s.n - 1));
  }
  return s;
}

double student_t_975(std::size_t degrees) {
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
      2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (degrees == 0) throw std::invalid_argument("student_t_975: needs at least one degree of freedom");
  if (degrees <= kTable.size()) return kTable[degrees - 1];
  // Cornish-Fisher: t = z + g1(z)/v + g2(z)/v^2 + g3(z)/v^3 + g4(z)/v^4 (Abramowitz & Stegun 26.7.5).
  constexpr double z = 1.959963984540054;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
  const double g[4] = {(z3 + z) / 4, (5 * z5 + 16 * z3 + 3 * z) / 96, (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384,
                       (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160};
  const double v = static_cast<double>(degrees);
  return z + g[0] / v + g[1] / (v * v) + g[2] / (v * v * v) + g[3] / (v * v * v * v);
}

std::optional<MeanDifference> t_interval(const std::vector<double>& differences) {
  if (differences.size() < 2) return std::nullopt;
  const SeedSpread s = seed_spread(differences);
  const double half = student_t_975(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  return MeanDifference{s.mean, {s.mean - half, s.mean + half}};
}

std::vector<bleu::BleuStats> sentence_bleu_stats(const std::vector<std::string>& hypotheses,
                                                 const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size()) {
    throw std::invalid_argument("sentence_bleu_stats: " + std::to_string(hypotheses.size()) + " hypotheses for " +
                                std::to_string(references.size()) + " references");
  }
  const bleu::BleuOptions options;
  std::vector<bleu::BleuStats> stats;
  stats.reserve(hypotheses.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    stats.push_back(bleu::sentence_stats(bleu::preprocess(hypotheses[i], options),
                                         {bleu::preprocess(references[i], options)}, options.max_order));
  }
  return stats;
}

BootstrapResult paired_bootstrap(const std::vector<SystemPair>& pairs, std::size_t resamples, std::uint64_t seed) {
  if (pairs.empty() || resamples == 0) throw std::invalid_argument("paired_bootstrap: no systems or no resamples");
  const std::size_t sentences = pairs.front().first.size();
  for (const SystemPair& pair : pairs) {
    if (pair.first.size() != sentences || pair.second.size() != sentences) {
      throw std::invalid_argument("paired_bootstrap: the systems were scored on different numbers of sentences");
    }
  }
  if (sentences == 0) throw std::invalid_argument("paired_bootstrap: no sentences");
  std::vector<std::size_t> rows(sentences);
  for (std::size_t i = 0; i < sentences; ++i) rows[i] = i;
  BootstrapResult result;
  result.resamples = resamples;
  result.difference = mean_difference(pairs, rows);
  std::vector<double> differences;
  differences.reserve(resamples);
  for (std::size_t r = 0; r < resamples; ++r) {
    // Philox keyed by (seed, resample): the same samples on every machine and library.
    const PhiloxKey key{seed, r, 0};
    for (std::size_t i = 0; i < sentences; ++i) {
      rows[i] = static_cast<std::size_t>(philox_uniform(key, i) * static_cast<double>(sentences));
    }
    differences.push_back(mean_difference(pairs, rows));
  }
  result.p_value = bootstrap_p_value(differences, result.difference);
  result.p_value_sacrebleu = sacrebleu_p_value(differences, result.difference);
  std::sort(differences.begin(), differences.end());
  result.interval = {sorted_percentile(differences, 0.025), sorted_percentile(differences, 0.975)};
  return result;
}

double bootstrap_p_value(const std::vector<double>& resampled, double observed) {
  const double mean = seed_spread(resampled).mean;
  std::size_t extreme = 0;
  for (double d : resampled) extreme += std::abs(d - mean) >= std::abs(observed);
  return bootstrap_p(extreme, resampled.size());
}

double sacrebleu_p_value(const std::vector<double>& resampled, double observed) {
  std::vector<double> magnitudes;
  magnitudes.reserve(resampled.size());
  for (double d : resampled) magnitudes.push_back(std::abs(d));
  const double mean = seed_spread(magnitudes).mean;
  std::size_t extreme = 0;
  for (double m : magnitudes) extreme += m - mean > std::abs(observed);
  return bootstrap_p(extreme, resampled.size());
}

std::string claim_verdict(const std::vector<double>& advantages, const std::optional<Interval>& interval) {
  if (advantages.empty()) return "inconclusive";
  const bool all_positive = std::all_of(advantages.begin(), advantages.end(), [](double a) { return a > 0.0; });
  const bool all_negative = std::all_of(advantages.begin(), advantages.end(), [](double a) { return a < 0.0; });
  const bool all_divergences = std::all_of(advantages.begin(), advantages.end(), [](double a) { return std::isinf(a); });
  if (all_positive && (interval ? interval->low > 0.0 : all_divergences)) return "reproduced";
  if (all_negative && (interval ? interval->high < 0.0 : all_divergences)) return "contradicted";
  return "inconclusive";
}

std::string equivalence_verdict(const std::vector<double>& differences, const std::optional<Interval>& interval,
                                double margin) {
  const bool all_finite = std::all_of(differences.begin(), differences.end(), [](double d) { return std::isfinite(d); });
  if (differences.empty() || !all_finite || !interval) return "inconclusive";
  const auto every = [&](auto holds) { return std::all_of(differences.begin(), differences.end(), holds); };
  if (interval->low > -margin && interval->high < margin && every([&](double d) { return std::abs(d) < margin; })) {
    return "reproduced";
  }
  if (interval->low >= margin && every([&](double d) { return d >= margin; })) return "contradicted";
  if (interval->high <= -margin && every([&](double d) { return d <= -margin; })) return "contradicted";
  return "inconclusive";
}

}  // namespace trepro
