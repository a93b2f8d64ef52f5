// The model's structure, decided once from its config: its embedding tables (one when tied), the
// learned positions, and each stack's layers, cross-attention and final norm (Pre-LN). The
// parameter specs (parameter_specs.cc) and the modules (transformer.cc) both walk this tree, so
// the names the forward pass looks up are the names the specs declared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config.h"

namespace trepro {

struct StackTree {
  std::string name;              // "encoder" or "decoder"
  std::int64_t layers = 0;
  bool cross_attention = false;  // decoder layers of an encoder-decoder attend to the encoder
  bool final_norm = false;       // Pre-LN stacks end in a norm

  std::string layer(std::int64_t i) const { return name + ".layers." + std::to_string(i); }
  std::string norm() const { return name + ".norm"; }
};

struct LayerTree {
  bool tied_embeddings = false;  // one table, "embed.weight", for source, target and output
  std::string source_table;      // empty without an encoder
  std::string target_table;      // empty without a decoder
  std::string output_table;
  std::optional<std::string> positions;  // the learned positions' table
  std::optional<StackTree> encoder, decoder;
};

LayerTree layer_tree(const ModelConfig& config);

}  // namespace trepro
