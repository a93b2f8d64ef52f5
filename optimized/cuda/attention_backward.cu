// attention_backward: flash-style, recomputing p_ij = exp(s_ij - lse_i) tile by tile from the
// forward's lse instead of storing the score matrix. Three kernels:
// - attention_delta: D_i = <dout_i, out_i>, a warp per row;
// - attention_backward_queries: dq, a warp per query, the key tiles shared by 4 queries;
// - attention_backward_keys: dk and dv, a warp per key, the query tiles shared by 4 keys.
// Splitting dq from dk/dv gives each output a single owner: no atomics, deterministic sums.
// Per-element maths (attention_probability, attention_score_gradient) is attention_math.h.
#include <algorithm>
#include <limits>

#include "core/backend_checks.h"
#include "optimized/cuda/attention.cuh"
#include "optimized/cuda/cuda_backend_impl.h"

namespace trepro::cuda {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// grid: warp_per_row_launch(B*H*Tq); block: 256 (8 warps); shared: none. Row r = (b*H + h)*Tq + i
// (the layout of lse and delta). Lane l sums columns l, l + 32, ... of head h of query i.
// Invariant: delta[r] is written once, by lane 0 of row r's warp, after the warp_sum.
__global__ void attention_delta(const float* out, const float* dout, std::int64_t heads, std::int64_t tq,
                                std::int64_t dv, std::int64_t rows, float* delta) {
  const std::int64_t r = warp_row(blockIdx.x, threadIdx.x);
  if (r >= rows) return;
  const std::int64_t bh = r / tq, i = r % tq, b = bh / heads, h = bh % heads;
  const std::int64_t offset = head_offset(b, i, h, tq, heads, dv);
  float partial = 0;
  for (std::int64_t c = threadIdx.x % kWarpSize; c < dv; c += kWarpSize) partial += dout[offset + c] * out[offset + c];
  const float total = warp_sum(partial);
  if (threadIdx.x % kWarpSize == 0) delta[r] = total;
}

// grid: attention_query_launch(B*H, Tq, with_dout) = (B*H, ceil(Tq / 4)); block: 128 (4 warps);
// shared: attention_query_shared(dk, dv, true) floats: 4 query rows, 4 dout rows, a tile of 32
// keys [32][dk + 1] and values [32][dv + 1].
// Warp w owns query i; lane l takes key 32 t + l of tile t: ds_ij = p_ij (factor_ij dp_ij - D_i)
// with dp_ij = <dout_i, v_j>; then dq_i += sum_j ds_ij k_j, lane l owning columns l, l + 32, ...
// Invariant: acc holds sum_j ds_ij k_j over the tiles seen; only keys [0, key_end) are loaded
// (causal: no later key is visible to the block's queries), and p = 0 for every hidden key.
template <int kCols>
__global__ void attention_backward_queries(AttentionProblem a, const float* dout, const float* lse, const float* delta,
                                           float* dq) {
  extern __shared__ float shared[];
  const AttentionQueryShared layout = attention_query_shared(a.dk, a.dv, true);
  float* q_rows = shared;
  float* dout_rows = q_rows + layout.q;
  float* keys = dout_rows + layout.dout;
  float* values = keys + layout.keys;
  const std::int64_t bh = blockIdx.x, b = bh / a.heads, h = bh % a.heads;
  const std::int64_t first_query = static_cast<std::int64_t>(blockIdx.y) * kAttentionQueriesPerBlock;
  const std::int64_t queries = tile_length(a.tq, kAttentionQueriesPerBlock, blockIdx.y);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const std::int64_t i = attention_row(blockIdx.y, threadIdx.x);
  const bool active = warp < queries;
  load_head_rows(a.q, b, h, a.tq, a.heads, a.dk, first_query, queries, q_rows, a.dk);
  load_head_rows(dout, b, h, a.tq, a.heads, a.dv, first_query, queries, dout_rows, a.dv);
  const float row_lse = active ? lse[bh * a.tq + i] : kMinusInf;
  const float row_delta = active ? delta[bh * a.tq + i] : 0.0f;
  const std::int64_t key_end = attention_key_end(first_query + queries - 1, a.tq, a.tk, a.causal);

  float acc[kCols] = {};
  for (std::int64_t tile = 0; tile < tile_count(key_end, kAttentionKeyTile); ++tile) {
    const std::int64_t first_key = tile * kAttentionKeyTile;
    const std::int64_t keys_here = tile_length(key_end, kAttentionKeyTile, tile);
    __syncthreads();
    load_head_rows(a.k, b, h, a.tk, a.heads, a.dk, first_key, keys_here, keys, a.dk + 1);
    load_head_rows(a.v, b, h, a.tk, a.heads, a.dv, first_key, keys_here, values, a.dv + 1);
    __syncthreads();
    if (!active) continue;
    const std::int64_t j = first_key + lane;
    float ds = 0;
    if (lane < keys_here) {
      float dot = 0, dp = 0;
      for (std::int64_t c = 0; c < a.dk; ++c) dot += q_rows[warp * a.dk + c] * keys[lane * (a.dk + 1) + c];
      for (std::int64_t c = 0; c < a.dv; ++c) dp += dout_rows[warp * a.dv + c] * values[lane * (a.dv + 1) + c];
      const float p = attention_probability(attention_masked_score(a, b, i, j, dot), row_lse);
      if (p != 0.0f) ds = attention_score_gradient(p, dp, attention_dropout(a, b, h, i, j), row_delta);
    }
    for (int jj = 0; jj < keys_here; ++jj) {
      const float weight = __shfl_sync(0xffffffffu, ds, jj);
      for (int r = 0; r < kCols; ++r) {
        const std::int64_t c = lane + r * kWarpSize;
        if (c < a.dk) acc[r] += weight * keys[jj * (a.dk + 1) + c];
      }
    }
  }
  if (!active) return;
  float* dq_row = dq + head_offset(b, i, h, a.tq, a.heads, a.dk);
  for (int r = 0; r < kCols; ++r) {
    const std::int64_t c = lane + r * kWarpSize;
    if (c < a.dk) dq_row[c] = a.scale * acc[r];
  }
}

// grid: attention_key_launch(B*H, Tk) = (B*H, ceil(Tk / 4)); block: 128 (4 warps); shared:
// attention_key_shared(dk, dv) floats: 4 key rows, 4 value rows, a tile of 32 queries
// [32][dk + 1], their douts [32][dv + 1], lse [32] and delta [32].
// Warp w owns key j; lane l takes query 32 t + l of tile t and computes p_ij, the dropout factor
// and ds_ij as the query pass does; then dv_j += sum_i factor_ij p_ij dout_i and
// dk_j += sum_i ds_ij q_i, lane l owning columns l, l + 32, ... of both (kCols >= both widths).
// Invariant: the query tiles start at attention_query_begin of the block's first key (causal:
// no earlier query sees these keys), and p = 0 for every hidden (i, j).
template <int kCols>
__global__ void attention_backward_keys(AttentionProblem a, const float* dout, const float* lse, const float* delta,
                                        float* dk, float* dv) {
  extern __shared__ float shared[];
  const AttentionKeyShared layout = attention_key_shared(a.dk, a.dv);
  float* k_rows = shared;
  float* v_rows = k_rows + layout.k;
  float* queries = v_rows + layout.v;
  float* douts = queries + layout.queries;
  float* tile_lse = douts + layout.douts;
  float* tile_delta = tile_lse + layout.lse;
  const std::int64_t bh = blockIdx.x, b = bh / a.heads, h = bh % a.heads;
  const std::int64_t first_key = static_cast<std::int64_t>(blockIdx.y) * kAttentionQueriesPerBlock;
  const std::int64_t keys_here = tile_length(a.tk, kAttentionQueriesPerBlock, blockIdx.y);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const std::int64_t j = attention_row(blockIdx.y, threadIdx.x);
  const bool active = warp < keys_here;
  load_head_rows(a.k, b, h, a.tk, a.heads, a.dk, first_key, keys_here, k_rows, a.dk);
  load_head_rows(a.v, b, h, a.tk, a.heads, a.dv, first_key, keys_here, v_rows, a.dv);
  const std::int64_t first_tile = attention_query_begin(first_key, a.tq, a.tk, a.causal) / kAttentionKeyTile;

  float dk_acc[kCols] = {}, dv_acc[kCols] = {};
  for (std::int64_t tile = first_tile; tile < tile_count(a.tq, kAttentionKeyTile); ++tile) {
    const std::int64_t first_query = tile * kAttentionKeyTile;
    const std::int64_t queries_here = tile_length(a.tq, kAttentionKeyTile, tile);
    __syncthreads();
    load_head_rows(a.q, b, h, a.tq, a.heads, a.dk, first_query, queries_here, queries, a.dk + 1);
    load_head_rows(dout, b, h, a.tq, a.heads, a.dv, first_query, queries_here, douts, a.dv + 1);
    for (std::int64_t e = threadIdx.x; e < queries_here; e += blockDim.x) {
      tile_lse[e] = lse[bh * a.tq + first_query + e];
      tile_delta[e] = delta[bh * a.tq + first_query + e];
    }
    __syncthreads();
    if (!active) continue;
    const std::int64_t i = first_query + lane;
    float ds = 0, p_dropped = 0;
    if (lane < queries_here) {
      float dot = 0, dp = 0;
      for (std::int64_t c = 0; c < a.dk; ++c) dot += queries[lane * (a.dk + 1) + c] * k_rows[warp * a.dk + c];
      for (std::int64_t c = 0; c < a.dv; ++c) dp += douts[lane * (a.dv + 1) + c] * v_rows[warp * a.dv + c];
      const float p = attention_probability(attention_masked_score(a, b, i, j, dot), tile_lse[lane]);
      if (p != 0.0f) {
        const float factor = attention_dropout(a, b, h, i, j);
        ds = attention_score_gradient(p, dp, factor, tile_delta[lane]);
        p_dropped = p * factor;
      }
    }
    for (int ii = 0; ii < queries_here; ++ii) {
      const float ds_i = __shfl_sync(0xffffffffu, ds, ii);
      const float p_i = __shfl_sync(0xffffffffu, p_dropped, ii);
      for (int r = 0; r < kCols; ++r) {
        const std::int64_t c = lane + r * kWarpSize;
        if (c < a.dk) dk_acc[r] += ds_i * queries[ii * (a.dk + 1) + c];
        if (c < a.dv) dv_acc[r] += p_i * douts[ii * (a.dv + 1) + c];
      }
    }
  }
  if (!active) return;
  float* dk_row = dk + head_offset(b, j, h, a.tk, a.heads, a.dk);
  float* dv_row = dv + head_offset(b, j, h, a.tk, a.heads, a.dv);
  for (int r = 0; r < kCols; ++r) {
    const std::int64_t c = lane + r * kWarpSize;
    if (c < a.dk) dk_row[c] = a.scale * dk_acc[r];
    if (c < a.dv) dv_row[c] = dv_acc[r];
  }
}

}  // namespace

void CudaBackend::attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                     const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                                     const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                                     Tensor& dv) {
  constexpr const char* op = "attention_backward";
  const checks::AttentionDims dims = checks::attention_backward_dims(DType::f32, Device::cuda, q, k, v, heads,
                                                                     key_padding, dropout, out, lse, dout, dq, dk, dv);
  const AttentionProblem a = attention_problem(dims, q, k, v, key_padding, causal, scale, dropout);
  const std::int64_t batch_heads = a.batch * a.heads, rows = batch_heads * a.tq;
  const LaunchShape query_shape = attention_query_launch(op, batch_heads, a.tq, a.dk, a.dv, true);
  const LaunchShape key_shape = attention_key_launch(op, batch_heads, a.tk, a.dk, a.dv);

  Tensor delta = empty({std::max<std::int64_t>(rows, 1)}, DType::f32);
  const LaunchShape delta_shape = warp_per_row_launch(rows);
  if (delta_shape.grid_x > 0) {
    attention_delta<<<grid_of(delta_shape.grid_x), delta_shape.block, 0, stream_>>>(
        out.data<float>(), dout.data<float>(), a.heads, a.tq, a.dv, rows, delta.data<float>());
    check_launch("attention_delta", op);
  }
  const float* dout_data = dout.data<float>();
  const float* lse_data = lse.data<float>();
  const float* delta_data = delta.data<float>();
  float* dq_data = dq.data<float>();
  float* dk_data = dk.data<float>();
  float* dv_data = dv.data<float>();
  with_accumulator_columns(attention_accumulator_bucket(a.dk), [&](auto columns) {
    launch_attention_kernel(attention_backward_queries<decltype(columns)::value>, query_shape, stream_,
                            "attention_backward_queries", op, a, dout_data, lse_data, delta_data, dq_data);
  });
  with_accumulator_columns(attention_accumulator_bucket(std::max(a.dk, a.dv)), [&](auto columns) {
    launch_attention_kernel(attention_backward_keys<decltype(columns)::value>, key_shape, stream_,
                            "attention_backward_keys", op, a, dout_data, lse_data, delta_data, dk_data, dv_data);
  });
}

}  // namespace trepro::cuda
