// Token batching (experiments/data/token_batches.h): the budget, coverage of every pair once per
// epoch, determinism in (seed, epoch), the shuffle, and the tensor layout of a batch.
#include "experiments/data/token_batches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace trepro {
namespace {

// Pairs of varied lengths: source i % 17 + 1 tokens, target i % 11 + 1 tokens.
std::vector<TokenPair> varied_pairs(std::size_t count) {
  std::vector<TokenPair> pairs(count);
  for (std::size_t i = 0; i < count; ++i) {
    pairs[i].source.assign(i % 17 + 1, static_cast<int>(4 + i % 50));
    pairs[i].target.assign(i % 11 + 1, static_cast<int>(5 + i % 40));
  }
  return pairs;
}

// The padded size of a batch: rows x the longest of source + EOS and BOS + target.
std::int64_t padded_tokens(const std::vector<TokenPair>& pairs, const std::vector<std::size_t>& rows) {
  std::size_t longest = 0;
  for (std::size_t r : rows) longest = std::max({longest, pairs[r].source.size() + 1, pairs[r].target.size() + 1});
  return static_cast<std::int64_t>(longest * rows.size());
}

TEST(TokenBatches, StayWithinTheBudgetAndCoverEveryPairOnce) {
  const auto pairs = varied_pairs(500);
  const auto batches = token_batches(pairs, 64, 7, 1);
  std::multiset<std::size_t> seen;
  for (const auto& rows : batches) {
    EXPECT_LE(padded_tokens(pairs, rows), 64);
    seen.insert(rows.begin(), rows.end());
  }
  ASSERT_EQ(seen.size(), pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) EXPECT_EQ(seen.count(i), 1u) << "pair " << i;
}

TEST(TokenBatches, APairLongerThanTheBudgetGetsABatchOfItsOwn) {
  std::vector<TokenPair> pairs = varied_pairs(10);
  pairs[3].source.assign(100, 9);
  const auto batches = token_batches(pairs, 32, 1, 1);
  const auto it = std::find_if(batches.begin(), batches.end(), [](const auto& rows) {
    return std::find(rows.begin(), rows.end(), std::size_t{3}) != rows.end();
  });
  ASSERT_NE(it, batches.end());
  EXPECT_EQ(it->size(), 1u);
}

TEST(TokenBatches, BatchesGroupSimilarLengthsSoLittleIsPadding) {
  // Sorted packing pads a batch only up to its longest pair, and neighbours in length order
  // differ by at most one token; packing these lengths (2..18) in random order would pad about
  // half of every batch.
  const auto pairs = varied_pairs(2000);
  std::int64_t padded = 0, real = 0;
  for (const auto& rows : token_batches(pairs, 256, 3, 1)) padded += padded_tokens(pairs, rows);
  for (const TokenPair& pair : pairs) real += static_cast<std::int64_t>(std::max(pair.source.size(), pair.target.size()) + 1);
  EXPECT_LT(static_cast<double>(padded), 1.05 * static_cast<double>(real));
}

TEST(TokenBatches, AreAPureFunctionOfSeedAndEpoch) {
  const auto pairs = varied_pairs(300);
  EXPECT_EQ(token_batches(pairs, 64, 5, 2), token_batches(pairs, 64, 5, 2));
  EXPECT_NE(token_batches(pairs, 64, 5, 2), token_batches(pairs, 64, 5, 3));
  EXPECT_NE(token_batches(pairs, 64, 5, 2), token_batches(pairs, 64, 6, 2));
}

TEST(TokenBatches, AreShuffledAcrossLengths) {
  // In training order the batches' lengths are not sorted (the order is shuffled).
  const auto pairs = varied_pairs(300);
  const auto batches = token_batches(pairs, 64, 5, 1);
  std::vector<std::size_t> lengths;
  for (const auto& rows : batches) lengths.push_back(pairs[rows.front()].source.size());
  EXPECT_FALSE(std::is_sorted(lengths.begin(), lengths.end()));
}

TEST(TokenBatches, InOrderCoversEveryPairSortedByLength) {
  const auto pairs = varied_pairs(100);
  std::size_t count = 0, previous = 0;
  for (const auto& rows : token_batches_in_order(pairs, 40)) {
    EXPECT_LE(padded_tokens(pairs, rows), 40);
    for (std::size_t r : rows) {
      const std::size_t length = std::max(pairs[r].source.size(), pairs[r].target.size());
      EXPECT_GE(length, previous);
      previous = length;
      ++count;
    }
  }
  EXPECT_EQ(count, pairs.size());
}

TEST(MakeBatch, LaysOutSourceEosBosTargetAndLabels) {
  const std::vector<TokenPair> pairs = {{{10, 11, 12}, {20}}, {{13}, {21, 22}}};
  const Batch batch = make_batch(pairs, {0, 1}, /*pad*/ 0, /*bos*/ 1, /*eos*/ 2);
  ASSERT_EQ(batch.src.shape(), (Shape{2, 4}));
  ASSERT_EQ(batch.tgt.shape(), (Shape{2, 3}));
  ASSERT_EQ(batch.labels.shape(), (Shape{2, 3}));
  const std::vector<double> src = {10, 11, 12, 2, 13, 2, 0, 0};
  const std::vector<double> tgt = {1, 20, 0, 1, 21, 22};
  const std::vector<double> labels = {20, 2, 0, 21, 22, 2};
  for (std::size_t i = 0; i < src.size(); ++i) EXPECT_EQ(batch.src.at(static_cast<std::int64_t>(i)), src[i]) << i;
  for (std::size_t i = 0; i < tgt.size(); ++i) {
    EXPECT_EQ(batch.tgt.at(static_cast<std::int64_t>(i)), tgt[i]) << i;
    EXPECT_EQ(batch.labels.at(static_cast<std::int64_t>(i)), labels[i]) << i;
  }
}

TEST(PairsWithin, DropsEmptyAndTooLongPairsAndCountsThem) {
  std::vector<TokenPair> pairs = {{{4, 5}, {6}}, {{}, {6}}, {{4}, {}}, {{4, 4, 4, 4}, {6}}, {{4}, {6, 6, 6}}};
  std::int64_t dropped = -1;
  const auto kept = pairs_within(pairs, /*max_len*/ 4, &dropped);
  // {4,4,4,4} + EOS is 5 > 4 positions; {6,6,6} + BOS is 4 and fits.
  EXPECT_EQ(dropped, 3);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].source, (std::vector<int>{4, 5}));
  EXPECT_EQ(kept[1].target, (std::vector<int>{6, 6, 6}));
}

}  // namespace
}  // namespace trepro
