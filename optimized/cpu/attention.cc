// Fused, flash-style attention (Dao et al. 2022, FlashAttention-2 loop order), float32, once per
// Highway target. The maths is Backend::attention_forward/backward's (core/backend.h); the
// [Tq, Tk] score matrix of a head is never materialized: work is done on tiles of at most
// kQueryTile queries x kKeyTile keys held in the worker's workspace (O(tile) memory per thread).
//
// Forward, one task per (batch row, head, query tile), over key tiles with the online softmax:
//   S = Q K^T (tile), s = scale S masked,  m' = max(m, max_j s_j),  alpha = exp(m - m'),
//   l' = alpha l + sum_j exp(s_j - m'),  O' = alpha O + P~ V,
//   and at the end out = O / l, lse = m + log l (out 0 and lse -inf when no key is visible).
// Dropout multiplies the weights of the P~ V product only (l sums the undropped weights).
//
// Backward, one task per (batch row, head): key tiles outer, query tiles inner. dK and dV of a
// key tile accumulate in the workspace over the query tiles; dq of the head is accumulated in
// place over the key tiles. A task writes only its own head's slices, so there are no races
// and the result does not depend on the thread count. With p = exp(s - lse) recomputed:
//   dV += P~^T dO,  dP = dO V^T,  dS = P (F dP - D) with D_i = <dout_i, out_i>,
//   dK += scale dS^T Q,  dQ += scale dS K      (F the dropout factors, 1 without dropout)
#include "optimized/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/attention_problem.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/attention.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/attention_backward-inl.h"
#include "optimized/cpu/attention_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// The online-softmax update of one query row by one key tile. `s` holds the masked logits and
// gets the weights to multiply V with (dropped when dropout is active); `o` is the row's
// accumulator, rescaled by alpha. Returns false when the row has seen no key yet (s zeroed).
inline bool online_softmax_row(FloatTag d, float* s, std::size_t n, float tile_max, float& row_max,
                               float& row_sum, float* o, std::size_t o_width, const float* factor) {
  const float new_max = std::max(row_max, tile_max);
  if (new_max == kMinusInf) {
    zero_row(d, s, n);
    return false;
  }
  const float alpha = std::exp(row_max - new_max);  // 0 when row_max was -inf, 1 when unchanged
  row_sum = row_sum * alpha + exp_row(d, s, n, new_max);
  row_max = new_max;
  if (alpha != 1.0f) {
    const auto valpha = hn::Set(d, alpha);
    for (std::size_t c = 0; c < o_width; c += hn::Lanes(d)) hn::StoreU(hn::Mul(valpha, hn::LoadU(d, o + c)), d, o + c);
  }
  if (factor != nullptr) multiply_row(d, s, factor, n, s);
  return true;
}

// out row = o / l and lse = m + log l, or 0 and -inf for a query that saw no key.
inline void finish_row(const AttentionProblem& p, const float* o, float row_max, float row_sum, float* out_row,
                       float* lse) {
  const bool seen = row_sum > 0.0f;
  for (std::int64_t c = 0; c < p.dv; ++c) out_row[c] = seen ? o[c] / row_sum : 0.0f;
  *lse = seen ? row_max + std::log(row_sum) : kMinusInf;
}

std::size_t forward_scratch_floats(const AttentionProblem& p, std::size_t lanes) {
  const std::size_t dv_pad = round_up(static_cast<std::size_t>(p.dv), lanes);
  const std::size_t tiles = static_cast<std::size_t>(p.dk) * kKeyTile + kKeyTile * dv_pad + kQueryTile * kKeyTile +
                            kQueryTile * dv_pad + 2 * kQueryTile + 2 * kKeyTile;
  const std::size_t single_query = static_cast<std::size_t>(p.heads) * (dv_pad + kKeyTile + 2) + 2 * kKeyTile;
  return std::max(tiles, single_query);
}

// Queries [i0, i0 + rows) of head h of batch row b.
void forward_query_tile(FloatTag d, const AttentionProblem& p, std::int64_t b, std::int64_t h, std::int64_t i0,
                        std::size_t rows, float* scratch, float* out, float* lse) {
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t dk = static_cast<std::size_t>(p.dk), dv = static_cast<std::size_t>(p.dv);
  const std::size_t dv_pad = round_up(dv, lanes);
  float* kt = scratch;                      // [dk, nk_pad]   K^T of the key tile
  float* vp = kt + dk * kKeyTile;           // [nk, dv_pad]   V of the key tile
  float* s = vp + kKeyTile * dv_pad;        // [rows, nk_pad] scores, then weights
  float* o = s + kQueryTile * kKeyTile;     // [rows, dv_pad] unnormalized output
  float* row_max = o + kQueryTile * dv_pad;
  float* row_sum = row_max + kQueryTile;
  float* bias = row_sum + kQueryTile;       // [nk_pad]
  float* factor = bias + kKeyTile;          // [nk_pad] dropout factors of one row
  for (std::size_t n = 0; n < rows * dv_pad; ++n) o[n] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r) row_max[r] = kMinusInf, row_sum[r] = 0.0f;

  const Strided q_rows{p.q + p.qk_offset(b, i0, p.tq, h), p.heads * p.dk, 1};
  const std::int32_t* padding = p.key_padding != nullptr ? p.key_padding + b * p.tk : nullptr;
  const std::int64_t key_limit = p.key_end(i0 + static_cast<std::int64_t>(rows) - 1);
  for (std::int64_t j0 = 0; j0 < key_limit; j0 += kKeyTile) {
    const std::size_t nk = static_cast<std::size_t>(std::min<std::int64_t>(kKeyTile, key_limit - j0));
    const std::size_t nk_pad = round_up(nk, lanes);
    pack_transposed(p.k + p.qk_offset(b, j0, p.tk, h), p.heads * p.dk, nk, nk_pad, dk, kt);
    pack_rows(p.v + p.v_offset(b, j0, p.tk, h), p.heads * p.dv, nk, dv, dv_pad, vp);
    key_bias(padding != nullptr ? padding + j0 : nullptr, nk, nk_pad, bias);
    multiply_tile(d, rows, nk_pad, dk, q_rows, kt, nk_pad, s, nk_pad, false);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::int64_t i = i0 + static_cast<std::int64_t>(r);
      float* sr = s + r * nk_pad;
      const float tile_max = mask_row(d, sr, bias, nk_pad, p.scale, p.key_end(i) - 1 - j0);
      if (p.dropout.active()) dropout_factors(p.dropout, p.dropout_element(b, h, i, j0), nk, nk_pad, factor);
      online_softmax_row(d, sr, nk_pad, tile_max, row_max[r], row_sum[r], o + r * dv_pad, dv_pad,
                         p.dropout.active() ? factor : nullptr);
    }
    multiply_tile(d, rows, dv_pad, nk, Strided{s, static_cast<std::ptrdiff_t>(nk_pad), 1}, vp, dv_pad, o, dv_pad, true);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t i = i0 + static_cast<std::int64_t>(r);
    finish_row(p, o + r * dv_pad, row_max[r], row_sum[r], out + p.v_offset(b, i, p.tq, h),
               lse + (b * p.heads + h) * p.tq + i);
  }
}

// The incremental-decoding step (Tq = 1): the one query of each head in [h0, h1) of batch row b
// against the cached keys. Nothing is packed (a transposed copy of K would cost as much as the
// product): s_j = <q, k_j> as row dot products, then o += p_j v_j row by row. The heads go
// together, key by key, so that K and V are read as they lie: key j of every head is one
// contiguous row of the cache, where one head alone reads a slice of each row, a row apart (perf,
// beam-4 decoding at batch 32: 40% of this kernel's time waited on those loads). Each head does
// what it would do alone, in the same order, so the bits are those of one head at a time.
void forward_single_query(FloatTag d, const AttentionProblem& p, std::int64_t b, std::int64_t h0, std::int64_t h1,
                          float* scratch, float* out, float* lse) {
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t dk = static_cast<std::size_t>(p.dk), dv = static_cast<std::size_t>(p.dv);
  const std::size_t dv_pad = round_up(dv, lanes);
  const auto heads = static_cast<std::size_t>(h1 - h0);
  float* o = scratch;                     // [heads, dv_pad]
  float* s = o + heads * dv_pad;          // [heads, kKeyTile]
  float* row_max = s + heads * kKeyTile;  // [heads]
  float* row_sum = row_max + heads;       // [heads]
  float* bias = row_sum + heads;          // [kKeyTile]
  float* factor = bias + kKeyTile;        // [kKeyTile]
  std::fill(o, o + heads * dv_pad, 0.0f);
  std::fill(row_max, row_max + heads, kMinusInf);
  std::fill(row_sum, row_sum + heads, 0.0f);
  const float* q_row = p.q + p.qk_offset(b, 0, 1, h0);
  const std::int32_t* padding = p.key_padding != nullptr ? p.key_padding + b * p.tk : nullptr;
  const std::int64_t key_limit = p.key_end(0);
  for (std::int64_t j0 = 0; j0 < key_limit; j0 += kKeyTile) {
    const std::size_t nk = static_cast<std::size_t>(std::min<std::int64_t>(kKeyTile, key_limit - j0));
    const std::size_t nk_pad = round_up(nk, lanes);
    for (std::size_t j = 0; j < nk_pad; ++j) {
      const float* k_row = j < nk ? p.k + p.qk_offset(b, j0 + static_cast<std::int64_t>(j), p.tk, h0) : nullptr;
      for (std::size_t h = 0; h < heads; ++h) s[h * kKeyTile + j] = j < nk ? dot(d, q_row + h * dk, k_row + h * dk, dk) : 0.0f;
    }
    key_bias(padding != nullptr ? padding + j0 : nullptr, nk, nk_pad, bias);
    for (std::size_t h = 0; h < heads; ++h) {
      float* sh = s + h * kKeyTile;
      const float tile_max = mask_row(d, sh, bias, nk_pad, p.scale, key_limit - 1 - j0);
      const std::int64_t head = h0 + static_cast<std::int64_t>(h);
      if (p.dropout.active()) dropout_factors(p.dropout, p.dropout_element(b, head, 0, j0), nk, nk_pad, factor);
      // A head that has seen no key yet gets its weights zeroed, which the sum below skips.
      online_softmax_row(d, sh, nk_pad, tile_max, row_max[h], row_sum[h], o + h * dv_pad, dv_pad,
                         p.dropout.active() ? factor : nullptr);
    }
    for (std::size_t j = 0; j < nk; ++j) {
      const float* v_row = p.v + p.v_offset(b, j0 + static_cast<std::int64_t>(j), p.tk, h0);
      for (std::size_t h = 0; h < heads; ++h) {
        const float w = s[h * kKeyTile + j];
        if (w == 0.0f) continue;  // a masked or dropped key
        const float* v = v_row + h * dv;
        float* oh = o + h * dv_pad;
        const auto weight = hn::Set(d, w);
        std::size_t c = 0;
        for (; c + lanes <= dv; c += lanes) hn::StoreU(hn::MulAdd(weight, hn::LoadU(d, v + c), hn::LoadU(d, oh + c)), d, oh + c);
        for (; c < dv; ++c) oh[c] += w * v[c];
      }
    }
  }
  for (std::size_t h = 0; h < heads; ++h) {
    const std::int64_t head = h0 + static_cast<std::int64_t>(h);
    finish_row(p, o + h * dv_pad, row_max[h], row_sum[h], out + p.v_offset(b, 0, 1, head), lse + b * p.heads + head);
  }
}

void attention_forward_kernel(const AttentionProblem& p, float* out, float* lse, ThreadPool& pool,
                              Workspace& workspace) {
  const FloatTag d;
  const std::size_t floats = forward_scratch_floats(p, hn::Lanes(d));
  if (p.tq == 1) {
    // One task per batch row, its heads split into groups only when the rows are fewer than
    // the threads.
    const std::int64_t groups = std::clamp<std::int64_t>(pool.threads() / std::max<std::int64_t>(p.batch, 1), 1, p.heads);
    pool.run(static_cast<int>(p.batch * groups), [&](int task) {
      float* scratch = workspace.floats(task % pool.threads(), Slot::op_scratch, floats);
      const std::int64_t b = task / groups, group = task % groups;
      forward_single_query(d, p, b, p.heads * group / groups, p.heads * (group + 1) / groups, scratch, out, lse);
    });
    return;
  }
  const std::int64_t query_tiles = (p.tq + static_cast<std::int64_t>(kQueryTile) - 1) / static_cast<std::int64_t>(kQueryTile);
  const std::int64_t heads_total = p.batch * p.heads;
  // Consecutive tasks are consecutive query tiles of one head and run on alternating workers,
  // which balances the causal mask's growing tiles.
  pool.run(static_cast<int>(heads_total * query_tiles), [&](int task) {
    float* scratch = workspace.floats(task % pool.threads(), Slot::op_scratch, floats);
    const std::int64_t bh = task / query_tiles, tile = task % query_tiles;
    const std::int64_t b = bh / p.heads, h = bh % p.heads;
    const std::int64_t i0 = tile * static_cast<std::int64_t>(kQueryTile);
    const auto rows = static_cast<std::size_t>(std::min<std::int64_t>(kQueryTile, p.tq - i0));
    forward_query_tile(d, p, b, h, i0, rows, scratch, out, lse);
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(attention_forward_kernel);
HWY_EXPORT(attention_backward_kernel);

void CpuBackend::attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                   const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                                   Tensor& out, Tensor& lse) {
  const AttentionProblem p = attention_problem(
      checks::attention_forward_dims(DType::f32, Device::cpu, q, k, v, heads, key_padding, dropout, out, lse), q, k, v,
      key_padding, causal, scale, dropout);
  for_target(HWY_DISPATCH_TABLE(attention_forward_kernel), context_.target)(p, out.data<float>(), lse.data<float>(),
                                                                            context_.pool, context_.workspace);
}

void CpuBackend::attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                    const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                                    const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                                    Tensor& dv) {
  const checks::AttentionDims dims = checks::attention_backward_dims(DType::f32, Device::cpu, q, k, v, heads,
                                                                     key_padding, dropout, out, lse, dout, dq, dk, dv);
  const AttentionProblem p = attention_problem(dims, q, k, v, key_padding, causal, scale, dropout);
  const AttentionGradients g{out.data<float>(), lse.data<float>(), dout.data<float>(),
                             dq.data<float>(), dk.data<float>(), dv.data<float>()};
  for_target(HWY_DISPATCH_TABLE(attention_backward_kernel), context_.target)(p, g, context_.pool, context_.workspace);
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
