// The model's parameters by name, shape and initialisation: the naming contract a PyTorch model
// maps onto by renaming only (see docs/conformance.md, "Parameter names").
//
//   embed.weight [V, d]                      when tie_embeddings (source, target, output)
//   src_embed.weight, tgt_embed.weight [V, d], out_proj.weight [V, d]   otherwise
//   pos_embed.weight [max_len, d]            positional == learned
//   {encoder,decoder}.layers.{i}.{self_attn,cross_attn}.{q,k,v}_proj.{weight [w, d], bias [w]},
//       .o_proj.{weight [d, w], bias [d]}   w = heads x head_dim (d unless head_dim is set)
//   {encoder,decoder}.layers.{i}.ffn.{w1 [d_ff, d], w2 [d, d_ff], w3 [d_ff, d] (swiglu)}.{weight,bias}
//   {encoder,decoder}.layers.{i}.norm{1,2,3}.{weight, bias (layernorm only)}
//   {encoder,decoder}.norm.{weight,bias}     Pre-LN only
// Linear weights are [out, in] as torch.nn.Linear; the output projection has no bias.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"

namespace trepro {

enum class Init {
  xavier_uniform,  // U(-a, a), a = sqrt(6 / (fan_in + fan_out)): every matrix, as torch.nn.Transformer
  embed_normal,    // N(0, d^-1/2): the tied embedding, so that sqrt(d) * embedding has unit scale
  zeros,           // biases
  ones,            // norm gains
};

struct ParameterSpec {
  std::string name;
  Shape shape;
  Init init;
};

// In a fixed order: embeddings, encoder layers, encoder norm, decoder layers, decoder norm.
std::vector<ParameterSpec> parameter_specs(const ModelConfig& config);

}  // namespace trepro
