#include "experiments/bleu/paper_bleu.h"

#include <cstdio>

#include "experiments/bleu/regex_pass.h"

namespace trepro::bleu {

std::string split_compounds(std::string_view tokenized) {
  // \S of a Perl script reading bytes: anything but ASCII whitespace, so the bytes of a UTF-8
  // character count as non-space, as they do for the script.
  const auto not_space = [](char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v'; };
  return substitute_each(
      std::string(tokenized),
      [](std::string& out, const char* m) { out.append(1, m[0]).append(" ##AT##-##AT## ").append(1, m[2]); },
      not_space, [](char c) { return c == '-'; }, not_space);
}

std::string paper_wmt14_tokens(std::string_view line, MosesLanguage language) {
  return split_compounds(moses_tokenize(replace_unicode_punctuation(line), language));
}

BleuScore paper_wmt14_bleu(const std::vector<std::string>& hypotheses,
                           const std::vector<std::vector<std::string>>& references, MosesLanguage language) {
  BleuOptions multi_bleu;
  multi_bleu.tokenize = Tokenization::none;
  multi_bleu.smooth = Smoothing::none;
  const BleuStats stats = corpus_stats(hypotheses, references, multi_bleu.max_order,
                                       [language](const std::string& line) { return paper_wmt14_tokens(line, language); });
  return compute_bleu(stats, multi_bleu);
}

std::string paper_wmt14_signature(MosesLanguage language, std::size_t reference_sets) {
  return "paper-wmt14|nrefs:" + std::to_string(reference_sets) + "|case:mixed|tok:moses-" +
         (language == MosesLanguage::en ? "en" : "de") + "+atat|moses:59bad94|smooth:none|metric:multi-bleu";
}

std::string format_multi_bleu(const BleuScore& score) {
  const double ratio = score.stats.ref_len > 0
                           ? static_cast<double>(score.stats.hyp_len) / static_cast<double>(score.stats.ref_len)
                           : 0.0;
  char line[256];
  std::snprintf(line, sizeof line, "BLEU = %.2f, %.1f/%.1f/%.1f/%.1f (BP=%.3f, ratio=%.3f, hyp_len=%lld, ref_len=%lld)",
                score.score, score.precisions.at(0), score.precisions.at(1), score.precisions.at(2),
                score.precisions.at(3), score.brevity_penalty, ratio, static_cast<long long>(score.stats.hyp_len),
                static_cast<long long>(score.stats.ref_len));
  return line;
}

}  // namespace trepro::bleu
