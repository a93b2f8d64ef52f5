// The Transformer of Vaswani et al. (2017), written once against Backend&: encoder-decoder (the
// paper), and the decoder-only (GPT-style) and encoder-only (BERT-style) variants.
//
//   encoder:  x = Dropout(sqrt(d) E[src] + PE);  x = EncoderLayer_i(x) for i < N;  [x = Norm(x)]
//   decoder:  y = Dropout(sqrt(d) E[tgt] + PE);  y = DecoderLayer_i(y, x) for i < N;  [y = Norm(y)]
//   logits = y W_out^T      (W_out = E when embeddings are tied; no bias)
// The bracketed final norms exist in Pre-LN stacks only.
#pragma once

#include <memory>
#include <vector>

#include "core/config.h"
#include "model/layers.h"

namespace trepro {

// One batch of host int32/int64 token ids; `pad_id` marks padding.
//   encoder_decoder: src [B, S], tgt [B, T] (the decoder input), labels [B, T]
//   decoder_only:    tgt [B, T], labels [B, T]           (src undefined)
//   encoder_only:    src [B, S], labels [B, S]           (tgt undefined)
// labels may be undefined when no loss is wanted.
struct Batch {
  Tensor src;
  Tensor tgt;
  Tensor labels;
};

class Transformer {
 public:
  // Parameters are zero until initialize() or parameters().load().
  Transformer(const ModelConfig& config, Backend& backend);
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;
  ~Transformer();

  const ModelConfig& config() const { return config_; }
  Backend& backend() { return backend_; }
  Parameters& parameters() { return params_; }
  void initialize(std::uint64_t seed) { params_.initialize(backend_, seed); }

  // Logits [B*T, V] (encoder_only: [B*S, V]) on the backend's device. With training, dropout
  // is on and its masks are keyed by `dropout` (seed, step, micro-batch). Saves what backward needs.
  Tensor forward(const Batch& batch, bool training = false, DropoutStream dropout = {});
  // Label-smoothed cross-entropy of the last forward's logits against batch.labels (mean over
  // non-pad labels); saves what backward() needs.
  double loss(const Tensor& labels, double label_smoothing, SmoothingForm form);
  // Number of non-pad labels in the last loss().
  std::int64_t loss_tokens() const { return loss_tokens_; }
  // Accumulates d(scale * last loss)/d(parameter) into every parameter's grad (a micro-batch of an
  // accumulated step scales by its share of the step's labels).
  void backward(double scale = 1.0);
  // Accumulates the gradients for an arbitrary d(logits).
  void backward_from_logits(const Tensor& dlogits);

  // Pieces used by incremental decoding (model/incremental_decoder.h).
  Tensor encode(const ForwardContext& ctx, const Tensor& src, const Tensor* src_padding);
  std::vector<std::unique_ptr<EncoderLayer>>& encoder_layers() { return encoder_; }
  Embedding& target_embedding() { return *tgt_embed_; }
  std::vector<std::unique_ptr<DecoderLayer>>& decoder_layers() { return decoder_; }
  Norm* decoder_norm() { return decoder_norm_.get(); }
  Linear& output_projection() { return *out_proj_; }
  // int32 [B, T] on the device: 1 where ids == pad_id.
  Tensor padding_mask(const Tensor& host_ids);
  // Host ids (int32 or int64) uploaded as int32.
  Tensor upload_ids(const Tensor& host_ids, const char* what);

 private:
  ModelConfig config_;
  Backend& backend_;
  Parameters params_;
  std::unique_ptr<Embedding> src_embed_, tgt_embed_;
  std::vector<std::unique_ptr<EncoderLayer>> encoder_;
  std::vector<std::unique_ptr<DecoderLayer>> decoder_;
  std::unique_ptr<Norm> encoder_norm_, decoder_norm_;
  std::unique_ptr<Linear> out_proj_;

  // Saved by forward and loss.
  std::int64_t batch_ = 0;
  Tensor memory_;
  Tensor logits_, labels_, lse_;
  double label_smoothing_ = 0.0;
  SmoothingForm form_ = SmoothingForm::uniform;
  std::int64_t loss_tokens_ = 0;
};

}  // namespace trepro
