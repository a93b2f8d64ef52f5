#include "model/decoding_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace trepro {

namespace {

// P [heads, Tq, Tk] of one attention module's last forward, for batch row 0.
Tensor probabilities(Backend& backend, const MultiHeadAttention& attention) {
  const Tensor q = backend.download(attention.last_q());  // [1, Tq, heads x d_head]
  const Tensor k = backend.download(attention.last_k());  // [1, Tk, heads x d_head]
  const Tensor padding = attention.last_key_padding().defined() ? backend.download(attention.last_key_padding())
                                                                 : Tensor();
  const std::int64_t heads = attention.heads(), tq = q.dim(1), tk = k.dim(1), width = q.dim(2), dk = width / heads;
  Tensor out = Tensor::empty({heads, tq, tk}, DType::f64);
  std::vector<double> scores(static_cast<std::size_t>(tk));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < tq; ++i) {
      double max_score = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < tk; ++j) {
        // The causal mask aligns the last query with the last key, as the attention op does.
        const bool hidden = (attention.causal() && j > i + (tk - tq)) || (padding.defined() && padding.at(j) != 0.0);
        double s = -std::numeric_limits<double>::infinity();
        if (!hidden) {
          s = 0.0;
          for (std::int64_t c = h * dk; c < (h + 1) * dk; ++c) s += q.at(i * width + c) * k.at(j * width + c);
          s *= attention.scale();
        }
        scores[static_cast<std::size_t>(j)] = s;
        max_score = std::max(max_score, s);
      }
      double sum = 0.0;
      for (double& s : scores) sum += (s = std::isinf(s) ? 0.0 : std::exp(s - max_score));
      for (std::int64_t j = 0; j < tk; ++j) out.set((h * tq + i) * tk + j, scores[static_cast<std::size_t>(j)] / sum);
    }
  }
  return out;
}

}  // namespace

AttentionMaps attention_maps(Transformer& model, const Batch& batch) {
  const Tensor& rows = batch.src.defined() ? batch.src : batch.tgt;
  if (!rows.defined() || rows.rank() != 2 || rows.dim(0) != 1) {
    throw std::invalid_argument("attention_maps: expected one sentence (ids [1, T])");
  }
  Batch inputs{batch.src, batch.tgt, Tensor()};
  model.forward(inputs);
  Backend& backend = model.backend();
  AttentionMaps maps;
  for (auto& layer : model.encoder_layers()) maps.encoder_self.push_back(probabilities(backend, layer->self_attn()));
  for (auto& layer : model.decoder_layers()) {
    maps.decoder_self.push_back(probabilities(backend, layer->self_attn()));
    if (MultiHeadAttention* cross = layer->cross_attn()) maps.decoder_cross.push_back(probabilities(backend, *cross));
  }
  return maps;
}

}  // namespace trepro
