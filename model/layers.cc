#include "model/layers.h"

namespace trepro {

Residual::Residual(Parameters& params, const std::string& norm_prefix, const ModelConfig& config,
                   std::uint32_t site)
    : pre_(config.norm == NormPlacement::pre), p_(config.dropout), site_(site), norm_(params, norm_prefix, config) {}

Tensor Residual::input(const ForwardContext& ctx, const Tensor& x) {
  return pre_ ? norm_.forward(ctx.backend, x) : x;
}

Tensor Residual::output(const ForwardContext& ctx, const Tensor& x, const Tensor& f) {
  Backend& backend = ctx.backend;
  dropout_ = ctx.dropout(p_, site_);
  Tensor out = backend.empty(x.shape(), backend.dtype());
  if (pre_) {
    backend.add_dropout_forward(x, f, dropout_, out);
    return out;
  }
  sum_ = backend.empty(x.shape(), backend.dtype());
  mean_ = backend.empty({x.dim(0)}, backend.dtype());
  rstd_ = backend.empty({x.dim(0)}, backend.dtype());
  backend.add_dropout_norm_forward(norm_.kind(), x, f, dropout_, norm_.gamma().value,
                                   norm_.beta() ? &norm_.beta()->value : nullptr, norm_.eps(), sum_, out, mean_,
                                   rstd_);
  return out;
}

Tensor Residual::backward_output(Backend& backend, const Tensor& dout, Tensor& dx) {
  Tensor df = backend.empty(dout.shape(), backend.dtype());
  if (pre_) {
    // The identity path: d(x) starts as d(out). The caller never reads dout again, so the
    // tensor is reused rather than copied.
    dx = dout;
    backend.dropout_backward(dout, dropout_, df);
    return df;
  }
  dx = backend.empty(dout.shape(), backend.dtype());
  backend.add_dropout_norm_backward(norm_.kind(), sum_, norm_.gamma().value, mean_, rstd_, dropout_, dout, dx, df,
                                    norm_.gamma().grad, norm_.beta() ? &norm_.beta()->grad : nullptr);
  return df;
}

void Residual::backward_input(Backend& backend, const Tensor& dinput, Tensor& dx) {
  backend.add_inplace(dx, pre_ ? norm_.backward(backend, dinput) : dinput);
}

namespace {

std::string layer_prefix(Stack stack, std::int64_t index) {
  return std::string(stack == Stack::encoder ? "encoder" : "decoder") + ".layers." + std::to_string(index);
}

}  // namespace

EncoderLayer::EncoderLayer(Parameters& params, const ModelConfig& config, std::int64_t index)
    : self_attn_(params, layer_prefix(Stack::encoder, index) + ".self_attn", config, false,
                 dropout_site(Stack::encoder, index, 0, DropoutUse::attention_weights)),
      ffn_(params, layer_prefix(Stack::encoder, index) + ".ffn", config),
      attn_residual_(params, layer_prefix(Stack::encoder, index) + ".norm1", config,
                     dropout_site(Stack::encoder, index, 0, DropoutUse::residual)),
      ffn_residual_(params, layer_prefix(Stack::encoder, index) + ".norm2", config,
                    dropout_site(Stack::encoder, index, 1, DropoutUse::residual)) {}

Tensor EncoderLayer::forward(const ForwardContext& ctx, const Tensor& x, std::int64_t batch,
                             const Tensor* src_padding) {
  Tensor in = attn_residual_.input(ctx, x);
  Tensor h = attn_residual_.output(ctx, x, self_attn_.forward(ctx, in, in, batch, src_padding));
  return ffn_residual_.output(ctx, h, ffn_.forward(ctx.backend, ffn_residual_.input(ctx, h)));
}

Tensor EncoderLayer::backward(Backend& backend, const Tensor& dy) {
  Tensor dh;
  ffn_residual_.backward_input(backend, ffn_.backward(backend, ffn_residual_.backward_output(backend, dy, dh)), dh);
  Tensor dx;
  MultiHeadAttention::InputGrads g = self_attn_.backward(backend, attn_residual_.backward_output(backend, dh, dx));
  backend.add_inplace(g.dxq, g.dxkv);  // self-attention: q, k and v all read the same input
  attn_residual_.backward_input(backend, g.dxq, dx);
  return dx;
}

DecoderLayer::DecoderLayer(Parameters& params, const ModelConfig& config, std::int64_t index, bool cross_attention)
    : self_attn_(params, layer_prefix(Stack::decoder, index) + ".self_attn", config, true,
                 dropout_site(Stack::decoder, index, 0, DropoutUse::attention_weights)),
      cross_attn_(cross_attention
                      ? std::make_unique<MultiHeadAttention>(params, layer_prefix(Stack::decoder, index) + ".cross_attn",
                                                             config, false,
                                                             dropout_site(Stack::decoder, index, 1,
                                                                          DropoutUse::attention_weights))
                      : nullptr),
      ffn_(params, layer_prefix(Stack::decoder, index) + ".ffn", config) {
  const int sublayers = cross_attention ? 3 : 2;
  for (int s = 0; s < sublayers; ++s) {
    residuals_.push_back(std::make_unique<Residual>(params,
                                                    layer_prefix(Stack::decoder, index) + ".norm" + std::to_string(s + 1),
                                                    config, dropout_site(Stack::decoder, index, s, DropoutUse::residual)));
  }
}

Tensor DecoderLayer::forward(const ForwardContext& ctx, const Tensor& y, const Tensor& memory, std::int64_t batch,
                             const Tensor* tgt_padding, const Tensor* src_padding) {
  Residual& self_res = *residuals_.front();
  Tensor in = self_res.input(ctx, y);
  Tensor h = self_res.output(ctx, y, self_attn_.forward(ctx, in, in, batch, tgt_padding));
  if (cross_attn_) {
    Residual& cross_res = *residuals_[1];
    h = cross_res.output(ctx, h, cross_attn_->forward(ctx, cross_res.input(ctx, h), memory, batch, src_padding));
  }
  Residual& ffn_res = *residuals_.back();
  return ffn_res.output(ctx, h, ffn_.forward(ctx.backend, ffn_res.input(ctx, h)));
}

Tensor DecoderLayer::backward(Backend& backend, const Tensor& dy, Tensor& dmemory) {
  Residual& ffn_res = *residuals_.back();
  Tensor dh;
  ffn_res.backward_input(backend, ffn_.backward(backend, ffn_res.backward_output(backend, dy, dh)), dh);
  if (cross_attn_) {
    Residual& cross_res = *residuals_[1];
    Tensor dh_before;
    MultiHeadAttention::InputGrads g = cross_attn_->backward(backend, cross_res.backward_output(backend, dh, dh_before));
    backend.add_inplace(dmemory, g.dxkv);
    cross_res.backward_input(backend, g.dxq, dh_before);
    dh = dh_before;
  }
  Residual& self_res = *residuals_.front();
  Tensor dx;
  MultiHeadAttention::InputGrads g = self_attn_.backward(backend, self_res.backward_output(backend, dh, dx));
  backend.add_inplace(g.dxq, g.dxkv);
  self_res.backward_input(backend, g.dxq, dx);
  return dx;
}

}  // namespace trepro
