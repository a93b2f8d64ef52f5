// One attention call as raw pointers and its checked dims: what every backend's kernels receive
// (optimized/cpu/attention.cc, optimized/cuda/attention.cu), built once from the tensors after
// core/backend_checks.h has checked them.
//
// Layouts (core/backend.h): q [B, Tq, H*Dk], k [B, Tk, H*Dk], v [B, Tk, H*Dv], out and dout
// [B, Tq, H*Dv], lse [B, H, Tq], key_padding [B, Tk] (nonzero = masked) or null. Head h of a
// row is the column slice [h*D, (h+1)*D).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/backend.h"
#include "core/backend_checks.h"

namespace trepro {

struct AttentionProblem {
  const float* q;
  const float* k;
  const float* v;
  const std::int32_t* key_padding;  // null when no key is padded
  std::int64_t batch, tq, tk, heads, dk, dv;
  bool causal;
  float scale;
  DropoutSpec dropout;
  float kept_scale;  // 1 / (1 - dropout.p): a kept weight's factor, computed once rather than per element

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

// The problem that checked dims describe; the tensors are float32.
inline AttentionProblem attention_problem(const checks::AttentionDims& d, const Tensor& q, const Tensor& k,
                                          const Tensor& v, const Tensor* key_padding, bool causal, double scale,
                                          const DropoutSpec& dropout) {
  return {q.data<float>(),
          k.data<float>(),
          v.data<float>(),
          key_padding != nullptr ? key_padding->data<std::int32_t>() : nullptr,
          d.batch, d.tq, d.tk, d.heads, d.dk, d.dv,
          causal,
          static_cast<float>(scale),
          dropout,
          static_cast<float>(1.0 / (1.0 - dropout.p))};
}

}  // namespace trepro
