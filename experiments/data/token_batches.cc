#include "experiments/data/token_batches.h"

#include <algorithm>
#include <numeric>

#include "core/philox.h"

namespace trepro {

namespace {

// Philox stream sites of the two random choices (disjoint from dropout's, which key by step).
constexpr std::uint32_t kTieBreakSite = 0xBA7C0001;
constexpr std::uint32_t kOrderSite = 0xBA7C0002;

std::vector<std::int32_t> lengths_of(const std::vector<TokenPair>& pairs) {
  std::vector<std::int32_t> lengths;
  lengths.reserve(pairs.size());
  for (const TokenPair& pair : pairs) {
    lengths.push_back(static_cast<std::int32_t>(std::max(pair.source.size(), pair.target.size())) + 1);
  }
  return lengths;
}

std::vector<std::vector<std::size_t>> pack(const std::vector<std::int32_t>& lengths,
                                           const std::vector<std::size_t>& order, std::int64_t max_tokens) {
  std::vector<std::vector<std::size_t>> batches;
  std::vector<std::size_t> current;
  std::int64_t longest = 0;
  for (std::size_t index : order) {
    const std::int64_t length = std::max<std::int64_t>(longest, lengths[index]);
    if (!current.empty() && length * static_cast<std::int64_t>(current.size() + 1) > max_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(index);
    longest = std::max<std::int64_t>(longest, lengths[index]);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace

std::vector<std::int32_t> PairsInMemory::padded_lengths() const { return lengths_of(pairs_); }

std::vector<std::vector<std::size_t>> token_batches(const std::vector<std::int32_t>& lengths,
                                                    std::int64_t max_tokens, std::uint64_t seed, std::int64_t epoch) {
  const auto stream = static_cast<std::uint64_t>(epoch);
  std::vector<std::uint64_t> tie_break(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const auto words = philox_block(PhiloxKey{seed, stream, kTieBreakSite}, i);
    tie_break[i] = (static_cast<std::uint64_t>(words.v[0]) << 32) | words.v[1];
  }
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (lengths[a] != lengths[b]) return lengths[a] < lengths[b];
    if (tie_break[a] != tie_break[b]) return tie_break[a] < tie_break[b];
    return a < b;
  });
  std::vector<std::vector<std::size_t>> batches = pack(lengths, order, max_tokens);
  // Fisher-Yates with Philox draws: the same permutation on every platform (std::shuffle's
  // algorithm is implementation-defined).
  for (std::size_t i = batches.size(); i > 1; --i) {
    const double u = philox_uniform(PhiloxKey{seed, stream, kOrderSite}, i);
    const auto j = static_cast<std::size_t>(u * static_cast<double>(i));
    std::swap(batches[i - 1], batches[j]);
  }
  return batches;
}

std::vector<std::vector<std::size_t>> token_batches(const std::vector<TokenPair>& pairs, std::int64_t max_tokens,
                                                    std::uint64_t seed, std::int64_t epoch) {
  return token_batches(lengths_of(pairs), max_tokens, seed, epoch);
}

std::vector<std::vector<std::size_t>> token_batches_in_order(const std::vector<std::int32_t>& lengths,
                                                             std::int64_t max_tokens) {
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
  return pack(lengths, order, max_tokens);
}

std::vector<std::vector<std::size_t>> token_batches_in_order(const std::vector<TokenPair>& pairs,
                                                             std::int64_t max_tokens) {
  return token_batches_in_order(lengths_of(pairs), max_tokens);
}

Batch make_batch(const PairTable& pairs, const std::vector<std::size_t>& rows, std::int64_t pad_id,
                 std::int64_t bos_id, std::int64_t eos_id) {
  std::vector<TokenPair> gathered;
  gathered.reserve(rows.size());
  for (std::size_t r : rows) gathered.push_back(pairs.pair(r));
  std::vector<std::size_t> in_order(rows.size());
  std::iota(in_order.begin(), in_order.end(), std::size_t{0});
  return make_batch(gathered, in_order, pad_id, bos_id, eos_id);
}

Batch make_batch(const std::vector<TokenPair>& pairs, const std::vector<std::size_t>& rows, std::int64_t pad_id,
                 std::int64_t bos_id, std::int64_t eos_id) {
  std::size_t source_length = 0, target_length = 0;
  for (std::size_t r : rows) {
    source_length = std::max(source_length, pairs[r].source.size() + 1);
    target_length = std::max(target_length, pairs[r].target.size() + 1);
  }
  const auto b = static_cast<std::int64_t>(rows.size());
  const auto s = static_cast<std::int64_t>(source_length), t = static_cast<std::int64_t>(target_length);
  Batch batch;
  batch.src = Tensor::empty({b, s}, DType::i64);
  batch.tgt = Tensor::empty({b, t}, DType::i64);
  batch.labels = Tensor::empty({b, t}, DType::i64);
  auto* src = batch.src.data<std::int64_t>();
  auto* tgt = batch.tgt.data<std::int64_t>();
  auto* labels = batch.labels.data<std::int64_t>();
  std::fill(src, src + b * s, pad_id);
  std::fill(tgt, tgt + b * t, pad_id);
  std::fill(labels, labels + b * t, pad_id);
  for (std::int64_t i = 0; i < b; ++i) {
    const TokenPair& pair = pairs[rows[static_cast<std::size_t>(i)]];
    const auto n = static_cast<std::int64_t>(pair.source.size());
    const auto m = static_cast<std::int64_t>(pair.target.size());
    for (std::int64_t j = 0; j < n; ++j) src[i * s + j] = pair.source[static_cast<std::size_t>(j)];
    src[i * s + n] = eos_id;
    tgt[i * t] = bos_id;
    for (std::int64_t j = 0; j < m; ++j) {
      tgt[i * t + j + 1] = pair.target[static_cast<std::size_t>(j)];
      labels[i * t + j] = pair.target[static_cast<std::size_t>(j)];
    }
    labels[i * t + m] = eos_id;
  }
  return batch;
}

std::vector<TokenPair> pairs_within(std::vector<TokenPair> pairs, std::int64_t max_len, std::int64_t* dropped) {
  const auto too_long = [max_len](const TokenPair& p) {
    return p.source.empty() || p.target.empty() || static_cast<std::int64_t>(p.source.size()) + 1 > max_len ||
           static_cast<std::int64_t>(p.target.size()) + 1 > max_len;
  };
  const auto before = pairs.size();
  std::erase_if(pairs, too_long);
  if (dropped != nullptr) *dropped = static_cast<std::int64_t>(before - pairs.size());
  return pairs;
}

}  // namespace trepro
