// Token batching (experiments/data/token_batches.h), the sentencepiece-free part of the data
// pipeline: pairs of any lengths, any max_tokens, seed and epoch. Every pair lands in exactly one
// batch, a batch of several rows pads to at most max_tokens, and make_batch lays out each row as
// x EOS / BOS y / y EOS with pad after.
// Input: 2 bytes max_tokens, 8 bytes seed, 1 byte epoch, 1 byte max_len, then pairs as
// (source length, target length, tokens...) bytes.
#include <cstring>
#include <vector>

#include "experiments/data/token_batches.h"
#include "fuzz/fuzz_input.h"

namespace {

using trepro::TokenPair;

constexpr std::int64_t kPad = 0, kBos = 1, kEos = 2;

std::vector<TokenPair> read_pairs(const std::uint8_t* data, std::size_t size) {
  std::vector<TokenPair> pairs;
  std::size_t i = 0;
  while (i + 2 <= size) {
    const std::size_t n = data[i], m = data[i + 1];
    i += 2;
    TokenPair pair;
    for (std::size_t k = 0; k < n + m && i < size; ++k, ++i) (k < n ? pair.source : pair.target).push_back(3 + data[i]);
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

void check_row(const trepro::Batch& batch, std::int64_t row, const TokenPair& pair) {
  const std::int64_t s = batch.src.dim(1), t = batch.tgt.dim(1);
  const auto n = static_cast<std::int64_t>(pair.source.size()), m = static_cast<std::int64_t>(pair.target.size());
  for (std::int64_t j = 0; j < s; ++j) {
    const double expected = j < n ? pair.source[static_cast<std::size_t>(j)] : j == n ? kEos : kPad;
    if (batch.src.at(row * s + j) != expected) trepro::fuzz::reject("make_batch", "src row " + std::to_string(row));
  }
  for (std::int64_t j = 0; j < t; ++j) {
    const double input = j == 0 ? kBos : j <= m ? pair.target[static_cast<std::size_t>(j - 1)] : kPad;
    const double label = j < m ? pair.target[static_cast<std::size_t>(j)] : j == m ? kEos : kPad;
    if (batch.tgt.at(row * t + j) != input || batch.labels.at(row * t + j) != label) {
      trepro::fuzz::reject("make_batch", "tgt or labels row " + std::to_string(row));
    }
  }
}

void check_batches(const std::vector<TokenPair>& pairs, const std::vector<std::vector<std::size_t>>& batches,
                   std::int64_t max_tokens) {
  std::vector<int> seen(pairs.size(), 0);
  for (const auto& rows : batches) {
    if (rows.empty()) trepro::fuzz::reject("token_batches", "an empty batch");
    std::int64_t longest = 0;
    for (std::size_t r : rows) {
      if (r >= pairs.size()) trepro::fuzz::reject("token_batches", "an index past the pairs");
      ++seen[r];
      longest = std::max<std::int64_t>(longest, std::max(pairs[r].source.size(), pairs[r].target.size()) + 1);
    }
    if (rows.size() > 1 && longest * static_cast<std::int64_t>(rows.size()) > max_tokens) {
      trepro::fuzz::reject("token_batches", "a batch of several rows over max_tokens");
    }
    const trepro::Batch batch = trepro::make_batch(pairs, rows, kPad, kBos, kEos);
    for (std::size_t i = 0; i < rows.size(); ++i) check_row(batch, static_cast<std::int64_t>(i), pairs[rows[i]]);
  }
  for (int count : seen) {
    if (count != 1) trepro::fuzz::reject("token_batches", "a pair in " + std::to_string(count) + " batches");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 12) return 0;
  std::uint16_t max_tokens = 0;
  std::uint64_t seed = 0;
  std::memcpy(&max_tokens, data, 2);
  std::memcpy(&seed, data + 2, 8);
  const std::int64_t epoch = data[10], max_len = data[11];
  const std::vector<TokenPair> pairs = read_pairs(data + 12, size - 12);
  const std::int64_t tokens = std::max<std::int64_t>(1, max_tokens);  // the config's range: >= 1
  check_batches(pairs, trepro::token_batches(pairs, tokens, seed, epoch), tokens);
  check_batches(pairs, trepro::token_batches_in_order(pairs, tokens), tokens);
  std::int64_t dropped = -1;
  const std::vector<TokenPair> kept = trepro::pairs_within(pairs, max_len, &dropped);
  if (dropped + static_cast<std::int64_t>(kept.size()) != static_cast<std::int64_t>(pairs.size())) {
    trepro::fuzz::reject("pairs_within", "kept + dropped != pairs");
  }
  return 0;
}
