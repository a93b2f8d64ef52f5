// Greedy decoding: at each step every unfinished sentence takes its most probable next token
// (never pad or BOS), until EOS or its maximum length (source length + max_extra). Batched over
// sentences; a sentence that finishes leaves the batch (its cache rows are dropped), and source
// padding is masked, so a sentence decodes alike alone or in any batch.
#pragma once

#include "model/decoding.h"

namespace trepro {

// src [B, S] host ids (pad = the model's pad_id). One Hypothesis per sentence; score = log_prob.
std::vector<Hypothesis> greedy_search(Transformer& model, const Tensor& src, const SearchTokens& tokens,
                                      std::int64_t max_extra = 50);

// The same search against any scorer whose rows start as the B sentences.
std::vector<Hypothesis> greedy_search(NextTokenScorer& scorer, const std::vector<std::int64_t>& max_lengths,
                                      const SearchTokens& tokens);

}  // namespace trepro
