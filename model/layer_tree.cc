#include "model/layer_tree.h"

namespace trepro {

LayerTree layer_tree(const ModelConfig& c) {
  const bool has_encoder = c.architecture != Architecture::decoder_only;
  const bool has_decoder = c.architecture != Architecture::encoder_only;
  const bool pre = c.norm == NormPlacement::pre;
  LayerTree tree;
  tree.tied_embeddings = c.tie_embeddings;
  const auto table = [&](const char* untied) { return std::string(c.tie_embeddings ? "embed.weight" : untied); };
  if (has_encoder) tree.source_table = table("src_embed.weight");
  if (has_decoder) tree.target_table = table("tgt_embed.weight");
  tree.output_table = table("out_proj.weight");
  if (c.positional == Positional::learned) tree.positions = "pos_embed.weight";
  if (has_encoder) tree.encoder = StackTree{"encoder", c.encoder_layers, false, pre};
  if (has_decoder) {
    tree.decoder = StackTree{"decoder", c.decoder_layers, c.architecture == Architecture::encoder_decoder, pre};
  }
  return tree;
}

}  // namespace trepro
