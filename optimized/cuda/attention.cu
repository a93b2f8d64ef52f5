// attention_forward: flash-style fused attention (Dao et al. 2022). Scores are computed a tile
// of 32 keys at a time into the running softmax of softmax_math.h; the [Tq, Tk] score matrix is
// never stored, only lse [B, H, Tq] for backward. Two kernels:
// - attention_forward_tiles: a warp per query row, 4 rows per block sharing each key/value tile;
// - attention_decode: Tq == 1 (incremental decoding with a KV cache), 4 warps splitting the keys
//   of the single query, merged at the end.
// Masks, dropout indices and the tiling arithmetic are attention_math.h / launch_shapes.h,
// host-tested.
#include <limits>
#include <utility>

#include "core/backend_checks.h"
#include "optimized/cuda/attention.cuh"
#include "optimized/cuda/cuda_backend_impl.h"

namespace trepro::cuda {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// grid: attention_query_launch(B*H, Tq) = (B*H, ceil(Tq / 4)); block: 128 threads (4 warps);
// shared: attention_query_shared(dk, dv, false) floats: the block's 4 query rows, one tile of 32
// keys [32][dk + 1] and their values [32][dv + 1].
// Warp w owns query i = 4 blockIdx.y + w of head blockIdx.x; lane l scores key 32 t + l of tile t
// and owns output columns l, l + 32, ... (kCols of them, kCols >= ceil(dv / 32)).
// Invariant: after tile t, `state` (identical in every lane) holds the max and the sum of
// exp(s - max) over keys [0, 32 (t + 1)), and acc the dropped, unnormalized output over the same
// keys relative to the same max. Tiles are loaded by the whole block between two barriers that
// every warp reaches (warps without a query skip only the arithmetic).
template <int kCols> __global__ void attention_forward_tiles(AttentionProblem a, float* out, float* lse) {
  extern __shared__ float shared[];
  const AttentionQueryShared layout = attention_query_shared(a.dk, a.dv, false);
  float* q_rows = shared;
  float* keys = shared + layout.q;
  float* values = keys + layout.keys;
  const std::int64_t bh = blockIdx.x, b = bh / a.heads, h = bh % a.heads;
  const std::int64_t first_query = static_cast<std::int64_t>(blockIdx.y) * kAttentionQueriesPerBlock;
  const std::int64_t queries = tile_length(a.tq, kAttentionQueriesPerBlock, blockIdx.y);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const std::int64_t i = attention_row(blockIdx.y, threadIdx.x);
  const bool active = warp < queries;
  load_head_rows(a.q, b, h, a.tq, a.heads, a.dk, first_query, queries, q_rows, a.dk);
  const std::int64_t key_end = attention_key_end(first_query + queries - 1, a.tq, a.tk, a.causal);

  SoftmaxState<float> state;
  float acc[kCols] = {};
  for (std::int64_t tile = 0; tile < tile_count(key_end, kAttentionKeyTile); ++tile) {
    const std::int64_t first_key = tile * kAttentionKeyTile;
    const std::int64_t keys_here = tile_length(key_end, kAttentionKeyTile, tile);
    __syncthreads();  // the previous tile is consumed (and, the first time, q_rows are loaded)
    load_head_rows(a.k, b, h, a.tk, a.heads, a.dk, first_key, keys_here, keys, a.dk + 1);
    load_head_rows(a.v, b, h, a.tk, a.heads, a.dv, first_key, keys_here, values, a.dv + 1);
    __syncthreads();
    if (!active) continue;
    const std::int64_t j = first_key + lane;
    float s = kMinusInf;
    if (lane < keys_here) {
      float dot = 0;
      for (std::int64_t c = 0; c < a.dk; ++c) dot += q_rows[warp * a.dk + c] * keys[lane * (a.dk + 1) + c];
      s = attention_masked_score(a, b, i, j, dot);
    }
    const float factor = softmax_rescale(state, warp_max(s));
    const float p = softmax_weight(s, state.max);
    state.sum += warp_sum(p);
    const float p_dropped = p != 0.0f ? p * attention_dropout(a, b, h, i, j) : 0.0f;
    for (int r = 0; r < kCols; ++r) acc[r] *= factor;
    for (int jj = 0; jj < keys_here; ++jj) {
      const float weight = __shfl_sync(0xffffffffu, p_dropped, jj);
      for (int r = 0; r < kCols; ++r) {
        const std::int64_t c = lane + r * kWarpSize;
        if (c < a.dv) acc[r] += weight * values[jj * (a.dv + 1) + c];
      }
    }
  }
  if (!active) return;
  const float inverse_sum = state.sum > 0.0f ? 1.0f / state.sum : 0.0f;  // no visible key: out = 0
  float* out_row = out + head_offset(b, i, h, a.tq, a.heads, a.dv);
  for (int r = 0; r < kCols; ++r) {
    const std::int64_t c = lane + r * kWarpSize;
    if (c < a.dv) out_row[c] = acc[r] * inverse_sum;
  }
  if (lane == 0) lse[bh * a.tq + i] = softmax_lse(state);
}

// grid: attention_decode_launch(B*H) = B*H blocks; block: 128 threads (4 warps); shared:
// attention_decode_shared(dk, dv) floats: the query row, then per warp (max, sum, dv partial
// outputs). Tq == 1. Warp w scores the key tiles w, w + 4, ... (lane l key 32 t + l, keys and
// values read from global memory: each is used once) with its own running softmax, as
// attention_forward_tiles; then every thread merges the 4 warps' states (softmax_merge) for its
// output columns. Invariant: a warp's saved (max, sum, partial) describe exactly its own keys.
template <int kCols> __global__ void attention_decode(AttentionProblem a, float* out, float* lse) {
  extern __shared__ float shared[];
  const std::int64_t stride = attention_decode_warp_stride(a.dv);
  float* q_row = shared;
  float* warp_states = shared + a.dk;
  const std::int64_t bh = blockIdx.x, b = bh / a.heads, h = bh % a.heads;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  load_head_rows(a.q, b, h, 1, a.heads, a.dk, 0, 1, q_row, a.dk);
  __syncthreads();
  const std::int64_t key_end = attention_key_end(0, 1, a.tk, a.causal);

  SoftmaxState<float> state;
  float acc[kCols] = {};
  for (std::int64_t tile = warp; tile < tile_count(key_end, kAttentionKeyTile); tile += kDecodeWarps) {
    const std::int64_t first_key = tile * kAttentionKeyTile;
    const std::int64_t keys_here = tile_length(key_end, kAttentionKeyTile, tile);
    const std::int64_t j = first_key + lane;
    float s = kMinusInf;
    if (lane < keys_here) {
      const float* key = a.k + head_offset(b, j, h, a.tk, a.heads, a.dk);
      float dot = 0;
      for (std::int64_t c = 0; c < a.dk; ++c) dot += q_row[c] * key[c];
      s = attention_masked_score(a, b, 0, j, dot);
    }
    const float factor = softmax_rescale(state, warp_max(s));
    const float p = softmax_weight(s, state.max);
    state.sum += warp_sum(p);
    const float p_dropped = p != 0.0f ? p * attention_dropout(a, b, h, 0, j) : 0.0f;
    for (int r = 0; r < kCols; ++r) acc[r] *= factor;
    for (int jj = 0; jj < keys_here; ++jj) {
      const float weight = __shfl_sync(0xffffffffu, p_dropped, jj);
      const float* value = a.v + head_offset(b, first_key + jj, h, a.tk, a.heads, a.dv);
      for (int r = 0; r < kCols; ++r) {
        const std::int64_t c = lane + r * kWarpSize;
        if (c < a.dv) acc[r] += weight * value[c];
      }
    }
  }
  float* mine = warp_states + warp * stride;
  if (lane == 0) {
    mine[0] = state.max;
    mine[1] = state.sum;
  }
  for (int r = 0; r < kCols; ++r) {
    const std::int64_t c = lane + r * kWarpSize;
    if (c < a.dv) mine[2 + c] = acc[r];
  }
  __syncthreads();
  SoftmaxState<float> merged;
  for (int w = 0; w < kDecodeWarps; ++w) {
    merged = softmax_merge(merged, SoftmaxState<float>{warp_states[w * stride], warp_states[w * stride + 1]});
  }
  const float inverse_sum = merged.sum > 0.0f ? 1.0f / merged.sum : 0.0f;
  float* out_row = out + head_offset(b, 0, h, 1, a.heads, a.dv);
  for (std::int64_t c = threadIdx.x; c < a.dv; c += blockDim.x) {
    float value = 0;
    for (int w = 0; w < kDecodeWarps; ++w) {
      value += warp_states[w * stride + 2 + c] * softmax_weight(warp_states[w * stride], merged.max);
    }
    out_row[c] = value * inverse_sum;
  }
  if (threadIdx.x == 0) lse[bh] = softmax_lse(merged);
}

}  // namespace

void CudaBackend::attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                    const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                                    Tensor& out, Tensor& lse) {
  constexpr const char* op = "attention_forward";
  const AttentionProblem a = attention_problem(
      checks::attention_forward_dims(DType::f32, Device::cuda, q, k, v, heads, key_padding, dropout, out, lse), q, k, v,
      key_padding, causal, scale, dropout);
  float* out_data = out.data<float>();
  float* lse_data = lse.data<float>();
  if (a.tq == 1) {
    const LaunchShape shape = attention_decode_launch(op, a.batch * a.heads, a.dk, a.dv);
    with_accumulator_columns(attention_accumulator_bucket(a.dv), [&](auto columns) {
      launch_attention_kernel(attention_decode<decltype(columns)::value>, shape, stream_, "attention_decode", op, a,
                              out_data, lse_data);
    });
    return;
  }
  const LaunchShape shape = attention_query_launch(op, a.batch * a.heads, a.tq, a.dk, a.dv, false);
  with_accumulator_columns(attention_accumulator_bucket(a.dv), [&](auto columns) {
    launch_attention_kernel(attention_forward_tiles<decltype(columns)::value>, shape, stream_, "attention_forward_tiles",
                            op, a, out_data, lse_data);
  });
}

}  // namespace trepro::cuda
