// Per-element attention arithmetic of the fused kernels (attention.cu, attention_backward.cu):
// which key a query may see, and the backward's softmax derivative. The running softmax itself
// is softmax_math.h. Conventions of core/backend.h:
//   key j is hidden from query i when key_padding[b, j] != 0 or, causal, when j > i + (Tk - Tq)
//   (queries aligned to the end of the keys, so a decode step with a cache is the same maths).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/host_device.h"

namespace trepro::cuda {

TR_HOST_DEVICE inline bool attention_key_visible(std::int64_t i, std::int64_t j, std::int64_t tq, std::int64_t tk,
                                                 bool causal, bool padded) {
  return !padded && !(causal && j > i + (tk - tq));
}

// The keys [0, end) that queries 0..last_query may see at all: under the causal mask nothing
// past last_query + (Tk - Tq), so the kernels stop loading key tiles there.
TR_HOST_DEVICE inline std::int64_t attention_key_end(std::int64_t last_query, std::int64_t tq, std::int64_t tk,
                                                     bool causal) {
  if (!causal) return tk;
  const std::int64_t end = last_query + (tk - tq) + 1;
  return end < 0 ? 0 : end > tk ? tk : end;
}

// The first query that may see key first_key (or any later key): under the causal mask
// first_key - (Tk - Tq), so the key pass of backward skips the query tiles before it.
TR_HOST_DEVICE inline std::int64_t attention_query_begin(std::int64_t first_key, std::int64_t tq, std::int64_t tk,
                                                         bool causal) {
  if (!causal) return 0;
  const std::int64_t begin = first_key - (tk - tq);
  return begin < 0 ? 0 : begin > tq ? tq : begin;
}

// The masked, scaled score: scale <q_i, k_j>, or -inf for a hidden key.
template <class T> TR_HOST_DEVICE T attention_score(T dot, T scale, bool visible) {
  return visible ? scale * dot : -std::numeric_limits<T>::infinity();
}

// p_ij = exp(s_ij - lse_i) recomputed in backward; 0 for a hidden key or a query with no key.
template <class T> TR_HOST_DEVICE T attention_probability(T s, T lse) {
  const T minus_inf = -std::numeric_limits<T>::infinity();
  return (s == minus_inf || lse == minus_inf) ? T(0) : std::exp(s - lse);
}

// ds_ij = p_ij (factor_ij dp_ij - D_i), dp_ij = <dout_i, v_j>, D_i = <dout_i, out_i>, factor the
// dropout factor of the forward (1 without dropout).
template <class T> TR_HOST_DEVICE T attention_score_gradient(T p, T dp, T factor, T delta) {
  return p * (factor * dp - delta);
}

}  // namespace trepro::cuda
