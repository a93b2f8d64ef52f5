#include "model/greedy_search.h"

#include <utility>

namespace trepro {

namespace {

// The first maximum of a row of log-probabilities, as argmax: ties go to the smaller id. Pad and
// BOS are never produced. Compared in the row's own type, read through its pointer (Tensor::at
// per value was a seventh of greedy decoding at batch 32).
template <class T>
std::pair<std::int64_t, double> row_argmax(const T* row, std::int64_t vocab, const SearchTokens& tokens) {
  std::int64_t best = -1;
  T best_value{};
  for (std::int64_t v = 0; v < vocab; ++v) {
    if (v == tokens.pad || v == tokens.bos) continue;
    if (best < 0 || row[v] > best_value) best = v, best_value = row[v];
  }
  return {best, static_cast<double>(best_value)};
}

}  // namespace

std::vector<Hypothesis> greedy_search(Transformer& model, const Tensor& src, const SearchTokens& tokens,
                                      std::int64_t max_extra) {
  check_translation_input(model, src, "greedy_search");
  CachedScorer scorer(model, src);
  return greedy_search(scorer, max_output_lengths(model.config(), src, max_extra), tokens);
}

std::vector<Hypothesis> greedy_search(NextTokenScorer& scorer, const std::vector<std::int64_t>& max_lengths,
                                      const SearchTokens& tokens) {
  std::vector<Hypothesis> results(max_lengths.size());
  // Rows of the scorer: the sentences still being decoded, and their last tokens.
  std::vector<std::int64_t> sentences, last;
  for (std::size_t b = 0; b < max_lengths.size(); ++b) {
    if (max_lengths[b] > 0) {
      sentences.push_back(static_cast<std::int64_t>(b));
      last.push_back(tokens.bos);
    }
  }
  // Row b is sentence b until now: drop the sentences that may produce nothing.
  if (sentences.size() != max_lengths.size()) scorer.reorder(sentences);
  while (!sentences.empty()) {
    const Tensor log_probs = scorer.next_log_probs(last);  // [R, V]
    const std::int64_t vocab = log_probs.dim(1);
    std::vector<std::int64_t> keep_rows, keep_sentences, keep_last;
    for (std::size_t r = 0; r < sentences.size(); ++r) {
      const auto row = static_cast<std::int64_t>(r) * vocab;
      const auto [best, best_log_prob] = log_probs.dtype() == DType::f64
                                             ? row_argmax(log_probs.data<double>() + row, vocab, tokens)
                                             : row_argmax(log_probs.data<float>() + row, vocab, tokens);
      Hypothesis& h = results[static_cast<std::size_t>(sentences[r])];
      h.log_prob += best_log_prob;
      if (best == tokens.eos) {
        h.ended = true;
      } else {
        h.tokens.push_back(best);
        if (static_cast<std::int64_t>(h.tokens.size()) < max_lengths[static_cast<std::size_t>(sentences[r])]) {
          keep_rows.push_back(static_cast<std::int64_t>(r));
          keep_sentences.push_back(sentences[r]);
          keep_last.push_back(best);
        }
      }
    }
    if (keep_rows.size() != sentences.size() && !keep_rows.empty()) scorer.reorder(keep_rows);
    sentences = std::move(keep_sentences);
    last = std::move(keep_last);
  }
  for (Hypothesis& h : results) h.score = h.log_prob;
  return results;
}

}  // namespace trepro
