// The building blocks of the Transformer, each a forward that saves what its backward needs.
// Activations are [N, d] with N = batch * time; attention sees them as [B, T, d].
#pragma once

#include <memory>
#include <string>

#include "model/context.h"
#include "model/parameters.h"

namespace trepro {

// y = act(x W^T + b)
class Linear {
 public:
  Linear(Parameters& params, const std::string& prefix, bool bias = true, Activation act = Activation::none);
  Linear(Parameter& weight, Parameter* bias);  // for the (possibly tied) output projection

  Tensor forward(Backend& backend, const Tensor& x);
  // Accumulates dW, db; returns dx (undefined when !need_dx).
  Tensor backward(Backend& backend, const Tensor& dy, bool need_dx = true);

 private:
  Parameter* weight_;
  Parameter* bias_;
  Activation act_;
  Tensor x_, pre_;
};

// LayerNorm or RMSNorm over the last dimension.
class Norm {
 public:
  Norm(Parameters& params, const std::string& prefix, const ModelConfig& config);

  Tensor forward(Backend& backend, const Tensor& x);
  Tensor backward(Backend& backend, const Tensor& dy);

  Parameter& gamma() { return *gamma_; }
  Parameter* beta() { return beta_; }
  NormKind kind() const { return kind_; }
  double eps() const { return eps_; }

 private:
  Parameter* gamma_;
  Parameter* beta_;
  NormKind kind_;
  double eps_;
  Tensor x_, mean_, rstd_;
};

// Multi-head attention: q = xq Wq, k = xkv Wk, v = xkv Wv (rotated by RoPE when configured),
// o = attention(q, k, v) Wo. Its pieces are public so that incremental decoding can run the
// projections on new tokens and attend over a key/value cache.
class MultiHeadAttention {
 public:
  MultiHeadAttention(Parameters& params, const std::string& prefix, const ModelConfig& config, bool causal,
                     std::uint32_t weights_dropout_site);

  // xq [B*Tq, d], xkv [B*Tk, d]; positions start at 0 for both sequences.
  Tensor forward(const ForwardContext& ctx, const Tensor& xq, const Tensor& xkv, std::int64_t batch,
                 const Tensor* key_padding);
  struct InputGrads {
    Tensor dxq, dxkv;
  };
  InputGrads backward(Backend& backend, const Tensor& dy);

  // Pieces, [B, T, d] in, [B, T, heads x d_head] out. `offset` is the position of the first
  // row (RoPE).
  Tensor project_q(Backend& backend, const Tensor& x, std::int64_t offset);
  Tensor project_k(Backend& backend, const Tensor& x, std::int64_t offset);
  Tensor project_v(Backend& backend, const Tensor& x);
  // Attention of q over (k, v) and the output projection, forward only (decoding).
  Tensor attend(Backend& backend, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* key_padding);

  // What the last forward() attended with, for inspection (model/decoding_attention.h): q and k
  // [B, T, heads x d_head] as projected (and rotated), its key padding (undefined when none), the masks and scale.
  const Tensor& last_q() const { return q_; }
  const Tensor& last_k() const { return k_; }
  const Tensor& last_key_padding() const { return key_padding_; }
  std::int64_t heads() const { return heads_; }
  bool causal() const { return causal_; }
  double scale() const { return scale_; }

 private:
  Linear q_proj_, k_proj_, v_proj_, o_proj_;
  std::int64_t heads_;
  bool causal_;
  bool rope_;
  double scale_;
  double attention_dropout_;
  std::uint32_t site_;
  // Saved by forward.
  Tensor q_, k_, v_, out_, lse_;
  Tensor key_padding_;
  DropoutSpec dropout_;
  std::int64_t batch_ = 0;
};

// Token embedding times `scale`, plus positions, then dropout: [B, T] ids -> [B*T, d].
class Embedding {
 public:
  Embedding(Parameter& table, Parameter* pos_table, const ModelConfig& config, std::uint32_t site);

  // ids [B, T] int32 on the device; `offset` is the position of the first column.
  Tensor forward(const ForwardContext& ctx, const Tensor& ids, std::int64_t offset = 0);
  void backward(Backend& backend, const Tensor& dy);

 private:
  Parameter* table_;
  Parameter* pos_table_;
  Positional positional_;
  double scale_;
  double p_;
  std::uint32_t site_;
  Tensor ids_;
  std::int64_t offset_ = 0;
  DropoutSpec dropout_;
};

// Position-wise feed-forward: w2(act(w1 x + b1)) + b2, or w2(silu(w1 x) * w3 x) for SwiGLU.
class FeedForward {
 public:
  FeedForward(Parameters& params, const std::string& prefix, const ModelConfig& config);

  Tensor forward(Backend& backend, const Tensor& x);
  Tensor backward(Backend& backend, const Tensor& dy);

 private:
  bool swiglu_;
  Linear w1_, w2_;
  std::unique_ptr<Linear> w3_;
  Tensor gate_, up_;
};

}  // namespace trepro
