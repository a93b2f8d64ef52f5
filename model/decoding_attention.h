// The attention probabilities of one forward pass, for heat maps (`trepro attention`): every
// attention of the model, per layer and head, recomputed in float64 from the queries and keys
// the forward used (projected and rotated), with the same scale and masks:
//   P[h, i, j] = softmax_j(scale * q_i,h . k_j,h)   over the keys j that query i may see.
// Inference only (no dropout): the model's weights are what a heat map should show.
#pragma once

#include <vector>

#include "model/transformer.h"

namespace trepro {

struct AttentionMaps {
  // One host float64 tensor [heads, queries, keys] per layer; empty when the model has no
  // such attention (an encoder-only model has no decoder).
  std::vector<Tensor> encoder_self, decoder_self, decoder_cross;
};

// `batch` holds one row (src [1, S] and/or tgt [1, T] as the architecture needs; labels are
// ignored). Runs the model's forward, which overwrites what a previous forward saved.
AttentionMaps attention_maps(Transformer& model, const Batch& batch);

}  // namespace trepro
