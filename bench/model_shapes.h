// What the model benchmarks on every device share: the FLOPs of one forward of a Transformer
// config at a batch shape, and a deterministic batch of token ids for it.
#pragma once

#include <cstdint>

#include "core/config.h"
#include "model/transformer.h"

namespace trepro::bench {

// Multiply-adds of one forward, times 2: the linear layers (per token), the output projection,
// and attention (q k^T and p v: 2 T_q T_k d per layer each). A training step is 3x this.
inline double forward_flops(const ModelConfig& m, std::int64_t batch, std::int64_t s, std::int64_t t) {
  const double d = static_cast<double>(m.d_model), f = static_cast<double>(m.d_ff);
  const double src = static_cast<double>(batch * s), tgt = static_cast<double>(batch * t);
  const double encoder = m.encoder_layers * (2 * src * (4 * d * d + 2 * d * f) + 4.0 * batch * s * s * d);
  // Decoder: self-attention q, k, v, o and cross-attention q, o on target tokens, cross k, v on
  // source tokens, the FFN on target tokens.
  const double decoder = m.decoder_layers * (2 * tgt * (6 * d * d + 2 * d * f) + 2 * src * 2 * d * d +
                                             4.0 * batch * t * t * d + 4.0 * batch * t * s * d);
  return encoder + decoder + 2 * tgt * d * static_cast<double>(m.vocab_size);
}

// Source, target and label ids spread over the vocabulary (never the pad id 0), on the host.
inline Batch random_batch(std::int64_t batch, std::int64_t length, std::int64_t vocab) {
  Batch b{Tensor::empty({batch, length}, DType::i32), Tensor::empty({batch, length}, DType::i32),
          Tensor::empty({batch, length}, DType::i32)};
  for (std::int64_t i = 0; i < batch * length; ++i) {
    b.src.set(i, 1 + static_cast<double>((i * 7919) % (vocab - 1)));
    b.tgt.set(i, 1 + static_cast<double>((i * 104729) % (vocab - 1)));
    b.labels.set(i, 1 + static_cast<double>((i * 1299709) % (vocab - 1)));
  }
  return b;
}

}  // namespace trepro::bench
