#include "experiments/bleu/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "experiments/bleu/tokenizer_13a.h"

namespace trepro::bleu {

namespace {

using NgramCounts = std::map<std::vector<std::string_view>, std::int64_t>;

// Every n-gram of orders 1..max_order of the whitespace-separated tokens, with its count.
NgramCounts ngram_counts(const std::vector<std::string_view>& tokens, int max_order) {
  NgramCounts counts;
  for (int n = 1; n <= max_order; ++n) {
    for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= tokens.size(); ++i) {
      ++counts[std::vector<std::string_view>(tokens.begin() + static_cast<std::ptrdiff_t>(i),
                                             tokens.begin() + static_cast<std::ptrdiff_t>(i) + n)];
    }
  }
  return counts;
}

// sacreBLEU's my_log: log 0 is a large negative number instead of -inf.
double sacrebleu_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

double default_smooth_value(Smoothing smooth) {
  return smooth == Smoothing::floor ? 0.1 : smooth == Smoothing::add_k ? 1.0 : 0.0;
}

std::string smoothing_name(Smoothing s) {
  switch (s) {
    case Smoothing::none: return "none";
    case Smoothing::floor: return "floor";
    case Smoothing::add_k: return "add-k";
    case Smoothing::exp: return "exp";
  }
  return "?";
}

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

BleuScore compute_bleu(BleuStats stats, const BleuOptions& options) {
  const int orders = options.max_order;
  const double value = options.smooth_value < 0.0 ? default_smooth_value(options.smooth) : options.smooth_value;
  BleuScore result;
  result.brevity_penalty = stats.hyp_len < stats.ref_len
                               ? (stats.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) /
                                                                         static_cast<double>(stats.hyp_len))
                                                    : 0.0)
                               : 1.0;
  result.precisions.assign(static_cast<std::size_t>(orders), 0.0);
  result.stats = stats;
  if (std::all_of(stats.correct.begin(), stats.correct.end(), [](double c) { return c == 0.0; })) return result;

  double smooth_mteval = 1.0;
  int effective_order = orders;
  for (int n = 1; n <= orders; ++n) {
    const auto i = static_cast<std::size_t>(n - 1);
    if (options.smooth == Smoothing::add_k && n > 1) {
      stats.correct[i] += value;
      stats.total[i] += value;
    }
    if (stats.total[i] == 0.0) break;
    if (options.effective_order) effective_order = n;
    if (stats.correct[i] == 0.0) {
      if (options.smooth == Smoothing::exp) {
        smooth_mteval *= 2.0;
        result.precisions[i] = 100.0 / (smooth_mteval * stats.total[i]);
      } else if (options.smooth == Smoothing::floor) {
        result.precisions[i] = 100.0 * value / stats.total[i];
      }
    } else {
      result.precisions[i] = 100.0 * stats.correct[i] / stats.total[i];
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < effective_order; ++n) log_sum += sacrebleu_log(result.precisions[static_cast<std::size_t>(n)]);
  result.score = result.brevity_penalty * std::exp(log_sum / effective_order);
  return result;
}

BleuStats sentence_stats(const std::string& hypothesis, const std::vector<std::string>& references, int max_order) {
  BleuStats stats;
  stats.correct.assign(static_cast<std::size_t>(max_order), 0.0);
  stats.total.assign(static_cast<std::size_t>(max_order), 0.0);
  // References: the maximum count of each n-gram over references, and the lengths.
  NgramCounts reference_counts;
  std::vector<std::int64_t> reference_lengths;
  for (const std::string& reference : references) {
    const std::vector<std::string_view> tokens = split_whitespace(reference);
    reference_lengths.push_back(static_cast<std::int64_t>(tokens.size()));
    for (const auto& [ngram, count] : ngram_counts(tokens, max_order)) {
      std::int64_t& best = reference_counts[ngram];
      best = std::max(best, count);
    }
  }
  const std::vector<std::string_view> tokens = split_whitespace(hypothesis);
  stats.hyp_len = static_cast<std::int64_t>(tokens.size());
  // The closest reference length; the shorter one on a tie.
  std::int64_t closest_diff = -1;
  for (std::int64_t length : reference_lengths) {
    const std::int64_t diff = std::abs(stats.hyp_len - length);
    if (closest_diff < 0 || diff < closest_diff || (diff == closest_diff && length < stats.ref_len)) {
      closest_diff = diff;
      stats.ref_len = length;
    }
  }
  for (const auto& [ngram, count] : ngram_counts(tokens, max_order)) {
    const std::size_t i = ngram.size() - 1;
    stats.total[i] += static_cast<double>(count);
    const auto found = reference_counts.find(ngram);
    if (found != reference_counts.end()) stats.correct[i] += static_cast<double>(std::min(count, found->second));
  }
  return stats;
}

std::string preprocess(const std::string& line, const BleuOptions& options) {
  const std::string cased = options.lowercase ? lowercase_utf8(line) : line;
  const std::string_view stripped = rstrip_whitespace(cased);
  return options.tokenize == Tokenization::tok_13a ? tokenize_13a(stripped) : std::string(stripped);
}

BleuStats corpus_stats(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& references, int max_order,
                       const std::function<std::string(const std::string&)>& prepare) {
  if (references.empty()) throw std::invalid_argument("corpus_bleu: no reference set");
  for (std::size_t k = 0; k < references.size(); ++k) {
    if (references[k].size() != hypotheses.size()) {
      throw std::invalid_argument("corpus_bleu: reference set " + std::to_string(k) + " has " +
                                  std::to_string(references[k].size()) + " lines, the hypotheses " +
                                  std::to_string(hypotheses.size()));
    }
  }
  BleuStats total;
  total.correct.assign(static_cast<std::size_t>(max_order), 0.0);
  total.total.assign(static_cast<std::size_t>(max_order), 0.0);
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    std::vector<std::string> refs;
    for (const auto& set : references) refs.push_back(prepare(set[i]));
    const BleuStats s = sentence_stats(prepare(hypotheses[i]), refs, max_order);
    for (std::size_t n = 0; n < s.correct.size(); ++n) {
      total.correct[n] += s.correct[n];
      total.total[n] += s.total[n];
    }
    total.hyp_len += s.hyp_len;
    total.ref_len += s.ref_len;
  }
  return total;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const BleuOptions& options) {
  return compute_bleu(corpus_stats(hypotheses, references, options.max_order,
                                   [&options](const std::string& line) { return preprocess(line, options); }),
                      options);
}

std::string signature(const BleuOptions& options, std::size_t reference_sets) {
  std::string s = "nrefs:" + std::to_string(reference_sets) + "|case:" + (options.lowercase ? "lc" : "mixed") +
                  "|eff:" + (options.effective_order ? "yes" : "no") +
                  "|tok:" + (options.tokenize == Tokenization::tok_13a ? "13a" : "none") +
                  "|smooth:" + smoothing_name(options.smooth);
  if (options.smooth == Smoothing::floor || options.smooth == Smoothing::add_k) {
    s += "[" + printf_string("%.2f", options.smooth_value < 0.0 ? default_smooth_value(options.smooth)
                                                                 : options.smooth_value) + "]";
  }
  return s + "|version:" + kSacrebleuVersion;
}

std::string verbose_score(const BleuScore& score) {
  std::string s;
  for (std::size_t n = 0; n < score.precisions.size(); ++n) {
    s += (n ? "/" : "") + printf_string("%.1f", score.precisions[n]);
  }
  const double ratio = score.stats.ref_len > 0 ? static_cast<double>(score.stats.hyp_len) /
                                                     static_cast<double>(score.stats.ref_len)
                                               : 0.0;
  return s + " (BP = " + printf_string("%.3f", score.brevity_penalty) + " ratio = " + printf_string("%.3f", ratio) +
         " hyp_len = " + std::to_string(score.stats.hyp_len) + " ref_len = " + std::to_string(score.stats.ref_len) +
         ")";
}

double torchtext_bleu(const std::vector<std::vector<std::string>>& candidates,
                      const std::vector<std::vector<std::vector<std::string>>>& references, int max_order) {
  if (candidates.size() != references.size()) throw std::invalid_argument("torchtext_bleu: corpus sizes differ");
  std::vector<double> clipped(static_cast<std::size_t>(max_order), 0.0), total(clipped);
  double candidate_len = 0.0, reference_len = 0.0;
  auto views = [](const std::vector<std::string>& tokens) {
    return std::vector<std::string_view>(tokens.begin(), tokens.end());
  };
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto length = static_cast<double>(candidates[i].size());
    candidate_len += length;
    // The closest reference length; the first one on a tie (Python's min with a key).
    double closest = -1.0;
    NgramCounts reference_counts;
    for (const auto& reference : references[i]) {
      const auto ref_length = static_cast<double>(reference.size());
      if (closest < 0.0 || std::abs(length - ref_length) < std::abs(length - closest)) closest = ref_length;
      for (const auto& [ngram, count] : ngram_counts(views(reference), max_order)) {
        std::int64_t& best = reference_counts[ngram];
        best = std::max(best, count);
      }
    }
    reference_len += std::max(closest, 0.0);
    for (const auto& [ngram, count] : ngram_counts(views(candidates[i]), max_order)) {
      const auto found = reference_counts.find(ngram);
      if (found != reference_counts.end()) clipped[ngram.size() - 1] += static_cast<double>(std::min(count, found->second));
    }
    for (int n = 0; n < max_order; ++n) total[static_cast<std::size_t>(n)] += std::max(length - n, 0.0);
  }
  if (*std::min_element(clipped.begin(), clipped.end()) == 0.0) return 0.0;
  double log_sum = 0.0;
  for (std::size_t n = 0; n < clipped.size(); ++n) log_sum += std::log(clipped[n] / total[n]) / max_order;
  const double bp = std::exp(std::min(1.0 - reference_len / candidate_len, 0.0));
  return 100.0 * bp * std::exp(log_sum);
}

}  // namespace trepro::bleu
