#include "experiments/ablation/ablation_statistics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

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

}  // namespace

double corpus_bleu_of(const std::vector<bleu::BleuStats>& sentences) {
  bleu::BleuStats sum;
  for (const bleu::BleuStats& s : sentences) add_into(sum, s);
  return bleu::compute_bleu(sum, bleu::BleuOptions{}).score;
}

namespace {

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

namespace {

void require_degrees(double degrees, const char* what) {
  if (!(degrees > 0.0)) throw std::invalid_argument(std::string(what) + ": needs degrees of freedom > 0, got " + std::to_string(degrees));
}

}  // namespace

double student_t_quantile(double probability, double degrees) {
  require_degrees(degrees, "student_t_quantile");
  if (!(probability > 0.0 && probability < 1.0)) {
    throw std::invalid_argument("student_t_quantile: probability must lie in (0, 1), got " + std::to_string(probability));
  }
  if (std::isinf(degrees)) return boost::math::quantile(boost::math::normal_distribution<double>(), probability);
  return boost::math::quantile(boost::math::students_t_distribution<double>(degrees), probability);
}

double student_t_cdf(double t, double degrees) {
  require_degrees(degrees, "student_t_cdf");
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  if (std::isinf(degrees)) return boost::math::cdf(boost::math::normal_distribution<double>(), t);
  return boost::math::cdf(boost::math::students_t_distribution<double>(degrees), t);
}

double student_t_two_sided_p(double t, double degrees) {
  require_degrees(degrees, "student_t_two_sided_p");
  if (std::isnan(t)) throw std::invalid_argument("student_t_two_sided_p: t is NaN");
  if (std::isinf(t)) return 0.0;
  // The upper tail by its complement, so that a p of 1e-20 keeps its digits.
  const double a = std::abs(t);
  const double upper = std::isinf(degrees)
                           ? boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), a))
                           : boost::math::cdf(boost::math::complement(boost::math::students_t_distribution<double>(degrees), a));
  return std::min(1.0, 2.0 * upper);
}

std::optional<MeanDifference> t_interval(const std::vector<double>& differences) {
  if (differences.size() < 2) return std::nullopt;
  const SeedSpread s = seed_spread(differences);
  const double half = student_t_quantile(0.975, static_cast<double>(s.n - 1)) * s.sd / std::sqrt(static_cast<double>(s.n));
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
  result.variance = resamples > 1 ? std::pow(seed_spread(differences).sd, 2) : 0.0;
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

std::optional<std::string> divergence_verdict(const std::vector<double>& advantages) {
  if (advantages.empty()) return std::nullopt;
  if (std::all_of(advantages.begin(), advantages.end(), [](double a) { return a == INFINITY; })) return "reproduced";
  if (std::all_of(advantages.begin(), advantages.end(), [](double a) { return a == -INFINITY; })) return "contradicted";
  return std::nullopt;
}

}  // namespace trepro
