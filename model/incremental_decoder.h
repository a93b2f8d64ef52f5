// Incremental (cached) decoding: one target position at a time, each decoder self-attention
// keeping the keys and values of the positions already seen, and cross-attention keys and
// values computed once from the encoder's output. Equal to recomputing the full forward at
// every step (a conformance invariant), at O(T) instead of O(T^2) cost per step.
//
// Cross-attention keeps one copy of each source sentence's keys and values, however many rows
// (beam search's hypotheses) decode it, and attends the rows of one source together: G queries
// over its keys, where G is the most rows of any source (a source with fewer repeats one of
// its rows, whose outputs are dropped).
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
    Tensor cross_k, cross_v;  // [sources, S, d]
  };
  // Rows of the query [B] as cross-attention reads them, [sources x group]: the rows of source s
  // at s x group onwards. Both maps are undefined when the rows lie so already (no copy).
  struct SourceGroups {
    std::int64_t group = 1;
    Tensor query_rows;  // [sources x group] int32 on the device: the row in each place
    Tensor row_places;  // [B] int32 on the device: the place of each row
  };
  // The keys and values of each source attended by its rows' queries, with the output
  // projection: [B, d].
  Tensor cross_attend(MultiHeadAttention& cross, const Tensor& q, const LayerCache& cache);
  void group_rows_by_source();

  Transformer& model_;
  // The weights stay as they are while decoding: the backend may keep them packed.
  ConstantWeights constant_weights_;
  std::int64_t batch_;
  std::int64_t position_ = 0;
  Tensor src_padding_;       // [sources, S] on the device
  Tensor host_src_padding_;  // the same on the host, for reorder()
  // The source (its place in the cross-attention caches and the padding mask) of each row. A
  // reorder copies the caches only when it drops a source: beam search's reorders between the
  // beams of one sentence leave them as they are.
  std::vector<std::int64_t> source_of_row_;
  SourceGroups groups_;
  std::vector<LayerCache> caches_;
};

}  // namespace trepro
