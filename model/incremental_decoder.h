// Incremental (cached) decoding: one target position at a time, each decoder self-attention
// keeping the keys and values of the positions already seen, and cross-attention keys and
// values computed once from the encoder's output. Equal to recomputing the full forward at
// every step (a conformance invariant), at O(T) instead of O(T^2) cost per step.
//
// Runs the model's modules in inference mode: it overwrites what a training forward saved, so
// do not interleave it with forward/backward of the same Transformer.
#pragma once

#include <vector>

#include "model/transformer.h"

namespace trepro {

class IncrementalDecoder {
 public:
  // src [B, S] host ids for an encoder-decoder model; undefined for a decoder-only model (then
  // `batch` gives B).
  IncrementalDecoder(Transformer& model, const Tensor& src, std::int64_t batch = 0);

  // tokens [B] host ids: the decoder input at position position(). Returns logits [B, V] on the
  // backend's device for the next position, and advances.
  Tensor step(const Tensor& tokens);
  std::int64_t position() const { return position_; }
  std::int64_t batch() const { return batch_; }
  // Keeps only the rows `rows` [B'] (int32 host, repeats allowed) of every cache: beam search
  // calls it after choosing which hypotheses continue.
  void reorder(const Tensor& rows);

 private:
  struct LayerCache {
    Tensor self_k, self_v;    // [B, t, d]
    Tensor cross_k, cross_v;  // [B, S, d]
  };
  Transformer& model_;
  // The weights stay as they are while decoding: the backend may keep them packed.
  ConstantWeights constant_weights_;
  std::int64_t batch_;
  std::int64_t position_ = 0;
  Tensor src_padding_;       // [B, S] on the device
  Tensor host_src_padding_;  // the same on the host, for reorder()
  // The source sentence (row of `src`) of each row: the cross-attention caches and the padding
  // mask depend on it alone, so a reorder that keeps it row for row (beam search's, between
  // beams of one sentence) leaves them as they are.
  std::vector<std::int64_t> source_of_row_;
  std::vector<LayerCache> caches_;
};

}  // namespace trepro
