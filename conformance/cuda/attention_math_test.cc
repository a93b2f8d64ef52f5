// The fused attention kernels' arithmetic, run on the host: attention_math.h (masks, the
// causal bounds of the tile loops, p and ds) and softmax_math.h (the running softmax), driven in
// the kernels' order -- tiles of kAttentionKeyTile keys, decode's warps merged at the end --
// against the reference's attention_forward / attention_backward. What this cannot check (the
// shared-memory loads, the shuffles) is the GPU run's job (scripts/gpu-check).
#include <algorithm>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/attention_math.h"
#include "optimized/cuda/dropout_math.h"
#include "optimized/cuda/launch_shapes.h"
#include "optimized/cuda/softmax_math.h"

namespace trepro::testing {
namespace {

using cuda::SoftmaxState;

struct Case {
  std::int64_t batch, heads, tq, tk, dk, dv;
  bool causal, padded;
  double dropout;
  std::string describe() const {
    return "B=" + std::to_string(batch) + " H=" + std::to_string(heads) + " Tq=" + std::to_string(tq) +
           " Tk=" + std::to_string(tk) + " dk=" + std::to_string(dk) + " dv=" + std::to_string(dv) +
           (causal ? " causal" : "") + (padded ? " padded" : "") + " p=" + std::to_string(dropout);
  }
};

// Odd sizes, partial last tiles, Tq < Tk (a cache), Tq == 1 (the decode kernel), and batch row 1
// fully padded in the padded cases (queries with no visible key).
const Case kCases[] = {
    {2, 2, 5, 37, 8, 6, false, true, 0.0},  {1, 2, 33, 33, 16, 16, true, false, 0.0},
    {2, 1, 7, 70, 4, 12, true, true, 0.25}, {2, 3, 1, 70, 8, 8, true, true, 0.0},
    {1, 1, 1, 150, 6, 5, false, false, 0.3}, {2, 2, 40, 9, 3, 7, true, false, 0.1},
};

// The inputs of one case, float-exact, on the float64 reference.
struct Inputs {
  Tensor q, k, v, padding;
  std::vector<float> qs, ks, vs;
  std::vector<std::int32_t> pads;
};

Inputs make_inputs(HostMath& h, const Case& c) {
  Inputs in;
  in.q = h.random({c.batch, c.tq, c.heads * c.dk}, 1, -2.0, 2.0);
  in.k = h.random({c.batch, c.tk, c.heads * c.dk}, 2, -2.0, 2.0);
  in.v = h.random({c.batch, c.tk, c.heads * c.dv}, 3);
  in.qs = floats(in.q);
  in.ks = floats(in.k);
  in.vs = floats(in.v);
  in.pads.assign(static_cast<std::size_t>(c.batch * c.tk), 0);
  if (c.padded) {
    for (std::int64_t j = 0; j < c.tk; ++j) {
      in.pads[j] = j % 5 == 3 ? 1 : 0;      // row 0: scattered padding
      if (c.batch > 1) in.pads[c.tk + j] = 1;  // row 1: nothing visible
    }
    in.padding = int_tensor(*h.reference, {c.batch, c.tk}, std::vector<double>(in.pads.begin(), in.pads.end()));
  }
  return in;
}

// The per-(b, h) index arithmetic of the kernels.
struct Head {
  const Case& c;
  const Inputs& in;
  PhiloxKey key;
  std::int64_t b, h;
  float q(std::int64_t i, std::int64_t col) const { return in.qs[((b * c.tq + i) * c.heads + h) * c.dk + col]; }
  float k(std::int64_t j, std::int64_t col) const { return in.ks[((b * c.tk + j) * c.heads + h) * c.dk + col]; }
  float v(std::int64_t j, std::int64_t col) const { return in.vs[((b * c.tk + j) * c.heads + h) * c.dv + col]; }
  float score(std::int64_t i, std::int64_t j, float scale) const {
    float dot = 0;
    for (std::int64_t col = 0; col < c.dk; ++col) dot += q(i, col) * k(j, col);
    const bool padded = c.padded && in.pads[b * c.tk + j] != 0;
    return cuda::attention_score(dot, scale, cuda::attention_key_visible(i, j, c.tq, c.tk, c.causal, padded));
  }
  float factor(std::int64_t i, std::int64_t j) const {
    if (c.dropout == 0) return 1.0f;
    return cuda::dropout_factor(key, c.dropout, static_cast<float>(1 / (1 - c.dropout)),
                                cuda::attention_dropout_element(b, h, c.heads, c.tq, i, c.tk, j));
  }
};

// One query's running state over the key tiles [first_tile, ...) with stride `tile_step`, as one
// warp of attention_forward_tiles (step 1) or attention_decode (step kDecodeWarps) keeps it.
struct Partial {
  SoftmaxState<float> state;
  std::vector<float> acc;
};
Partial run_tiles(const Head& hd, std::int64_t i, std::int64_t key_end, std::int64_t first_tile,
                  std::int64_t tile_step, float scale) {
  Partial part{{}, std::vector<float>(static_cast<std::size_t>(hd.c.dv), 0.0f)};
  const std::int64_t tiles = cuda::tile_count(key_end, cuda::kAttentionKeyTile);
  for (std::int64_t t = first_tile; t < tiles; t += tile_step) {
    const std::int64_t first = t * cuda::kAttentionKeyTile, here = cuda::tile_length(key_end, cuda::kAttentionKeyTile, t);
    std::vector<float> s(static_cast<std::size_t>(here));
    float tile_max = -std::numeric_limits<float>::infinity();
    for (std::int64_t l = 0; l < here; ++l) tile_max = std::max(tile_max, s[l] = hd.score(i, first + l, scale));
    const float factor = cuda::softmax_rescale(part.state, tile_max);
    for (float& a : part.acc) a *= factor;
    for (std::int64_t l = 0; l < here; ++l) {
      const float p = cuda::softmax_weight(s[l], part.state.max);
      part.state.sum += p;
      const float dropped = p != 0 ? p * hd.factor(i, first + l) : 0.0f;
      for (std::int64_t col = 0; col < hd.c.dv; ++col) part.acc[col] += dropped * hd.v(first + l, col);
    }
  }
  return part;
}

struct Forward {
  std::vector<float> out, lse;
};
Forward emulate_forward(const Case& c, const Inputs& in, const PhiloxKey& key, float scale) {
  Forward f{std::vector<float>(static_cast<std::size_t>(c.batch * c.tq * c.heads * c.dv)),
            std::vector<float>(static_cast<std::size_t>(c.batch * c.heads * c.tq))};
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t h = 0; h < c.heads; ++h) {
      const Head hd{c, in, key, b, h};
      for (std::int64_t i = 0; i < c.tq; ++i) {
        Partial total;
        if (c.tq == 1) {  // attention_decode: each warp its own tiles, then the merge
          std::vector<Partial> warps;
          for (int w = 0; w < cuda::kDecodeWarps; ++w) warps.push_back(run_tiles(hd, 0, c.tk, w, cuda::kDecodeWarps, scale));
          total = {{}, std::vector<float>(static_cast<std::size_t>(c.dv), 0.0f)};
          for (const Partial& w : warps) total.state = cuda::softmax_merge(total.state, w.state);
          for (const Partial& w : warps) {
            for (std::int64_t col = 0; col < c.dv; ++col) total.acc[col] += w.acc[col] * cuda::softmax_weight(w.state.max, total.state.max);
          }
        } else {  // attention_forward_tiles: keys up to the block's causal bound
          const std::int64_t block_last = std::min(c.tq, (i / cuda::kAttentionQueriesPerBlock + 1) * cuda::kAttentionQueriesPerBlock) - 1;
          total = run_tiles(hd, i, cuda::attention_key_end(block_last, c.tq, c.tk, c.causal), 0, 1, scale);
        }
        const float inverse = total.state.sum > 0 ? 1.0f / total.state.sum : 0.0f;
        for (std::int64_t col = 0; col < c.dv; ++col) f.out[((b * c.tq + i) * c.heads + h) * c.dv + col] = total.acc[col] * inverse;
        f.lse[(b * c.heads + h) * c.tq + i] = cuda::softmax_lse(total.state);
      }
    }
  }
  return f;
}

TEST(AttentionMath, TiledForwardMatchesReference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.describe());
    HostMath h;
    Backend& ref = *h.reference;
    const Inputs in = make_inputs(h, c);
    const DropoutSpec dropout{c.dropout, PhiloxKey{7, 3, 11}};
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.dk));
    Tensor out = ref.empty({c.batch, c.tq, c.heads * c.dv}, DType::f64), lse = ref.empty({c.batch, c.heads, c.tq}, DType::f64);
    ref.attention_forward(in.q, in.k, in.v, static_cast<int>(c.heads), c.padded ? &in.padding : nullptr, c.causal,
                          scale, dropout, out, lse);
    const Forward f = emulate_forward(c, in, dropout.key, static_cast<float>(scale));
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, c.dk + c.tk);
    EXPECT_TRUE(all_close("out", *h.holder, h.result(out.shape(), f.out), ref, out, tol));
    EXPECT_TRUE(all_close("lse", *h.holder, h.result(lse.shape(), f.lse), ref, lse, tol));
  }
}

TEST(AttentionMath, TiledBackwardMatchesReference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.describe());
    HostMath h;
    Backend& ref = *h.reference;
    const Inputs in = make_inputs(h, c);
    const DropoutSpec dropout{c.dropout, PhiloxKey{7, 3, 11}};
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.dk));
    const float fscale = static_cast<float>(scale);
    const Tensor* padding = c.padded ? &in.padding : nullptr;
    Tensor out = ref.empty({c.batch, c.tq, c.heads * c.dv}, DType::f64), lse = ref.empty({c.batch, c.heads, c.tq}, DType::f64);
    ref.attention_forward(in.q, in.k, in.v, static_cast<int>(c.heads), padding, c.causal, scale, dropout, out, lse);
    Tensor dout = h.random(out.shape(), 4);
    Tensor dq = ref.empty(in.q.shape(), DType::f64), dk = ref.empty(in.k.shape(), DType::f64), dv = ref.empty(in.v.shape(), DType::f64);
    ref.attention_backward(in.q, in.k, in.v, static_cast<int>(c.heads), padding, c.causal, scale, dropout, out, lse, dout,
                           dq, dk, dv);

    // The kernels get the float forward's out and lse.
    const Forward f = emulate_forward(c, in, dropout.key, fscale);
    const std::vector<float> douts = floats(dout);
    std::vector<float> dqs(in.qs.size(), 0.0f), dks(in.ks.size(), 0.0f), dvs(in.vs.size(), 0.0f);
    for (std::int64_t b = 0; b < c.batch; ++b) {
      for (std::int64_t hh = 0; hh < c.heads; ++hh) {
        const Head hd{c, in, dropout.key, b, hh};
        auto dout_at = [&](std::int64_t i, std::int64_t col) { return douts[((b * c.tq + i) * c.heads + hh) * c.dv + col]; };
        for (std::int64_t i = 0; i < c.tq; ++i) {
          float delta = 0;  // attention_delta
          for (std::int64_t col = 0; col < c.dv; ++col) delta += dout_at(i, col) * f.out[((b * c.tq + i) * c.heads + hh) * c.dv + col];
          const float row_lse = f.lse[(b * c.heads + hh) * c.tq + i];
          for (std::int64_t j = 0; j < c.tk; ++j) {
            const float p = cuda::attention_probability(hd.score(i, j, fscale), row_lse);
            if (p == 0) continue;
            float dp = 0;
            for (std::int64_t col = 0; col < c.dv; ++col) dp += dout_at(i, col) * hd.v(j, col);
            const float factor = hd.factor(i, j);
            const float ds = cuda::attention_score_gradient(p, dp, factor, delta);
            for (std::int64_t col = 0; col < c.dk; ++col) {
              dqs[((b * c.tq + i) * c.heads + hh) * c.dk + col] += fscale * ds * hd.k(j, col);
              dks[((b * c.tk + j) * c.heads + hh) * c.dk + col] += fscale * ds * hd.q(i, col);
            }
            for (std::int64_t col = 0; col < c.dv; ++col) dvs[((b * c.tk + j) * c.heads + hh) * c.dv + col] += p * factor * dout_at(i, col);
          }
        }
      }
    }
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, c.dk + c.dv + c.tq + c.tk);
    EXPECT_TRUE(all_close("dq", *h.holder, h.result(dq.shape(), dqs), ref, dq, tol));
    EXPECT_TRUE(all_close("dk", *h.holder, h.result(dk.shape(), dks), ref, dk, tol));
    EXPECT_TRUE(all_close("dv", *h.holder, h.result(dv.shape(), dvs), ref, dv, tol));
  }
}

// The loop bounds the kernels use to skip tiles under the causal mask never skip a visible pair.
TEST(AttentionMath, CausalLoopBoundsKeepEveryVisiblePair) {
  for (std::int64_t tq = 1; tq <= 9; ++tq) {
    for (std::int64_t tk = 1; tk <= tq + 6; ++tk) {  // Tk < Tq too: early queries see nothing
      for (bool causal : {false, true}) {
        for (std::int64_t i = 0; i < tq; ++i) {
          for (std::int64_t j = 0; j < tk; ++j) {
            const bool visible = cuda::attention_key_visible(i, j, tq, tk, causal, false);
            const std::int64_t end = cuda::attention_key_end(i, tq, tk, causal);
            const std::int64_t begin = cuda::attention_query_begin(j, tq, tk, causal);
            EXPECT_EQ(visible, j < end) << "tq=" << tq << " tk=" << tk << " i=" << i << " j=" << j;
            EXPECT_EQ(visible, i >= begin) << "tq=" << tq << " tk=" << tk << " i=" << i << " j=" << j;
          }
        }
      }
    }
  }
  EXPECT_FALSE(cuda::attention_key_visible(0, 0, 1, 1, false, true));  // padding hides
}

TEST(AttentionMath, HiddenKeysAndEmptyRowsGiveZeroNotNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(cuda::attention_score(3.0f, 0.5f, false), -inf);
  EXPECT_EQ(cuda::attention_score(3.0f, 0.5f, true), 1.5f);
  EXPECT_EQ(cuda::attention_probability(-inf, 0.0f), 0.0f);
  EXPECT_EQ(cuda::attention_probability(1.0f, -inf), 0.0f);
  EXPECT_EQ(cuda::attention_probability(-inf, -inf), 0.0f);
  EXPECT_EQ(cuda::attention_score_gradient(0.0f, 5.0f, 2.0f, 1.0f), 0.0f);
}

}  // namespace
}  // namespace trepro::testing
