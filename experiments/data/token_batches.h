// Token-based batching as in the paper (section 5.1: "sentence pairs were batched together by
// approximate sequence length; each batch contained approximately 25000 source tokens and
// 25000 target tokens"):
//   1. every pair gets a length L = max(source + EOS, BOS + target) tokens;
//   2. pairs are sorted by L (ties broken by a random key of (seed, epoch), so batches differ
//      between epochs) and cut into batches whose padded size rows x longest L stays within
//      max_tokens (a pair longer than max_tokens gets a batch of its own);
//   3. the batch order is shuffled with (seed, epoch).
// Every step is a pure function of (pairs, max_tokens, seed, epoch): a resumed run rebuilds the
// same epoch and continues at the same batch.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/transformer.h"

namespace trepro {

struct TokenPair {
  std::vector<int> source, target;  // subword ids without BOS/EOS
};

// Tokenized pairs wherever they live: in memory, or memory-mapped (experiments/data/
// prepared_corpus.h), where batching must not read every pair's tokens.
class PairTable {
 public:
  virtual ~PairTable() = default;
  virtual std::size_t size() const = 0;
  // L = max(source + EOS, BOS + target) of every pair: all that batching reads.
  virtual std::vector<std::int32_t> padded_lengths() const = 0;
  virtual TokenPair pair(std::size_t index) const = 0;
};

class PairsInMemory : public PairTable {
 public:
  explicit PairsInMemory(std::vector<TokenPair> pairs) : pairs_(std::move(pairs)) {}
  std::size_t size() const override { return pairs_.size(); }
  std::vector<std::int32_t> padded_lengths() const override;
  TokenPair pair(std::size_t index) const override { return pairs_[index]; }

 private:
  std::vector<TokenPair> pairs_;
};

// Indices of pairs with the given padded lengths, one vector per batch, in training order for
// `epoch`. A data-parallel rank takes its share of this one list.
std::vector<std::vector<std::size_t>> token_batches(const std::vector<std::int32_t>& padded_lengths,
                                                    std::int64_t max_tokens, std::uint64_t seed, std::int64_t epoch);
std::vector<std::vector<std::size_t>> token_batches(const std::vector<TokenPair>& pairs, std::int64_t max_tokens,
                                                    std::uint64_t seed, std::int64_t epoch);
// Same packing without shuffling (sorted by length): for validation and test.
std::vector<std::vector<std::size_t>> token_batches_in_order(const std::vector<std::int32_t>& padded_lengths,
                                                             std::int64_t max_tokens);
std::vector<std::vector<std::size_t>> token_batches_in_order(const std::vector<TokenPair>& pairs,
                                                             std::int64_t max_tokens);

// Host int64 tensors, padded with pad_id:
//   src    [B, S] = x_1 .. x_n EOS
//   tgt    [B, T] = BOS y_1 .. y_m       (decoder input)
//   labels [B, T] = y_1 .. y_m EOS
Batch make_batch(const std::vector<TokenPair>& pairs, const std::vector<std::size_t>& rows, std::int64_t pad_id,
                 std::int64_t bos_id, std::int64_t eos_id);
Batch make_batch(const PairTable& pairs, const std::vector<std::size_t>& rows, std::int64_t pad_id,
                 std::int64_t bos_id, std::int64_t eos_id);

// Keeps the pairs whose source + EOS and BOS + target both fit in max_len positions and that are
// not empty on either side; returns how many were dropped through `dropped`.
std::vector<TokenPair> pairs_within(std::vector<TokenPair> pairs, std::int64_t max_len, std::int64_t* dropped);

}  // namespace trepro
