// Residual sub-layers and the encoder and decoder layers built from them.
//
//   Post-LN (the paper):  x' = Norm(x + Dropout(F(x)))
//   Pre-LN:               x' = x + Dropout(F(Norm(x)))     (and a final Norm after the stack)
#pragma once

#include <memory>
#include <vector>

#include "model/modules.h"

namespace trepro {

// The residual connection, dropout and norm around one sub-layer F.
class Residual {
 public:
  Residual(Parameters& params, const std::string& norm_prefix, const ModelConfig& config, std::uint32_t site);

  // What F sees: x (Post-LN) or Norm(x) (Pre-LN).
  Tensor input(const ForwardContext& ctx, const Tensor& x);
  // The sub-layer's output: Norm(x + Dropout(f)) or x + Dropout(f).
  Tensor output(const ForwardContext& ctx, const Tensor& x, const Tensor& f);

  // Given d(output), returns d(f) and writes the part of d(x) that flows around F into dx.
  Tensor backward_output(Backend& backend, const Tensor& dout, Tensor& dx);
  // Adds the part of d(x) that flows through F (given d(F's input)) to dx.
  void backward_input(Backend& backend, const Tensor& dinput, Tensor& dx);

 private:
  bool pre_;
  double p_;
  std::uint32_t site_;
  Norm norm_;
  // Saved by output() (Post-LN): the sum and the norm statistics.
  Tensor sum_, mean_, rstd_;
  DropoutSpec dropout_;
};

// Self-attention (bidirectional) then feed-forward.
class EncoderLayer {
 public:
  EncoderLayer(Parameters& params, const ModelConfig& config, std::int64_t index);
  // x [B*S, d]; src_padding [B, S] int32 (nonzero = pad) or null.
  Tensor forward(const ForwardContext& ctx, const Tensor& x, std::int64_t batch, const Tensor* src_padding);
  Tensor backward(Backend& backend, const Tensor& dy);

  MultiHeadAttention& self_attn() { return self_attn_; }

 private:
  MultiHeadAttention self_attn_;
  FeedForward ffn_;
  Residual attn_residual_, ffn_residual_;
};

// Causal self-attention, cross-attention over the encoder's output (absent in a decoder-only
// model), then feed-forward.
class DecoderLayer {
 public:
  DecoderLayer(Parameters& params, const ModelConfig& config, std::int64_t index, bool cross_attention);
  // y [B*T, d], memory [B*S, d] (ignored without cross-attention).
  Tensor forward(const ForwardContext& ctx, const Tensor& y, const Tensor& memory, std::int64_t batch,
                 const Tensor* tgt_padding, const Tensor* src_padding);
  // Returns d(y); adds d(memory) to dmemory when there is cross-attention.
  Tensor backward(Backend& backend, const Tensor& dy, Tensor& dmemory);

  MultiHeadAttention& self_attn() { return self_attn_; }
  MultiHeadAttention* cross_attn() { return cross_attn_.get(); }
  FeedForward& ffn() { return ffn_; }
  Residual& residual(int sublayer) { return *residuals_[static_cast<std::size_t>(sublayer)]; }

 private:
  MultiHeadAttention self_attn_;
  std::unique_ptr<MultiHeadAttention> cross_attn_;
  FeedForward ffn_;
  std::vector<std::unique_ptr<Residual>> residuals_;  // self, [cross,] ffn
};

}  // namespace trepro
