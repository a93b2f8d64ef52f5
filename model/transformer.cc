#include "model/transformer.h"

#include <stdexcept>

#include "model/layer_tree.h"

namespace trepro {

Transformer::Transformer(const ModelConfig& config, Backend& backend)
    : config_(config), backend_(backend), params_(config, backend) {
  const LayerTree tree = layer_tree(config);
  Parameter* pos_table = tree.positions ? &params_.at(*tree.positions) : nullptr;
  if (tree.encoder) {
    src_embed_ = std::make_unique<Embedding>(params_.at(tree.source_table), pos_table, config, kSourceEmbeddingSite);
    for (std::int64_t i = 0; i < tree.encoder->layers; ++i) {
      encoder_.push_back(std::make_unique<EncoderLayer>(params_, config, i));
    }
    if (tree.encoder->final_norm) encoder_norm_ = std::make_unique<Norm>(params_, tree.encoder->norm(), config);
  }
  if (tree.decoder) {
    tgt_embed_ = std::make_unique<Embedding>(params_.at(tree.target_table), pos_table, config, kTargetEmbeddingSite);
    for (std::int64_t i = 0; i < tree.decoder->layers; ++i) {
      decoder_.push_back(std::make_unique<DecoderLayer>(params_, config, i, tree.decoder->cross_attention));
    }
    if (tree.decoder->final_norm) decoder_norm_ = std::make_unique<Norm>(params_, tree.decoder->norm(), config);
  }
  out_proj_ = std::make_unique<Linear>(params_.at(tree.output_table), nullptr);
}

Transformer::~Transformer() = default;

Tensor Transformer::upload_ids(const Tensor& host_ids, const char* what) {
  if (!host_ids.defined()) throw std::invalid_argument(std::string("batch.") + what + " is missing");
  if (host_ids.rank() != 2 || (host_ids.dtype() != DType::i32 && host_ids.dtype() != DType::i64)) {
    throw std::invalid_argument(std::string("batch.") + what + ": expected an int32 or int64 [B, T] tensor, got " +
                                std::string(dtype_name(host_ids.dtype())) + " " + shape_string(host_ids.shape()));
  }
  // Attention splits its rows by the batch size (B = 0 divided by zero) and normalizes over at
  // least one key; the mean loss needs at least one label. An empty batch has no output.
  if (host_ids.numel() == 0) {
    throw std::invalid_argument(std::string("batch.") + what + ": shape " + shape_string(host_ids.shape()) +
                                " holds no token: a batch needs B >= 1 sequences of T >= 1 tokens");
  }
  return backend_.upload(host_ids);
}

Tensor Transformer::padding_mask(const Tensor& host_ids) {
  Tensor mask = Tensor::empty(host_ids.shape(), DType::i32);
  for (std::int64_t i = 0; i < host_ids.numel(); ++i) {
    mask.set(i, host_ids.at(i) == static_cast<double>(config_.pad_id) ? 1.0 : 0.0);
  }
  return backend_.upload(mask);
}

Tensor Transformer::encode(const ForwardContext& ctx, const Tensor& src, const Tensor* src_padding) {
  Tensor x = src_embed_->forward(ctx, src);
  for (auto& layer : encoder_) x = layer->forward(ctx, x, src.dim(0), src_padding);
  return encoder_norm_ ? encoder_norm_->forward(ctx.backend, x) : x;
}

Tensor Transformer::forward(const Batch& batch, bool training, DropoutStream dropout) {
  // The last forward's logits and loss belong to it: dropped first, their blocks serve this
  // forward's allocations (the logits of the paper-base model at 32 x 128 are 600 MB, whose
  // fresh pages the kernel would zero again).
  logits_ = Tensor(), labels_ = Tensor(), lse_ = Tensor();
  ForwardContext ctx{backend_, training, dropout};
  Tensor src_padding, tgt_padding;
  Tensor y;
  if (config_.architecture != Architecture::decoder_only) {
    Tensor src = upload_ids(batch.src, "src");
    src_padding = padding_mask(batch.src);
    batch_ = src.dim(0);
    memory_ = encode(ctx, src, &src_padding);
    y = memory_;
  }
  if (config_.architecture != Architecture::encoder_only) {
    Tensor tgt = upload_ids(batch.tgt, "tgt");
    if (src_padding.defined() && tgt.dim(0) != batch_) {
      throw std::invalid_argument("batch: src has " + std::to_string(batch_) + " rows but tgt has " +
                                  std::to_string(tgt.dim(0)));
    }
    batch_ = tgt.dim(0);
    tgt_padding = padding_mask(batch.tgt);
    y = tgt_embed_->forward(ctx, tgt);
    for (auto& layer : decoder_) {
      y = layer->forward(ctx, y, memory_, batch_, &tgt_padding, src_padding.defined() ? &src_padding : nullptr);
    }
    if (decoder_norm_) y = decoder_norm_->forward(backend_, y);
  }
  logits_ = out_proj_->forward(backend_, y);
  return logits_;
}

double Transformer::loss(const Tensor& labels, double label_smoothing, SmoothingForm form) {
  if (!logits_.defined()) throw std::logic_error("Transformer::loss before forward");
  Tensor device_labels = upload_ids(labels, "labels");
  if (device_labels.numel() != logits_.dim(0)) {
    throw std::invalid_argument("batch.labels: shape " + shape_string(labels.shape()) + " does not match the " +
                                std::to_string(logits_.dim(0)) + " predicted positions");
  }
  labels_ = device_labels.view({device_labels.numel()});
  label_smoothing_ = label_smoothing;
  form_ = form;
  lse_ = backend_.empty({logits_.dim(0)}, backend_.dtype());
  return backend_.cross_entropy_forward(logits_, labels_, static_cast<int>(config_.pad_id), label_smoothing, form,
                                        lse_, &loss_tokens_);
}

void Transformer::backward(double scale) {
  if (!lse_.defined()) throw std::logic_error("Transformer::backward before loss");
  Tensor dlogits = backend_.empty(logits_.shape(), backend_.dtype());
  backend_.cross_entropy_backward(logits_, labels_, lse_, static_cast<int>(config_.pad_id), label_smoothing_, form_,
                                  scale, dlogits);
  backward_from_logits(dlogits);
}

void Transformer::backward_from_logits(const Tensor& dlogits) {
  Tensor dy = out_proj_->backward(backend_, dlogits);
  Tensor dmemory;
  if (config_.architecture != Architecture::encoder_only) {
    if (decoder_norm_) dy = decoder_norm_->backward(backend_, dy);
    if (memory_.defined()) dmemory = backend_.zeros(memory_.shape(), backend_.dtype());
    for (auto it = decoder_.rbegin(); it != decoder_.rend(); ++it) dy = (*it)->backward(backend_, dy, dmemory);
    tgt_embed_->backward(backend_, dy);
  } else {
    dmemory = dy;
  }
  if (config_.architecture != Architecture::decoder_only) {
    Tensor dx = encoder_norm_ ? encoder_norm_->backward(backend_, dmemory) : dmemory;
    for (auto it = encoder_.rbegin(); it != encoder_.rend(); ++it) dx = (*it)->backward(backend_, dx);
    src_embed_->backward(backend_, dx);
  }
}

}  // namespace trepro
