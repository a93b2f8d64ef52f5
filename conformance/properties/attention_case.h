// A random attention problem for the properties: shapes, masks and input values, drawn inside
// a RapidCheck property so that failures shrink to small shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/backend.h"

namespace trepro::testing {

struct AttentionCase {
  std::int64_t batch = 1, tq = 1, tk = 1, heads = 1, dk = 1, dv = 1;
  bool causal = false;
  std::vector<std::int32_t> padding;  // [batch * tk], 1 = padded key; empty = no mask passed
  std::uint64_t seed = 0;             // of the input values
  double magnitude = 1.0;             // q and k uniform in [-magnitude, magnitude], v in [-1, 1]

  double scale() const;
  // Whether query i of batch row b may see key j (the contract in core/backend.h).
  bool visible(std::int64_t b, std::int64_t i, std::int64_t j) const;
};

struct AttentionDraw {
  bool self_attention = false;  // tq == tk
  bool causal = true;           // draw the causal flag (else it is off)
  bool padding = true;          // draw a key-padding mask (else none is passed)
};
// Draws B in [1, 3], Tq and Tk in [1, 8], 1-3 heads, head dims in [1, 8], masks as asked.
AttentionCase draw_attention_case(const AttentionDraw& draw);

struct AttentionInputs {
  Tensor q, k, v;
  Tensor padding;  // undefined when the case has no mask
  const Tensor* padding_or_null() const { return padding.defined() ? &padding : nullptr; }
};
AttentionInputs attention_inputs(Backend& backend, const AttentionCase& c);
// The same values on another backend.
AttentionInputs copy_inputs(Backend& to, Backend& from, const AttentionInputs& inputs);

struct AttentionOutputs {
  Tensor out, lse;
};
// Forward without dropout.
AttentionOutputs run_attention(Backend& backend, const AttentionCase& c, const AttentionInputs& inputs);

// x [B, T, W] with every row (b, t) where replace(b, t) holds set to new values in [-1, 1].
Tensor with_rows_replaced(Backend& backend, const Tensor& x,
                          const std::function<bool(std::int64_t, std::int64_t)>& replace, std::uint64_t seed);

}  // namespace trepro::testing
