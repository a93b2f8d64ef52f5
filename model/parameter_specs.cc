#include "model/parameter_specs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/layer_tree.h"

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
  const LayerTree tree = layer_tree(c);
  SpecList specs(c);
  // Each table once: tied, the source, target and output share one.
  std::vector<std::string> tables;
  for (const std::string& table : {tree.source_table, tree.target_table, tree.output_table}) {
    if (!table.empty() && std::find(tables.begin(), tables.end(), table) == tables.end()) tables.push_back(table);
  }
  for (const std::string& table : tables) {
    specs.add(table, {c.vocab_size, c.d_model}, tree.tied_embeddings ? Init::embed_normal : Init::xavier_uniform);
  }
  if (tree.positions) specs.add(*tree.positions, {c.max_len, c.d_model}, Init::xavier_uniform);
  for (const std::optional<StackTree>& stack : {tree.encoder, tree.decoder}) {
    if (!stack) continue;
    for (std::int64_t i = 0; i < stack->layers; ++i) specs.layer(stack->layer(i), stack->cross_attention);
    if (stack->final_norm) specs.norm(stack->norm());
  }
  return specs.take();
}

}  // namespace trepro
