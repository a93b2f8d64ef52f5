#include "model/decoding.h"

#include "model/beam_search.h"
#include "model/greedy_search.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace trepro {

namespace {

Tensor ids_tensor(const std::vector<std::int64_t>& ids) {
  Tensor out = Tensor::empty({static_cast<std::int64_t>(ids.size())}, DType::i32);
  for (std::size_t i = 0; i < ids.size(); ++i) out.set(static_cast<std::int64_t>(i), static_cast<double>(ids[i]));
  return out;
}

}  // namespace

CachedScorer::CachedScorer(Transformer& model, const Tensor& src) : model_(model), decoder_(model, src) {}

Tensor CachedScorer::next_log_probs(const std::vector<std::int64_t>& tokens) {
  Backend& backend = model_.backend();
  Tensor logits = decoder_.step(ids_tensor(tokens));  // [R, V]
  Tensor log_probs = backend.empty(logits.shape(), backend.dtype());
  backend.log_softmax_forward(logits, log_probs);
  // A host backend's tensor is already where the search reads it, and nothing else holds it.
  return log_probs.device() == Device::cpu ? log_probs : backend.download(log_probs);
}

void CachedScorer::reorder(const std::vector<std::int64_t>& rows) { decoder_.reorder(ids_tensor(rows)); }

std::vector<std::int64_t> source_lengths(const Tensor& src, std::int64_t pad_id) {
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(src.dim(0)), 0);
  const std::int64_t width = src.dim(1);
  for (std::int64_t b = 0; b < src.dim(0); ++b) {
    for (std::int64_t j = 0; j < width; ++j) {
      if (src.at(b * width + j) != static_cast<double>(pad_id)) ++lengths[static_cast<std::size_t>(b)];
    }
  }
  return lengths;
}

std::vector<std::int64_t> max_output_lengths(const ModelConfig& config, const Tensor& src, std::int64_t extra) {
  std::vector<std::int64_t> lengths = source_lengths(src, config.pad_id);
  for (std::int64_t& length : lengths) {
    length += extra;
    // Producing L tokens feeds positions 0 .. L-1 (BOS first).
    if (config.positional == Positional::learned) length = std::min(length, config.max_len);
  }
  return lengths;
}

void check_translation_input(const Transformer& model, const Tensor& src, const char* caller) {
  if (model.config().architecture != Architecture::encoder_decoder) {
    throw std::invalid_argument(std::string(caller) + ": translation needs an encoder_decoder model, this one is " +
                                to_string(model.config().architecture));
  }
  if (!src.defined() || src.rank() != 2 || (src.dtype() != DType::i32 && src.dtype() != DType::i64)) {
    throw std::invalid_argument(std::string(caller) + ": src must be host int32 or int64 ids [B, S]");
  }
  if (src.device() != Device::cpu) throw std::invalid_argument(std::string(caller) + ": src must be on the host");
}

std::vector<std::vector<std::size_t>> translation_batches(const std::vector<std::vector<std::int64_t>>& sources,
                                                         const TranslateOptions& options) {
  if (options.max_tokens < 1) throw std::invalid_argument("translate_all: max_tokens must be >= 1");
  if (options.max_sentences < 0) throw std::invalid_argument("translate_all: max_sentences must be >= 0");
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<std::vector<std::size_t>> batches;
  std::size_t begin = 0;
  while (begin < order.size() && sources[order[begin]].empty()) ++begin;  // nothing to translate
  while (begin < order.size()) {
    // Sorted by length, so a batch's width is its last sentence's length.
    const auto fits = [&](std::size_t count) {
      return static_cast<std::int64_t>(count * sources[order[begin + count - 1]].size()) <= options.max_tokens &&
             (options.max_sentences == 0 || static_cast<std::int64_t>(count) <= options.max_sentences);
    };
    std::size_t end = begin + 1;
    while (end < order.size() && fits(end - begin + 1)) ++end;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(begin), order.begin() + static_cast<std::ptrdiff_t>(end));
    begin = end;
  }
  return batches;
}

std::vector<Hypothesis> translate_all(Transformer& model, const std::vector<std::vector<std::int64_t>>& sources,
                                      const SearchTokens& tokens, const TranslateOptions& options) {
  // One scope for every batch, so that a backend that packs the weights packs them once.
  const ConstantWeights constant_weights(model.backend());
  std::vector<Hypothesis> results(sources.size());
  for (const std::vector<std::size_t>& batch : translation_batches(sources, options)) {
    const auto width = static_cast<std::int64_t>(sources[batch.back()].size());
    Tensor src = Tensor::empty({static_cast<std::int64_t>(batch.size()), width}, DType::i64);
    for (std::size_t r = 0; r < batch.size(); ++r) {
      const std::vector<std::int64_t>& ids = sources[batch[r]];
      for (std::int64_t j = 0; j < width; ++j) {
        const auto at = static_cast<std::size_t>(j);
        src.set(static_cast<std::int64_t>(r) * width + j,
                static_cast<double>(at < ids.size() ? ids[at] : model.config().pad_id));
      }
    }
    const std::vector<Hypothesis> hypotheses =
        options.greedy ? greedy_search(model, src, tokens, options.max_extra)
                       : beam_search(model, src, tokens, {options.beam, options.alpha, options.max_extra, options.beam_stop});
    for (std::size_t r = 0; r < batch.size(); ++r) results[batch[r]] = hypotheses[r];
  }
  return results;
}

std::string to_string(BeamStop stop) { return stop == BeamStop::bound ? "bound" : "k_finished"; }

}  // namespace trepro
