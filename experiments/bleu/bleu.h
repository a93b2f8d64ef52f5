// Corpus BLEU compatible with sacreBLEU 2.4.3 (Post 2018, "A Call for Clarity in Reporting BLEU
// Scores"): the same tokenization, n-gram clipping against the maximum count over references,
// brevity penalty against the closest reference length (the shorter on a tie), smoothing and
// signature, so that a score here and sacreBLEU's are the same number.
//
//   BLEU = BP * exp(1/N sum_n log p_n),   p_n = 100 * correct_n / total_n
//   BP = 1 if c >= r else exp(1 - r / c)   (c = hypothesis tokens, r = chosen reference tokens)
// Smoothing of a p_n with correct_n = 0 (Chen & Cherry 2014): exp (NIST, sacreBLEU's default):
// the k-th such order gets 100 / (2^k total_n); floor: 100 * value / total_n; add-k: value added
// to correct_n and total_n for n > 1; none: log 0 counts as -9999999999, as in sacreBLEU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trepro::bleu {

inline constexpr const char* kSacrebleuVersion = "2.4.3";

enum class Smoothing { none, floor, add_k, exp };
enum class Tokenization { none, tok_13a };

struct BleuOptions {
  bool lowercase = false;
  Tokenization tokenize = Tokenization::tok_13a;
  Smoothing smooth = Smoothing::exp;
  double smooth_value = -1.0;  // < 0: sacreBLEU's default (floor 0.1, add-k 1)
  bool effective_order = false;
  int max_order = 4;
};

// Sufficient statistics, summed over sentences.
struct BleuStats {
  std::vector<double> correct, total;  // per order 1..max_order (double: add-k adds fractions)
  std::int64_t hyp_len = 0, ref_len = 0;
};

struct BleuScore {
  double score = 0.0;                // 0..100
  std::vector<double> precisions;    // percent, per order
  double brevity_penalty = 0.0;
  BleuStats stats;
};

// sacreBLEU's BLEU.compute_bleu from the statistics.
BleuScore compute_bleu(BleuStats stats, const BleuOptions& options);

// Statistics of one hypothesis against its references (already tokenized and lower-cased as
// the options say: see preprocess).
BleuStats sentence_stats(const std::string& hypothesis, const std::vector<std::string>& references, int max_order);

// What sacreBLEU does to every line before counting: lower-case (if asked), strip trailing
// whitespace, tokenize.
std::string preprocess(const std::string& line, const BleuOptions& options);

// The statistics of hypotheses[i] against references[k][i] for every reference set k (all the
// same length), each line put through `prepare` first (tokenization: whitespace then separates
// tokens).
BleuStats corpus_stats(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& references, int max_order,
                       const std::function<std::string(const std::string&)>& prepare);

// sacreBLEU's corpus BLEU: corpus_stats with preprocess, then compute_bleu.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const BleuOptions& options);

// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.3"
std::string signature(const BleuOptions& options, std::size_t reference_sets);
// sacreBLEU's verbose_score, what its "BLEU = 83.76 ..." line shows after the score:
// "90.0/87.5/83.3/75.0 (BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)".
std::string verbose_score(const BleuScore& score);

// Tokenized, lower-cased BLEU as torchtext.data.metrics.bleu_score computes it (the public
// Multi30K tutorial's figure): candidates and references are token lists (here: the 13a tokens
// of the lower-cased line), no smoothing (a zero precision gives 0), uniform weights, brevity
// penalty against the closest reference length. Returns 0..100.
double torchtext_bleu(const std::vector<std::vector<std::string>>& candidates,
                      const std::vector<std::vector<std::vector<std::string>>>& references, int max_order = 4);

}  // namespace trepro::bleu
