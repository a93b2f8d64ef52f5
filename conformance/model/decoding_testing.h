// Scorers the decoding tests run searches against, besides the model's key/value cache.
#pragma once

#include <functional>
#include <vector>

#include "model/decoding.h"

namespace trepro::testing {

// The slow oracle: every step recomputes the model's full forward over each row's whole prefix
// (BOS + tokens so far) and takes the last position's log-softmax. No cache, no reorder of
// device state: what CachedScorer must equal.
class RecomputingScorer : public NextTokenScorer {
 public:
  RecomputingScorer(Transformer& model, const Tensor& src);
  Tensor next_log_probs(const std::vector<std::int64_t>& tokens) override;
  void reorder(const std::vector<std::int64_t>& rows) override;

 private:
  Transformer& model_;
  Tensor src_;                                   // host [B, S]
  std::vector<std::int64_t> source_rows_;        // row -> sentence
  std::vector<std::vector<std::int64_t>> prefixes_;  // row -> tokens fed so far
};

// Hand-made distributions: the log-probabilities of the next token are a function of the row's
// prefix (the tokens fed so far, BOS first).
class TableScorer : public NextTokenScorer {
 public:
  using Distribution = std::function<std::vector<double>(const std::vector<std::int64_t>& prefix)>;
  TableScorer(std::int64_t rows, Distribution distribution);
  Tensor next_log_probs(const std::vector<std::int64_t>& tokens) override;
  void reorder(const std::vector<std::int64_t>& rows) override;

 private:
  Distribution distribution_;
  std::vector<std::vector<std::int64_t>> prefixes_;
};

}  // namespace trepro::testing
