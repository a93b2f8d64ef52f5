// Launch shapes of every CUDA kernel, as host functions the host tests check (bounds, tails,
// odd sizes, lengths not a multiple of the tile), and the index maps the kernels use to turn
// (block, thread) into the element they own, __host__ __device__ so that the tests enumerate a
// whole grid with the very code the kernels run. No CUDA types: grid and block are plain ints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/host_device.h"

namespace trepro::cuda {

constexpr int kWarpSize = 32;
constexpr int kBlockThreads = 256;           // elementwise, row-per-warp and row-per-block kernels
constexpr int kWarpsPerBlock = kBlockThreads / kWarpSize;
constexpr std::int64_t kMaxGridX = 2147483647;
constexpr std::int64_t kMaxGridY = 65535;
// Grid-stride kernels stop growing the grid here: enough blocks to fill an H100 many times.
constexpr std::int64_t kGridStrideBlocks = 8192;
// The fused attention kernels keep ceil(D / 32) accumulators per lane in registers.
constexpr std::int64_t kMaxAttentionHeadWidth = 256;
constexpr int kAttentionQueriesPerBlock = 4;  // one warp per query row
constexpr int kAttentionKeyTile = 32;         // one lane per key of the tile
constexpr int kDecodeWarps = 4;               // warps splitting the keys of a single query

struct LaunchShape {
  std::int64_t grid_x = 0;  // 0: nothing to do, the kernel is not launched
  std::int64_t grid_y = 1;
  int block = kBlockThreads;
  std::size_t shared_bytes = 0;
};

// One thread per item, grid-stride loop: item = block * blockDim + thread, stepping by
// grid * blockDim. `max_blocks` caps the grid (tests use small caps to exercise the stride).
LaunchShape elementwise_launch(std::int64_t items, std::int64_t max_blocks = kGridStrideBlocks);
// One warp per row: row = block * kWarpsPerBlock + warp, rows past the end idle.
LaunchShape warp_per_row_launch(std::int64_t rows);
// One block per row (long rows: cross-entropy, log-softmax), the block striding over the row.
LaunchShape block_per_row_launch(std::int64_t rows);

// Fused attention, forward and the dq pass of backward: grid (B*H, ceil(Tq / 4)), 4 warps, a
// warp per query; shared memory holds the block's 4 query rows (and 4 dout rows for dq) and one
// tile of 32 keys ([32][dk + 1], padded against bank conflicts) and values ([32][dv + 1]).
// Throws std::invalid_argument naming `op` when a head is wider than kMaxAttentionHeadWidth or
// the grid exceeds CUDA's limits.
LaunchShape attention_query_launch(const std::string& op, std::int64_t batch_heads, std::int64_t tq,
                                   std::int64_t dk, std::int64_t dv, bool with_dout);
// The dk/dv pass of backward: grid (B*H, ceil(Tk / 4)), a warp per key; shared memory holds the
// block's 4 key and value rows and a tile of 32 queries ([32][dk + 1]), their douts
// ([32][dv + 1]), lse and D.
LaunchShape attention_key_launch(const std::string& op, std::int64_t batch_heads, std::int64_t tk,
                                 std::int64_t dk, std::int64_t dv);
// Decode (Tq == 1): grid B*H, 4 warps splitting the keys (warp w takes j = w, w + 4, ...); shared
// memory holds the query row and each warp's partial state (max, sum, dv accumulators).
LaunchShape attention_decode_launch(const std::string& op, std::int64_t batch_heads, std::int64_t dk,
                                    std::int64_t dv);


// ---- shared-memory layouts, shared by kernels (which carve the dynamic buffer with them) and
// launches (which size it) -----------------------------------------------------------------------

// Floats of the query-launch shared layout, in order: q rows, dout rows, key tile, value tile.
// Tile rows have stride d + 1: lane l reading column c of row l hits bank (l (d + 1) + c) % 32,
// distinct across the warp whatever d is.
struct AttentionQueryShared {
  std::int64_t q, dout, keys, values, total;
};
TR_HOST_DEVICE inline AttentionQueryShared attention_query_shared(std::int64_t dk, std::int64_t dv, bool with_dout) {
  AttentionQueryShared s{};
  s.q = kAttentionQueriesPerBlock * dk;
  s.dout = with_dout ? kAttentionQueriesPerBlock * dv : 0;
  s.keys = kAttentionKeyTile * (dk + 1);
  s.values = kAttentionKeyTile * (dv + 1);
  s.total = s.q + s.dout + s.keys + s.values;
  return s;
}
// Floats of the key-launch shared layout: k rows, v rows, query tile, dout tile, lse, delta.
struct AttentionKeyShared {
  std::int64_t k, v, queries, douts, lse, delta, total;
};
TR_HOST_DEVICE inline AttentionKeyShared attention_key_shared(std::int64_t dk, std::int64_t dv) {
  AttentionKeyShared s{};
  s.k = kAttentionQueriesPerBlock * dk;
  s.v = kAttentionQueriesPerBlock * dv;
  s.queries = kAttentionKeyTile * (dk + 1);
  s.douts = kAttentionKeyTile * (dv + 1);
  s.lse = kAttentionKeyTile;
  s.delta = kAttentionKeyTile;
  s.total = s.k + s.v + s.queries + s.douts + s.lse + s.delta;
  return s;
}
// Floats of the decode layout: the query row, then per warp (max, sum, dv accumulators).
TR_HOST_DEVICE inline std::int64_t attention_decode_warp_stride(std::int64_t dv) { return 2 + dv; }
TR_HOST_DEVICE inline std::int64_t attention_decode_shared(std::int64_t dk, std::int64_t dv) {
  return dk + kDecodeWarps * attention_decode_warp_stride(dv);
}

// ---- index maps, shared by kernels and tests -------------------------------------------------

TR_HOST_DEVICE inline std::int64_t warp_row(std::int64_t block, int thread) {
  return block * kWarpsPerBlock + thread / kWarpSize;
}
// Query row of warp `thread / 32` in query tile `block_y`.
TR_HOST_DEVICE inline std::int64_t attention_row(std::int64_t block_y, int thread) {
  return block_y * kAttentionQueriesPerBlock + thread / kWarpSize;
}
// Number of 32-wide tiles covering `length` (the last one partial when length % 32 != 0).
TR_HOST_DEVICE inline std::int64_t tile_count(std::int64_t length, std::int64_t tile) {
  return (length + tile - 1) / tile;
}
// Elements of tile `t` that exist: tile, except a shorter last tile.
TR_HOST_DEVICE inline std::int64_t tile_length(std::int64_t length, std::int64_t tile, std::int64_t t) {
  const std::int64_t rest = length - t * tile;
  return rest < tile ? rest : tile;
}
// Per-lane accumulators for a head of width d: lane l owns columns l, l + 32, ...
TR_HOST_DEVICE inline int lane_columns(std::int64_t d) { return static_cast<int>((d + kWarpSize - 1) / kWarpSize); }

}  // namespace trepro::cuda

namespace trepro::cuda {
// The register accumulators of the attention kernels come in instantiated sizes 1, 2, 4, 8 per
// lane: the smallest that covers a head of width d (d <= kMaxAttentionHeadWidth).
inline int attention_accumulator_bucket(std::int64_t d) {
  const int needed = lane_columns(d);
  return needed <= 1 ? 1 : needed <= 2 ? 2 : needed <= 4 ? 4 : 8;
}
}  // namespace trepro::cuda
