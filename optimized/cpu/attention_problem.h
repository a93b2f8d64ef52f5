// One attention call as raw pointers and dims: what the per-target kernels of attention.cc
// receive (the tensors are checked before, in attention.cc, as the reference checks them).
//
// Layouts (core/backend.h): q [B, Tq, H*Dk], k [B, Tk, H*Dk], v [B, Tk, H*Dv], out and dout
// [B, Tq, H*Dv], lse [B, H, Tq], key_padding [B, Tk] (nonzero = masked) or null. Head h of a
// row is the column slice [h*D, (h+1)*D).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/backend.h"

namespace trepro::cpu {

struct AttentionProblem {
  const float* q;
  const float* k;
  const float* v;
  const std::int32_t* key_padding;  // null when no key is padded
  std::int64_t batch, tq, tk, heads, dk, dv;
  bool causal;
  float scale;
  DropoutSpec dropout;

  // Start of head h of time step t of batch row b in q or k, and in v, out or dout.
  std::int64_t qk_offset(std::int64_t b, std::int64_t t, std::int64_t t_len, std::int64_t h) const {
    return (b * t_len + t) * heads * dk + h * dk;
  }
  std::int64_t v_offset(std::int64_t b, std::int64_t t, std::int64_t t_len, std::int64_t h) const {
    return (b * t_len + t) * heads * dv + h * dv;
  }
  // One past the last key query i may see: queries are aligned to the end of the keys, so under
  // the causal mask query i sees keys j <= i + (Tk - Tq). In [0, Tk].
  std::int64_t key_end(std::int64_t i) const {
    return causal ? std::clamp<std::int64_t>(i + 1 + tk - tq, 0, tk) : tk;
  }
  // The first query that sees key j (causal), in [0, Tq].
  std::int64_t first_query(std::int64_t j) const {
    return causal ? std::clamp<std::int64_t>(j - (tk - tq), 0, tq) : 0;
  }
  // Dropout element index of weight (b, h, i, j): ((b*H + h)*Tq + i)*Tk + j.
  std::uint64_t dropout_element(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    return static_cast<std::uint64_t>(((b * heads + h) * tq + i) * tk + j);
  }
};

// What backward reads besides the problem, and writes.
struct AttentionGradients {
  const float* out;
  const float* lse;
  const float* dout;
  float* dq;
  float* dk;
  float* dv;
};

}  // namespace trepro::cpu
