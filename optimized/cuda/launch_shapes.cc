#include "optimized/cuda/launch_shapes.h"

#include <algorithm>
#include <stdexcept>

namespace trepro::cuda {

namespace {

void check_head_width(const std::string& op, std::int64_t dk, std::int64_t dv) {
  const std::int64_t widest = std::max(dk, dv);
  if (widest > kMaxAttentionHeadWidth) {
    throw std::invalid_argument(op + ": head width " + std::to_string(widest) + " exceeds the CUDA kernels' " +
                                std::to_string(kMaxAttentionHeadWidth));
  }
}

void check_grid(const std::string& op, const LaunchShape& shape) {
  if (shape.grid_x > kMaxGridX || shape.grid_y > kMaxGridY) {
    throw std::invalid_argument(op + ": grid (" + std::to_string(shape.grid_x) + ", " +
                                std::to_string(shape.grid_y) + ") exceeds CUDA's limits (" +
                                std::to_string(kMaxGridX) + ", " + std::to_string(kMaxGridY) + ")");
  }
}

}  // namespace

LaunchShape elementwise_launch(std::int64_t items, std::int64_t max_blocks) {
  LaunchShape shape;
  shape.grid_x = std::min(tile_count(items, kBlockThreads), max_blocks);
  return shape;
}

LaunchShape warp_per_row_launch(std::int64_t rows) {
  LaunchShape shape;
  shape.grid_x = tile_count(rows, kWarpsPerBlock);
  check_grid("warp_per_row_launch", shape);
  return shape;
}

LaunchShape block_per_row_launch(std::int64_t rows) {
  LaunchShape shape;
  shape.grid_x = rows;
  check_grid("block_per_row_launch", shape);
  return shape;
}

LaunchShape attention_query_launch(const std::string& op, std::int64_t batch_heads, std::int64_t tq,
                                   std::int64_t dk, std::int64_t dv, bool with_dout) {
  check_head_width(op, dk, dv);
  LaunchShape shape;
  shape.grid_x = tq == 0 ? 0 : batch_heads;
  shape.grid_y = std::max<std::int64_t>(1, tile_count(tq, kAttentionQueriesPerBlock));
  shape.block = kAttentionQueriesPerBlock * kWarpSize;
  shape.shared_bytes = static_cast<std::size_t>(attention_query_shared(dk, dv, with_dout).total) * sizeof(float);
  check_grid(op, shape);
  return shape;
}

LaunchShape attention_key_launch(const std::string& op, std::int64_t batch_heads, std::int64_t tk,
                                 std::int64_t dk, std::int64_t dv) {
  check_head_width(op, dk, dv);
  LaunchShape shape;
  shape.grid_x = tk == 0 ? 0 : batch_heads;
  shape.grid_y = std::max<std::int64_t>(1, tile_count(tk, kAttentionQueriesPerBlock));
  shape.block = kAttentionQueriesPerBlock * kWarpSize;
  shape.shared_bytes = static_cast<std::size_t>(attention_key_shared(dk, dv).total) * sizeof(float);
  check_grid(op, shape);
  return shape;
}

LaunchShape attention_decode_launch(const std::string& op, std::int64_t batch_heads, std::int64_t dk,
                                    std::int64_t dv) {
  check_head_width(op, dk, dv);
  LaunchShape shape;
  shape.grid_x = batch_heads;
  shape.block = kDecodeWarps * kWarpSize;
  shape.shared_bytes = static_cast<std::size_t>(attention_decode_shared(dk, dv)) * sizeof(float);
  check_grid(op, shape);
  return shape;
}

}  // namespace trepro::cuda
