#include "conformance/model/decoding_testing.h"

#include <cmath>
#include <stdexcept>

#include "conformance/model/model_testing.h"

namespace trepro::testing {

RecomputingScorer::RecomputingScorer(Transformer& model, const Tensor& src)
    : model_(model), src_(src), prefixes_(static_cast<std::size_t>(src.dim(0))) {
  for (std::int64_t b = 0; b < src.dim(0); ++b) source_rows_.push_back(b);
}

Tensor RecomputingScorer::next_log_probs(const std::vector<std::int64_t>& tokens) {
  Backend& backend = model_.backend();
  const auto rows = static_cast<std::int64_t>(tokens.size());
  for (std::size_t r = 0; r < tokens.size(); ++r) prefixes_[r].push_back(tokens[r]);
  const auto length = static_cast<std::int64_t>(prefixes_.front().size());
  Batch batch;
  batch.src = take_rows(src_, source_rows_);
  batch.tgt = Tensor::empty({rows, length}, DType::i32);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t t = 0; t < length; ++t) {
      batch.tgt.set(r * length + t, static_cast<double>(prefixes_[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)]));
    }
  }
  const Tensor logits = backend.download(model_.forward(batch));  // [R * T, V]
  std::vector<std::int64_t> last_positions;
  for (std::int64_t r = 0; r < rows; ++r) last_positions.push_back(r * length + length - 1);
  const Tensor last = backend.upload(take_rows(logits, last_positions));
  Tensor log_probs = backend.empty(last.shape(), backend.dtype());
  backend.log_softmax_forward(last, log_probs);
  return backend.download(log_probs);
}

void RecomputingScorer::reorder(const std::vector<std::int64_t>& rows) {
  std::vector<std::int64_t> sources;
  std::vector<std::vector<std::int64_t>> prefixes;
  for (std::int64_t r : rows) {
    sources.push_back(source_rows_[static_cast<std::size_t>(r)]);
    prefixes.push_back(prefixes_[static_cast<std::size_t>(r)]);
  }
  source_rows_ = std::move(sources);
  prefixes_ = std::move(prefixes);
}

TableScorer::TableScorer(std::int64_t rows, Distribution distribution)
    : distribution_(std::move(distribution)), prefixes_(static_cast<std::size_t>(rows)) {}

Tensor TableScorer::next_log_probs(const std::vector<std::int64_t>& tokens) {
  if (tokens.size() != prefixes_.size()) throw std::logic_error("TableScorer: token count != rows");
  std::vector<double> values;
  std::int64_t vocab = 0;
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    prefixes_[r].push_back(tokens[r]);
    const std::vector<double> log_probs = distribution_(prefixes_[r]);
    vocab = static_cast<std::int64_t>(log_probs.size());
    values.insert(values.end(), log_probs.begin(), log_probs.end());
  }
  return Tensor::from_values({static_cast<std::int64_t>(tokens.size()), vocab}, DType::f64, values);
}

void TableScorer::reorder(const std::vector<std::int64_t>& rows) {
  std::vector<std::vector<std::int64_t>> prefixes;
  for (std::int64_t r : rows) prefixes.push_back(prefixes_[static_cast<std::size_t>(r)]);
  prefixes_ = std::move(prefixes);
}

}  // namespace trepro::testing
