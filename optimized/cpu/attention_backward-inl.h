// The fused attention backward of attention.cc, once per Highway target (the loop order and the
// maths are described at the top of attention.cc).

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_ATTENTION_BACKWARD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_ATTENTION_BACKWARD_INL_H_
#undef TREPRO_ATTENTION_BACKWARD_INL_H_
#else
#define TREPRO_ATTENTION_BACKWARD_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

#include "optimized/cpu/attention_problem.h"
#include "optimized/cpu/attention_tiles-inl.h"
#include "optimized/cpu/thread_pool.h"
#include "optimized/cpu/workspace.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// The per-worker tiles of backward, carved from one workspace buffer.
struct BackwardTiles {
  float* kt;            // [dk, nk_pad]      K^T of the key tile (for S = Q K^T)
  float* ks;            // [nk, dk_pad]      K of the key tile (for dQ = dS K)
  float* vt;            // [dv, nk_pad]      V^T of the key tile (for dP = dO V^T)
  float* dk_acc;        // [nk, dk_pad]      dK of the key tile, unscaled
  float* dv_acc;        // [nk, dv_pad]
  float* qp;            // [rows, dk_pad]    Q of the query tile
  float* dop;           // [rows, dv_pad]    dO of the query tile
  float* prob;          // [rows, nk_pad]    P
  float* prob_dropped;  // [rows, nk_pad]    P~ = F P (aliases prob without dropout)
  float* factors;       // [rows, nk_pad]    F
  float* ds;            // [rows, nk_pad]    dP, then dS
  float* dq_tile;       // [rows, dk_pad]
  float* bias;          // [nk_pad]
  float* delta;         // [Tq]              D_i = <dout_i, out_i>

  static std::size_t floats(const AttentionProblem& p, std::size_t lanes) {
    const std::size_t dk_pad = round_up(static_cast<std::size_t>(p.dk), lanes);
    const std::size_t dv_pad = round_up(static_cast<std::size_t>(p.dv), lanes);
    return static_cast<std::size_t>(p.dk + p.dv) * kKeyTile + 2 * kKeyTile * dk_pad +
           kKeyTile * dv_pad + kQueryTile * (2 * dk_pad + dv_pad) + 4 * kQueryTile * kKeyTile + kKeyTile +
           static_cast<std::size_t>(p.tq);
  }
  BackwardTiles(const AttentionProblem& p, std::size_t lanes, float* scratch) {
    const std::size_t dk_pad = round_up(static_cast<std::size_t>(p.dk), lanes);
    const std::size_t dv_pad = round_up(static_cast<std::size_t>(p.dv), lanes);
    float* next = scratch;
    const auto take = [&](std::size_t n) { float* t = next; next += n; return t; };
    kt = take(static_cast<std::size_t>(p.dk) * kKeyTile);
    ks = take(kKeyTile * dk_pad);
    vt = take(static_cast<std::size_t>(p.dv) * kKeyTile);
    dk_acc = take(kKeyTile * dk_pad);
    dv_acc = take(kKeyTile * dv_pad);
    qp = take(kQueryTile * dk_pad);
    dop = take(kQueryTile * dv_pad);
    prob = take(kQueryTile * kKeyTile);
    prob_dropped = take(kQueryTile * kKeyTile);
    factors = take(kQueryTile * kKeyTile);
    ds = take(kQueryTile * kKeyTile);
    dq_tile = take(kQueryTile * dk_pad);
    bias = take(kKeyTile);
    delta = take(static_cast<std::size_t>(p.tq));
  }
};

// Head h of batch row b: every dq row of the head, every dk and dv row.
void backward_head(FloatTag d, const AttentionProblem& p, const AttentionGradients& g, std::int64_t b,
                   std::int64_t h, BackwardTiles& t) {
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t dk = static_cast<std::size_t>(p.dk), dv = static_cast<std::size_t>(p.dv);
  const std::size_t dk_pad = round_up(dk, lanes), dv_pad = round_up(dv, lanes);
  const std::int64_t qk_stride = p.heads * p.dk, v_stride = p.heads * p.dv;
  const float* lse = g.lse + (b * p.heads + h) * p.tq;
  const bool dropout = p.dropout.active();
  for (std::int64_t i = 0; i < p.tq; ++i) {
    t.delta[i] = dot(d, g.dout + p.v_offset(b, i, p.tq, h), g.out + p.v_offset(b, i, p.tq, h), dv);
    float* dq_row = g.dq + p.qk_offset(b, i, p.tq, h);
    for (std::size_t c = 0; c < dk; ++c) dq_row[c] = 0.0f;
  }
  const std::int32_t* padding = p.key_padding != nullptr ? p.key_padding + b * p.tk : nullptr;

  for (std::int64_t j0 = 0; j0 < p.tk; j0 += kKeyTile) {
    const std::size_t nk = static_cast<std::size_t>(std::min<std::int64_t>(kKeyTile, p.tk - j0));
    const std::size_t nk_pad = round_up(nk, lanes);
    pack_transposed(p.k + p.qk_offset(b, j0, p.tk, h), qk_stride, nk, nk_pad, dk, t.kt);
    pack_rows(p.k + p.qk_offset(b, j0, p.tk, h), qk_stride, nk, dk, dk_pad, t.ks);
    pack_transposed(p.v + p.v_offset(b, j0, p.tk, h), v_stride, nk, nk_pad, dv, t.vt);
    key_bias(padding != nullptr ? padding + j0 : nullptr, nk, nk_pad, t.bias);
    for (std::size_t n = 0; n < nk * dk_pad; ++n) t.dk_acc[n] = 0.0f;
    for (std::size_t n = 0; n < nk * dv_pad; ++n) t.dv_acc[n] = 0.0f;
    const Strided ds_rows{t.ds, static_cast<std::ptrdiff_t>(nk_pad), 1};
    const Strided ds_columns{t.ds, 1, static_cast<std::ptrdiff_t>(nk_pad)};

    // Queries before first_query(j0) see no key of this tile under the causal mask.
    for (std::int64_t i0 = p.first_query(j0); i0 < p.tq; i0 += kQueryTile) {
      const std::size_t rows = static_cast<std::size_t>(std::min<std::int64_t>(kQueryTile, p.tq - i0));
      pack_rows(p.q + p.qk_offset(b, i0, p.tq, h), qk_stride, rows, dk, dk_pad, t.qp);
      pack_rows(g.dout + p.v_offset(b, i0, p.tq, h), v_stride, rows, dv, dv_pad, t.dop);

      // P = exp(scale Q K^T - lse), masked; a query with lse = -inf saw no key: P = 0.
      multiply_tile(d, rows, nk_pad, dk, Strided{t.qp, static_cast<std::ptrdiff_t>(dk_pad), 1}, t.kt, nk_pad,
                    t.prob, nk_pad, false);
      for (std::size_t r = 0; r < rows; ++r) {
        const std::int64_t i = i0 + static_cast<std::int64_t>(r);
        float* pr = t.prob + r * nk_pad;
        if (lse[i] == kMinusInf) {
          zero_row(d, pr, nk_pad);
        } else {
          mask_row(d, pr, t.bias, nk_pad, p.scale, p.key_end(i) - 1 - j0);
          exp_row(d, pr, nk_pad, lse[i]);
        }
        if (dropout) {
          float* fr = t.factors + r * nk_pad;
          dropout_factors(p.dropout, p.dropout_element(b, h, i, j0), nk, nk_pad, fr);
          multiply_row(d, pr, fr, nk_pad, t.prob_dropped + r * nk_pad);
        }
      }
      const float* prob_dropped = dropout ? t.prob_dropped : t.prob;

      // dV [nk, dv] += P~^T dO
      multiply_tile(d, nk, dv_pad, rows, Strided{prob_dropped, 1, static_cast<std::ptrdiff_t>(nk_pad)}, t.dop, dv_pad,
                    t.dv_acc, dv_pad, true);
      // dP = dO V^T, then dS = P (F dP - D) in place
      multiply_tile(d, rows, nk_pad, dv, Strided{t.dop, static_cast<std::ptrdiff_t>(dv_pad), 1}, t.vt, nk_pad, t.ds,
                    nk_pad, false);
      for (std::size_t r = 0; r < rows; ++r) {
        float* dsr = t.ds + r * nk_pad;
        const float* pr = t.prob + r * nk_pad;
        const float* fr = t.factors + r * nk_pad;
        const auto delta = hn::Set(d, t.delta[i0 + static_cast<std::int64_t>(r)]);
        for (std::size_t j = 0; j < nk_pad; j += lanes) {
          auto dp = hn::LoadU(d, dsr + j);
          if (dropout) dp = hn::Mul(dp, hn::LoadU(d, fr + j));
          hn::StoreU(hn::Mul(hn::LoadU(d, pr + j), hn::Sub(dp, delta)), d, dsr + j);
        }
      }
      // dK [nk, dk] += dS^T Q;  dQ [rows, dk] += scale dS K
      multiply_tile(d, nk, dk_pad, rows, ds_columns, t.qp, dk_pad, t.dk_acc, dk_pad, true);
      multiply_tile(d, rows, dk_pad, nk, ds_rows, t.ks, dk_pad, t.dq_tile, dk_pad, false);
      for (std::size_t r = 0; r < rows; ++r) {
        float* dq_row = g.dq + p.qk_offset(b, i0 + static_cast<std::int64_t>(r), p.tq, h);
        for (std::size_t c = 0; c < dk; ++c) dq_row[c] += p.scale * t.dq_tile[r * dk_pad + c];
      }
    }
    for (std::size_t j = 0; j < nk; ++j) {
      float* dk_row = g.dk + p.qk_offset(b, j0 + static_cast<std::int64_t>(j), p.tk, h);
      float* dv_row = g.dv + p.v_offset(b, j0 + static_cast<std::int64_t>(j), p.tk, h);
      for (std::size_t c = 0; c < dk; ++c) dk_row[c] = p.scale * t.dk_acc[j * dk_pad + c];
      for (std::size_t c = 0; c < dv; ++c) dv_row[c] = t.dv_acc[j * dv_pad + c];
    }
  }
}

void attention_backward_kernel(const AttentionProblem& p, const AttentionGradients& g, ThreadPool& pool,
                               Workspace& workspace) {
  const FloatTag d;
  const std::size_t floats = BackwardTiles::floats(p, hn::Lanes(d));
  pool.run(static_cast<int>(p.batch * p.heads), [&](int task) {
    BackwardTiles tiles(p, hn::Lanes(d), workspace.floats(task % pool.threads(), Slot::op_scratch, floats));
    backward_head(d, p, g, task / p.heads, task % p.heads, tiles);
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TREPRO_ATTENTION_BACKWARD_INL_H_
