#include "model/parameter_specs.h"

#include <stdexcept>
#include <string>

namespace trepro {

namespace {

class SpecList {
 public:
  explicit SpecList(const ModelConfig& config) : config_(config) {}

  // Throws naming the tensor when its size, or the model's, does not fit in an int64: a config of
  // huge widths must be an error before anything is allocated or initialized.
  void add(const std::string& name, Shape shape, Init init) {
    std::int64_t elements = 0;
    try {
      elements = shape_numel(shape);
    } catch (const std::exception& e) {
      throw std::invalid_argument("model: parameter " + name + ": " + e.what());
    }
    if (__builtin_add_overflow(total_, elements, &total_)) {
      throw std::invalid_argument("model: parameter " + name + " of shape " + shape_string(shape) +
                                  " takes the parameter count past what an int64 counts");
    }
    specs_.push_back({name, std::move(shape), init});
  }

  void linear(const std::string& prefix, std::int64_t out, std::int64_t in) {
    add(prefix + ".weight", {out, in}, Init::xavier_uniform);
    add(prefix + ".bias", {out}, Init::zeros);
  }

  void norm(const std::string& prefix) {
    add(prefix + ".weight", {config_.d_model}, Init::ones);
    if (config_.norm_kind == NormKind::layer) add(prefix + ".bias", {config_.d_model}, Init::zeros);
  }

  void attention(const std::string& prefix) {
    // q, k and v map d_model to heads x head_dim, the output projection maps it back.
    const std::int64_t width = config_.attention_width();
    for (const char* proj : {"q_proj", "k_proj", "v_proj"}) linear(prefix + "." + proj, width, config_.d_model);
    linear(prefix + ".o_proj", config_.d_model, width);
  }

  void ffn(const std::string& prefix) {
    linear(prefix + ".w1", config_.d_ff, config_.d_model);
    linear(prefix + ".w2", config_.d_model, config_.d_ff);
    if (config_.swiglu) linear(prefix + ".w3", config_.d_ff, config_.d_model);
  }

  // An encoder layer, or a decoder layer with (cross_attention) or without it (decoder_only).
  void layer(const std::string& prefix, bool cross_attention) {
    attention(prefix + ".self_attn");
    if (cross_attention) attention(prefix + ".cross_attn");
    ffn(prefix + ".ffn");
    const int norms = cross_attention ? 3 : 2;
    for (int i = 1; i <= norms; ++i) norm(prefix + ".norm" + std::to_string(i));
  }

  std::vector<ParameterSpec> take() { return std::move(specs_); }

 private:
  const ModelConfig& config_;
  std::vector<ParameterSpec> specs_;
  std::int64_t total_ = 0;
};

}  // namespace

std::vector<ParameterSpec> parameter_specs(const ModelConfig& c) {
  SpecList specs(c);
  const bool has_encoder = c.architecture != Architecture::decoder_only;
  const bool has_decoder = c.architecture != Architecture::encoder_only;
  if (c.tie_embeddings) {
    specs.add("embed.weight", {c.vocab_size, c.d_model}, Init::embed_normal);
  } else {
    if (has_encoder) specs.add("src_embed.weight", {c.vocab_size, c.d_model}, Init::xavier_uniform);
    if (has_decoder) specs.add("tgt_embed.weight", {c.vocab_size, c.d_model}, Init::xavier_uniform);
    specs.add("out_proj.weight", {c.vocab_size, c.d_model}, Init::xavier_uniform);
  }
  if (c.positional == Positional::learned) specs.add("pos_embed.weight", {c.max_len, c.d_model}, Init::xavier_uniform);
  const bool pre = c.norm == NormPlacement::pre;
  for (std::int64_t i = 0; i < c.encoder_layers; ++i) {
    specs.layer("encoder.layers." + std::to_string(i), false);
  }
  if (has_encoder && pre) specs.norm("encoder.norm");
  const bool cross = c.architecture == Architecture::encoder_decoder;
  for (std::int64_t i = 0; i < c.decoder_layers; ++i) {
    specs.layer("decoder.layers." + std::to_string(i), cross);
  }
  if (has_decoder && pre) specs.norm("decoder.norm");
  return specs.take();
}

}  // namespace trepro
