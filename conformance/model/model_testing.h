// What the model tests share: a tiny configuration, batches with padding, and row selection.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config.h"
#include "model/transformer.h"

namespace trepro::testing {

// Token ids of the tiny vocabulary: pad 0 (ModelConfig's default pad_id), BOS 1, EOS 2, and the
// "words" 3 .. vocab_size - 1.
constexpr std::int64_t kBos = 1;
constexpr std::int64_t kEos = 2;
constexpr std::int64_t kFirstWord = 3;

// vocab 11, d_model 8, 2 heads, d_ff 12, 2 + 2 layers, max_len 16, no dropout, in the paper's
// layout (encoder-decoder, Post-LN, ReLU, sinusoidal, LayerNorm, tied embeddings): small enough
// that finite differences over every parameter are cheap.
ModelConfig tiny_config();
// `config` with another architecture and the layer counts it implies (the missing stack has 0).
ModelConfig with_architecture(ModelConfig config, Architecture architecture);
// `config` with a feed-forward activation; Activation::none means SwiGLU, as in the JSON.
ModelConfig with_activation(ModelConfig config, Activation activation);
// `config` with `heads` heads of width `head_dim` (model.head_dim), so that q, k and v are
// heads x head_dim wide instead of d_model (Table 3 row (B)).
ModelConfig with_head_dim(ModelConfig config, std::int64_t heads, std::int64_t head_dim);

// The longest sum a value of a model with `config` depends on, the accumulation length of its
// tolerances: a d_model, heads x d_head or d_ff wide GEMM, or attention over at most max_len keys.
std::int64_t widest_sum(const ModelConfig& config);

// A batch of `rows` rows (host int32) for the model's architecture: source length 5, target
// length 6; row 1 has its last 2 source and last 2 target positions padded. The target is BOS
// followed by words, the labels are the target shifted left and ended by EOS (pad where the
// target is pad); an encoder-only model's labels are words at the source's real positions.
Batch tiny_batch(const ModelConfig& config, std::uint64_t seed, std::int64_t rows = 2);

// Words uniform in [kFirstWord, vocab), host int32 [rows, length].
Tensor random_words(const Shape& shape, std::int64_t vocab, std::uint64_t seed);

// Rows `rows` of a host matrix [N, V], as a new host matrix [rows.size(), V].
Tensor take_rows(const Tensor& matrix, const std::vector<std::int64_t>& rows);
// The logits rows b * T + t of the real (non-pad) positions t of `ids` [B, T] with t <= last.
std::vector<std::int64_t> real_rows(const Tensor& ids, std::int64_t pad_id, std::int64_t last);

}  // namespace trepro::testing
