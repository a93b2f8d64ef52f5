#include "model/modules.h"

#include <cmath>

namespace trepro {

namespace {

Tensor flat(const Tensor& x) { return x.view({x.numel() / x.dim(-1), x.dim(-1)}); }

// The [N, width] rows a projection made from x [B, T, d], as [B, T, width]: width is heads x
// head_dim, which need not be d.
Tensor as_sequences(const Tensor& rows, const Tensor& x) { return rows.view({x.dim(0), x.dim(1), rows.dim(-1)}); }

}  // namespace

Linear::Linear(Parameters& params, const std::string& prefix, bool bias, Activation act)
    : weight_(&params.at(prefix + ".weight")), bias_(bias ? &params.at(prefix + ".bias") : nullptr), act_(act) {}

Linear::Linear(Parameter& weight, Parameter* bias) : weight_(&weight), bias_(bias), act_(Activation::none) {}

Tensor Linear::forward(Backend& backend, const Tensor& x) {
  x_ = flat(x);
  const std::int64_t n = x_.dim(0);
  const std::int64_t m = weight_->value.dim(0);
  Tensor y = backend.empty({n, m}, backend.dtype());
  pre_ = act_ == Activation::none ? Tensor() : backend.empty({n, m}, backend.dtype());
  backend.linear_forward(x_, weight_->value, bias_ ? &bias_->value : nullptr, act_, y, pre_.defined() ? &pre_ : nullptr);
  return y;
}

Tensor Linear::backward(Backend& backend, const Tensor& dy, bool need_dx) {
  Tensor dx = need_dx ? backend.empty(x_.shape(), backend.dtype()) : Tensor();
  backend.linear_backward(x_, weight_->value, pre_.defined() ? &pre_ : nullptr, act_, flat(dy),
                          need_dx ? &dx : nullptr, weight_->grad, bias_ ? &bias_->grad : nullptr);
  return dx;
}

Norm::Norm(Parameters& params, const std::string& prefix, const ModelConfig& config)
    : gamma_(&params.at(prefix + ".weight")),
      beta_(config.norm_kind == NormKind::layer ? &params.at(prefix + ".bias") : nullptr),
      kind_(config.norm_kind),
      eps_(config.layer_norm_eps) {}

Tensor Norm::forward(Backend& backend, const Tensor& x) {
  x_ = flat(x);
  const std::int64_t n = x_.dim(0);
  Tensor y = backend.empty(x_.shape(), backend.dtype());
  mean_ = backend.empty({n}, backend.dtype());
  rstd_ = backend.empty({n}, backend.dtype());
  backend.norm_forward(kind_, x_, gamma_->value, beta_ ? &beta_->value : nullptr, eps_, y, mean_, rstd_);
  return y;
}

Tensor Norm::backward(Backend& backend, const Tensor& dy) {
  Tensor dx = backend.empty(x_.shape(), backend.dtype());
  backend.norm_backward(kind_, x_, gamma_->value, mean_, rstd_, flat(dy), dx, gamma_->grad,
                        beta_ ? &beta_->grad : nullptr);
  return dx;
}

MultiHeadAttention::MultiHeadAttention(Parameters& params, const std::string& prefix, const ModelConfig& config,
                                       bool causal, std::uint32_t weights_dropout_site)
    : q_proj_(params, prefix + ".q_proj"),
      k_proj_(params, prefix + ".k_proj"),
      v_proj_(params, prefix + ".v_proj"),
      o_proj_(params, prefix + ".o_proj"),
      heads_(config.heads),
      causal_(causal),
      rope_(config.positional == Positional::rope),
      scale_(1.0 / std::sqrt(static_cast<double>(config.d_head()))),
      attention_dropout_(config.attention_dropout),
      site_(weights_dropout_site) {}

Tensor MultiHeadAttention::project_q(Backend& backend, const Tensor& x, std::int64_t offset) {
  Tensor q = as_sequences(q_proj_.forward(backend, x), x);
  if (!rope_) return q;
  Tensor rotated = backend.empty(q.shape(), backend.dtype());
  backend.rope_forward(q, static_cast<int>(heads_), offset, rotated);
  return rotated;
}

Tensor MultiHeadAttention::project_k(Backend& backend, const Tensor& x, std::int64_t offset) {
  Tensor k = as_sequences(k_proj_.forward(backend, x), x);
  if (!rope_) return k;
  Tensor rotated = backend.empty(k.shape(), backend.dtype());
  backend.rope_forward(k, static_cast<int>(heads_), offset, rotated);
  return rotated;
}

Tensor MultiHeadAttention::project_v(Backend& backend, const Tensor& x) {
  return as_sequences(v_proj_.forward(backend, x), x);
}

Tensor MultiHeadAttention::attend(Backend& backend, const Tensor& q, const Tensor& k, const Tensor& v,
                                  const Tensor* key_padding) {
  Tensor out = backend.empty(q.shape(), backend.dtype());
  Tensor lse = backend.empty({q.dim(0), heads_, q.dim(1)}, backend.dtype());
  backend.attention_forward(q, k, v, static_cast<int>(heads_), key_padding, causal_, scale_, DropoutSpec{}, out, lse);
  return o_proj_.forward(backend, out);
}

Tensor MultiHeadAttention::forward(const ForwardContext& ctx, const Tensor& xq, const Tensor& xkv,
                                   std::int64_t batch, const Tensor* key_padding) {
  Backend& backend = ctx.backend;
  const std::int64_t d = xq.dim(-1);
  batch_ = batch;
  q_ = project_q(backend, xq.view({batch, xq.dim(0) / batch, d}), 0);
  k_ = project_k(backend, xkv.view({batch, xkv.dim(0) / batch, d}), 0);
  v_ = project_v(backend, xkv.view({batch, xkv.dim(0) / batch, d}));
  key_padding_ = key_padding ? *key_padding : Tensor();
  dropout_ = ctx.dropout(attention_dropout_, site_);
  out_ = backend.empty(q_.shape(), backend.dtype());
  lse_ = backend.empty({batch, heads_, q_.dim(1)}, backend.dtype());
  backend.attention_forward(q_, k_, v_, static_cast<int>(heads_), key_padding, causal_, scale_, dropout_, out_, lse_);
  return o_proj_.forward(backend, out_);
}

MultiHeadAttention::InputGrads MultiHeadAttention::backward(Backend& backend, const Tensor& dy) {
  Tensor dout = o_proj_.backward(backend, dy).view(out_.shape());
  Tensor dq = backend.empty(q_.shape(), backend.dtype());
  Tensor dk = backend.empty(k_.shape(), backend.dtype());
  Tensor dv = backend.empty(v_.shape(), backend.dtype());
  backend.attention_backward(q_, k_, v_, static_cast<int>(heads_), key_padding_.defined() ? &key_padding_ : nullptr,
                             causal_, scale_, dropout_, out_, lse_, dout, dq, dk, dv);
  if (rope_) {
    Tensor dq_unrotated = backend.empty(dq.shape(), backend.dtype());
    Tensor dk_unrotated = backend.empty(dk.shape(), backend.dtype());
    backend.rope_backward(dq, static_cast<int>(heads_), 0, dq_unrotated);
    backend.rope_backward(dk, static_cast<int>(heads_), 0, dk_unrotated);
    dq = dq_unrotated;
    dk = dk_unrotated;
  }
  InputGrads grads;
  grads.dxq = q_proj_.backward(backend, dq);
  grads.dxkv = k_proj_.backward(backend, dk);
  backend.add_inplace(grads.dxkv, v_proj_.backward(backend, dv));
  return grads;
}

Embedding::Embedding(Parameter& table, Parameter* pos_table, const ModelConfig& config, std::uint32_t site)
    : table_(&table),
      pos_table_(pos_table),
      positional_(config.positional),
      scale_(std::sqrt(static_cast<double>(config.d_model))),
      p_(config.dropout),
      site_(site) {}

Tensor Embedding::forward(const ForwardContext& ctx, const Tensor& ids, std::int64_t offset) {
  Backend& backend = ctx.backend;
  const std::int64_t d = table_->value.dim(1);
  ids_ = ids;
  offset_ = offset;
  Tensor embedded = backend.empty({ids.dim(0), ids.dim(1), d}, backend.dtype());
  backend.embedding_forward(ids, table_->value, scale_, positional_, pos_table_ ? &pos_table_->value : nullptr, offset,
                            embedded);
  dropout_ = ctx.dropout(p_, site_);
  Tensor out = backend.empty({ids.numel(), d}, backend.dtype());
  backend.dropout_forward(embedded.view(out.shape()), dropout_, out);
  return out;
}

void Embedding::backward(Backend& backend, const Tensor& dy) {
  Tensor dembedded = backend.empty(dy.shape(), backend.dtype());
  backend.dropout_backward(dy, dropout_, dembedded);
  backend.embedding_backward(ids_, dembedded.view({ids_.dim(0), ids_.dim(1), dy.dim(1)}), scale_, positional_, offset_,
                             table_->grad, pos_table_ ? &pos_table_->grad : nullptr);
}

FeedForward::FeedForward(Parameters& params, const std::string& prefix, const ModelConfig& config)
    : swiglu_(config.swiglu),
      w1_(params, prefix + ".w1", true, config.swiglu ? Activation::none : config.activation),
      w2_(params, prefix + ".w2"),
      w3_(config.swiglu ? std::make_unique<Linear>(params, prefix + ".w3") : nullptr) {}

Tensor FeedForward::forward(Backend& backend, const Tensor& x) {
  if (!swiglu_) return w2_.forward(backend, w1_.forward(backend, x));
  gate_ = w1_.forward(backend, x);
  up_ = w3_->forward(backend, x);
  Tensor hidden = backend.empty(gate_.shape(), backend.dtype());
  backend.swiglu_forward(gate_, up_, hidden);
  return w2_.forward(backend, hidden);
}

Tensor FeedForward::backward(Backend& backend, const Tensor& dy) {
  Tensor dhidden = w2_.backward(backend, dy);
  if (!swiglu_) return w1_.backward(backend, dhidden);
  Tensor dgate = backend.empty(gate_.shape(), backend.dtype());
  Tensor dup = backend.empty(up_.shape(), backend.dtype());
  backend.swiglu_backward(gate_, up_, dhidden, dgate, dup);
  Tensor dx = w1_.backward(backend, dgate);
  backend.add_inplace(dx, w3_->backward(backend, dup));
  return dx;
}

}  // namespace trepro
