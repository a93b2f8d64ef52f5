// What greedy and beam search share: the special tokens, the result of a search, the maximum
// output length, and the source of next-token log-probabilities they run against.
//
// Searches are written against NextTokenScorer, not the model, so that one search algorithm
// runs on the key/value cache (CachedScorer, the fast path) and on test oracles (a scorer that
// recomputes the full forward each step, or a hand-written distribution).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/incremental_decoder.h"

namespace trepro {

struct SearchTokens {
  std::int64_t pad = 0, bos = 1, eos = 2;
};

// One output sentence: `tokens` excludes BOS and EOS; `ended` says whether EOS was produced
// (false when the maximum length stopped it). log_prob sums the log-probabilities of every
// produced token including EOS; score is what the search ranked by (beam: log_prob / lp).
struct Hypothesis {
  std::vector<std::int64_t> tokens;
  bool ended = false;
  double log_prob = 0.0;
  double score = 0.0;
  // Tokens produced, EOS included: the |Y| of the length penalty.
  std::int64_t length() const { return static_cast<std::int64_t>(tokens.size()) + (ended ? 1 : 0); }
};

// The source of next-token distributions for a set of rows (partial hypotheses).
class NextTokenScorer {
 public:
  virtual ~NextTokenScorer() = default;
  // `tokens` holds the last token of every row (BOS at the first step). Returns host
  // log-probabilities [rows, V] in the backend's dtype for the token after it.
  virtual Tensor next_log_probs(const std::vector<std::int64_t>& tokens) = 0;
  // Keeps rows `rows` (repeats allowed) in this order, for the next call.
  virtual void reorder(const std::vector<std::int64_t>& rows) = 0;
};

// The fast path: IncrementalDecoder's key/value cache, then log_softmax on the backend.
// Rows start as the rows of `src` [B, S] (host ids).
class CachedScorer : public NextTokenScorer {
 public:
  CachedScorer(Transformer& model, const Tensor& src);
  Tensor next_log_probs(const std::vector<std::int64_t>& tokens) override;
  void reorder(const std::vector<std::int64_t>& rows) override;

 private:
  Transformer& model_;
  IncrementalDecoder decoder_;
};

// Number of non-pad ids in each row of host ids [B, S].
std::vector<std::int64_t> source_lengths(const Tensor& src, std::int64_t pad_id);

// The longest output of each sentence: source length + `extra` (the paper: + 50), capped at
// the model's max_len when positions are a learned table (it has no row past max_len - 1).
std::vector<std::int64_t> max_output_lengths(const ModelConfig& config, const Tensor& src, std::int64_t extra);

// How to translate a list of sentences: greedy (beam 1 is the same search) or beam search, in
// batches of sentences of similar length holding at most `max_tokens` source tokens and, when
// `max_sentences` > 0, at most that many sentences.
// When beam search ends a sentence (model/beam_search.h): k_finished, fairseq's, once K
// hypotheses have finished; bound, tensor2tensor's (the paper's code), only once no live
// hypothesis can beat the best finished one.
enum class BeamStop { k_finished, bound };
// "k_finished", "bound" (the names --beam-stop takes and test.decoding.beam_stop records).
std::string to_string(BeamStop stop);

struct TranslateOptions {
  bool greedy = false;
  std::int64_t beam = 4;
  double alpha = 0.6;
  BeamStop beam_stop = BeamStop::k_finished;
  std::int64_t max_extra = 50;
  std::int64_t max_tokens = 2000;
  std::int64_t max_sentences = 0;
};

// Source id sequences (as the model was trained on: ids then EOS, no BOS) -> one hypothesis each,
// in the input order. Sentences are sorted by length and batched, so padding stays small; each
// decodes as it would alone (a conformance invariant of both searches). An empty sequence gives
// an empty hypothesis.
// The batches translate_all decodes: indices into `sources`, sorted by length (stable), each
// within the options' limits (a sentence longer than max_tokens is a batch of its own); empty
// sources are in none.
std::vector<std::vector<std::size_t>> translation_batches(const std::vector<std::vector<std::int64_t>>& sources,
                                                         const TranslateOptions& options);

std::vector<Hypothesis> translate_all(Transformer& model, const std::vector<std::vector<std::int64_t>>& sources,
                                      const SearchTokens& tokens, const TranslateOptions& options);

// Checks that `model` can translate (encoder_decoder) and `src` is host ids [B, S].
void check_translation_input(const Transformer& model, const Tensor& src, const char* caller);

}  // namespace trepro
