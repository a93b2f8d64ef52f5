#include "model/incremental_decoder.h"

#include <stdexcept>

namespace trepro {

IncrementalDecoder::IncrementalDecoder(Transformer& model, const Tensor& src, std::int64_t batch)
    : model_(model), constant_weights_(model.backend()), batch_(batch) {
  Backend& backend = model.backend();
  const ModelConfig& config = model.config();
  if (config.architecture == Architecture::encoder_only) {
    throw std::invalid_argument("incremental decoding needs a decoder: this model is encoder_only");
  }
  const std::int64_t d = config.d_model;
  Tensor memory;
  if (config.architecture == Architecture::encoder_decoder) {
    Tensor device_src = model.upload_ids(src, "src");
    batch_ = device_src.dim(0);
    src_padding_ = model.padding_mask(src);
    host_src_padding_ = backend.download(src_padding_);
    ForwardContext ctx{backend, false, {}};
    memory = model.encode(ctx, device_src, &src_padding_).view({batch_, device_src.dim(1), d});
  } else if (batch_ < 1) {
    throw std::invalid_argument("incremental decoding of a decoder_only model needs batch >= 1");
  }
  for (std::int64_t b = 0; b < batch_; ++b) source_of_row_.push_back(b);
  const std::int64_t width = config.attention_width();  // of the cached keys and values
  for (auto& layer : model.decoder_layers()) {
    LayerCache cache;
    cache.self_k = backend.empty({batch_, 0, width}, backend.dtype());
    cache.self_v = backend.empty({batch_, 0, width}, backend.dtype());
    if (MultiHeadAttention* cross = layer->cross_attn()) {
      cache.cross_k = cross->project_k(backend, memory, 0);
      cache.cross_v = cross->project_v(backend, memory);
    }
    caches_.push_back(std::move(cache));
  }
}

namespace {

Tensor appended(Backend& backend, const Tensor& cache, const Tensor& rows) {
  Tensor out = backend.empty({cache.dim(0), cache.dim(1) + rows.dim(1), cache.dim(2)}, backend.dtype());
  backend.concat_time(cache, rows, out);
  return out;
}

}  // namespace

Tensor IncrementalDecoder::step(const Tensor& tokens) {
  Backend& backend = model_.backend();
  const std::int64_t d = model_.config().d_model;
  if (tokens.numel() != batch_) {
    throw std::invalid_argument("IncrementalDecoder::step: " + std::to_string(tokens.numel()) + " tokens for a batch of " +
                                std::to_string(batch_));
  }
  if (position_ >= model_.config().max_len && model_.config().positional == Positional::learned) {
    throw std::out_of_range("IncrementalDecoder::step: position " + std::to_string(position_) +
                            " is past max_len " + std::to_string(model_.config().max_len));
  }
  ForwardContext ctx{backend, false, {}};
  Tensor ids = model_.upload_ids(tokens.view({batch_, 1}), "tokens");
  Tensor y = model_.target_embedding().forward(ctx, ids, position_);  // [B, d]
  auto& layers = model_.decoder_layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    DecoderLayer& layer = *layers[i];
    LayerCache& cache = caches_[i];
    Residual& self_res = layer.residual(0);
    Tensor in = self_res.input(ctx, y).view({batch_, 1, d});
    MultiHeadAttention& self_attn = layer.self_attn();
    cache.self_k = appended(backend, cache.self_k, self_attn.project_k(backend, in, position_));
    cache.self_v = appended(backend, cache.self_v, self_attn.project_v(backend, in));
    // One query aligned to the end of the keys: the causal mask lets it see every cached key.
    y = self_res.output(ctx, y, self_attn.attend(backend, self_attn.project_q(backend, in, position_), cache.self_k,
                                                 cache.self_v, nullptr));
    if (MultiHeadAttention* cross = layer.cross_attn()) {
      Residual& cross_res = layer.residual(1);
      Tensor q = cross->project_q(backend, cross_res.input(ctx, y).view({batch_, 1, d}), position_);
      y = cross_res.output(ctx, y, cross->attend(backend, q, cache.cross_k, cache.cross_v, &src_padding_));
    }
    Residual& ffn_res = layer.residual(layer.cross_attn() ? 2 : 1);
    y = ffn_res.output(ctx, y, layer.ffn().forward(backend, ffn_res.input(ctx, y)));
  }
  if (Norm* norm = model_.decoder_norm()) y = norm->forward(backend, y);
  ++position_;
  return model_.output_projection().forward(backend, y);
}

void IncrementalDecoder::reorder(const Tensor& rows) {
  Backend& backend = model_.backend();
  Tensor device_rows = backend.upload(rows);
  auto select = [&](Tensor& t) {
    if (!t.defined()) return;
    Shape shape = t.shape();
    shape[0] = device_rows.dim(0);
    Tensor out = backend.empty(shape, backend.dtype());
    backend.select_batch(t, device_rows, out);
    t = out;
  };
  std::vector<std::int64_t> source_of_row(static_cast<std::size_t>(rows.numel()));
  for (std::int64_t i = 0; i < rows.numel(); ++i) {
    const auto from = static_cast<std::int64_t>(rows.at(i));
    if (from < 0 || from >= batch_) {
      throw std::out_of_range("IncrementalDecoder::reorder: rows[" + std::to_string(i) + "] = " +
                              std::to_string(from) + " is not a row of the batch of " + std::to_string(batch_));
    }
    source_of_row[static_cast<std::size_t>(i)] = source_of_row_[static_cast<std::size_t>(from)];
  }
  const bool same_sources = source_of_row == source_of_row_;
  source_of_row_ = std::move(source_of_row);
  for (LayerCache& cache : caches_) {
    select(cache.self_k);
    select(cache.self_v);
    if (same_sources) continue;
    select(cache.cross_k);
    select(cache.cross_v);
  }
  if (host_src_padding_.defined() && !same_sources) {
    // The mask is int32, which select_batch (floating activations) does not take: reorder it on
    // the host, where it was made.
    const std::int64_t width = host_src_padding_.dim(1);
    Tensor selected = Tensor::empty({rows.numel(), width}, DType::i32);
    for (std::int64_t i = 0; i < rows.numel(); ++i) {
      const auto from = static_cast<std::int64_t>(rows.at(i));
      for (std::int64_t j = 0; j < width; ++j) selected.set(i * width + j, host_src_padding_.at(from * width + j));
    }
    host_src_padding_ = selected;
    src_padding_ = backend.upload(selected);
  }
  batch_ = device_rows.dim(0);
}

}  // namespace trepro
