// launch_shapes.h: every kernel's grid covers its items exactly once, with partial tails and odd
// sizes, using the same index maps the kernels use; shared-memory layouts fit and do not
// overlap; impossible launches are refused with the op's name.
#include <stdexcept>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "optimized/cuda/launch_shapes.h"

namespace trepro::cuda {
namespace {

TEST(LaunchShapes, GridStrideCoversEveryItemOnce) {
  for (std::int64_t items : {0, 1, 255, 256, 257, 1000, 5000}) {
    for (std::int64_t cap : {std::int64_t{1}, std::int64_t{3}, kGridStrideBlocks}) {
      const LaunchShape shape = elementwise_launch(items, cap);
      EXPECT_LE(shape.grid_x, cap);
      EXPECT_EQ(shape.grid_x == 0, items == 0);
      std::vector<int> seen(static_cast<std::size_t>(items), 0);
      const std::int64_t stride = shape.grid_x * shape.block;
      for (std::int64_t block = 0; block < shape.grid_x; ++block) {
        for (int thread = 0; thread < shape.block; ++thread) {
          for (std::int64_t i = block * shape.block + thread; i < items; i += stride) ++seen[i];
        }
      }
      for (std::int64_t i = 0; i < items; ++i) ASSERT_EQ(seen[i], 1) << "items=" << items << " cap=" << cap << " i=" << i;
    }
  }
}

TEST(LaunchShapes, WarpPerRowCoversEveryRowOnce) {
  for (std::int64_t rows : {0, 1, 7, 8, 9, 100}) {
    const LaunchShape shape = warp_per_row_launch(rows);
    std::vector<int> seen(static_cast<std::size_t>(rows), 0);
    for (std::int64_t block = 0; block < shape.grid_x; ++block) {
      for (int thread = 0; thread < shape.block; thread += kWarpSize) {
        const std::int64_t row = warp_row(block, thread);
        if (row < rows) ++seen[row];
      }
    }
    for (std::int64_t r = 0; r < rows; ++r) EXPECT_EQ(seen[r], 1) << "rows=" << rows << " r=" << r;
    EXPECT_LT((shape.grid_x - 1) * kWarpsPerBlock, std::max<std::int64_t>(rows, 1));  // no idle block
  }
  EXPECT_EQ(block_per_row_launch(13).grid_x, 13);
}

TEST(LaunchShapes, TilesCoverLengthWithAShortLastTile) {
  for (std::int64_t length : {0, 1, 31, 32, 33, 64, 100}) {
    std::int64_t covered = 0;
    for (std::int64_t t = 0; t < tile_count(length, 32); ++t) {
      const std::int64_t here = tile_length(length, 32, t);
      EXPECT_GT(here, 0);
      EXPECT_LE(here, 32);
      EXPECT_EQ(covered, t * 32);
      covered += here;
    }
    EXPECT_EQ(covered, length);
  }
}

TEST(LaunchShapes, AttentionQueryLaunchCoversEveryQueryOnce) {
  for (std::int64_t tq : {1, 3, 4, 5, 33}) {
    const LaunchShape shape = attention_query_launch("attention_forward", 6, tq, 64, 64, false);
    EXPECT_EQ(shape.grid_x, 6);
    EXPECT_EQ(shape.block, kAttentionQueriesPerBlock * kWarpSize);
    std::vector<int> seen(static_cast<std::size_t>(tq), 0);
    for (std::int64_t y = 0; y < shape.grid_y; ++y) {
      for (int thread = 0; thread < shape.block; thread += kWarpSize) {
        const std::int64_t i = attention_row(y, thread);
        if (i < tq) ++seen[i];
      }
    }
    for (std::int64_t i = 0; i < tq; ++i) EXPECT_EQ(seen[i], 1) << "tq=" << tq << " i=" << i;
  }
  EXPECT_EQ(attention_query_launch("attention_forward", 6, 0, 64, 64, false).grid_x, 0);  // not launched
  EXPECT_EQ(attention_key_launch("attention_backward", 6, 0, 64, 64).grid_x, 0);
}

TEST(LaunchShapes, SharedLayoutsAddUpAndFitTheDevice) {
  for (std::int64_t dk : {1, 8, 33, 64, 256}) {
    for (std::int64_t dv : {1, 7, 64, 256}) {
      const AttentionQueryShared q = attention_query_shared(dk, dv, true);
      EXPECT_EQ(q.total, q.q + q.dout + q.keys + q.values);
      EXPECT_EQ(q.keys, kAttentionKeyTile * (dk + 1));  // padded rows
      EXPECT_EQ(attention_query_shared(dk, dv, false).dout, 0);
      const AttentionKeyShared k = attention_key_shared(dk, dv);
      EXPECT_EQ(k.total, k.k + k.v + k.queries + k.douts + k.lse + k.delta);
      const LaunchShape fwd = attention_query_launch("attention_forward", 1, 8, dk, dv, false);
      const LaunchShape bwd_q = attention_query_launch("attention_backward", 1, 8, dk, dv, true);
      const LaunchShape bwd_k = attention_key_launch("attention_backward", 1, 8, dk, dv);
      const LaunchShape dec = attention_decode_launch("attention_forward", 1, dk, dv);
      EXPECT_EQ(fwd.shared_bytes, sizeof(float) * static_cast<std::size_t>(attention_query_shared(dk, dv, false).total));
      EXPECT_EQ(bwd_k.shared_bytes, sizeof(float) * static_cast<std::size_t>(k.total));
      EXPECT_EQ(dec.shared_bytes, sizeof(float) * static_cast<std::size_t>(dk + kDecodeWarps * (2 + dv)));
      // sm_80 allows 163 KiB of dynamic shared memory per block (sm_90: 227 KiB).
      for (const LaunchShape& s : {fwd, bwd_q, bwd_k, dec}) EXPECT_LE(s.shared_bytes, 163u << 10);
    }
  }
}

TEST(LaunchShapes, AccumulatorBucketCoversTheHead) {
  for (std::int64_t d = 1; d <= kMaxAttentionHeadWidth; ++d) {
    const int bucket = attention_accumulator_bucket(d);
    EXPECT_GE(bucket * kWarpSize, d) << "d=" << d;
    EXPECT_TRUE(bucket == 1 || bucket == 2 || bucket == 4 || bucket == 8);
    EXPECT_EQ(lane_columns(d), (d + 31) / 32);
  }
  EXPECT_EQ(attention_accumulator_bucket(32), 1);
  EXPECT_EQ(attention_accumulator_bucket(33), 2);
  EXPECT_EQ(attention_accumulator_bucket(64), 2);
  EXPECT_EQ(attention_accumulator_bucket(65), 4);
}

TEST(LaunchShapes, ImpossibleLaunchesNameTheOp) {
  EXPECT_THAT([] { attention_query_launch("attention_forward", 1, 8, 257, 64, false); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("attention_forward: head width 257")));
  EXPECT_THAT([] { attention_key_launch("attention_backward", 1, 8, 64, 300); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("attention_backward: head width 300")));
  EXPECT_THAT([] { attention_query_launch("attention_forward", 1, 4 * kMaxGridY + 1, 64, 64, false); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("exceeds CUDA's limits")));
  EXPECT_THROW(block_per_row_launch(kMaxGridX + 1), std::invalid_argument);
}

}  // namespace
}  // namespace trepro::cuda
