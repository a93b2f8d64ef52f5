// Layer goldens: model/ EncoderLayer and DecoderLayer (Post-LN and Pre-LN, ReLU and GELU, and
// attention of heads x head_dim != d_model) against nn.TransformerEncoderLayer /
// nn.TransformerDecoderLayer: the output, the gradients of the inputs and of every parameter.
#include <gtest/gtest.h>

#include "conformance/golden/golden_case.h"
#include "conformance/support/backend_fixture.h"
#include "model/layers.h"

namespace trepro::golden {
namespace {

class GoldenLayerTest : public testing::BackendTest {};

ModelConfig layer_config(const nlohmann::json& p) {
  ModelConfig c;
  c.vocab_size = 2;  // unused: only layer 0 of one stack runs
  c.d_model = p.at("d_model");
  c.heads = p.at("heads");
  c.head_dim = p.value("head_dim", 0);  // the *_head_dim cases: heads x head_dim != d_model
  c.d_ff = p.at("d_ff");
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.norm = p.at("norm") == "pre" ? NormPlacement::pre : NormPlacement::post;
  c.activation = p.at("activation") == "gelu" ? Activation::gelu : Activation::relu;
  c.layer_norm_eps = p.at("layer_norm_eps");
  c.dropout = 0.0;
  return c;
}

// Sets every "param.<name>" of the file; returns the names, whose gradients the test checks.
std::vector<std::string> load_layer_parameters(Backend& b, Parameters& params, const SafetensorsFile& f) {
  std::vector<std::string> names;
  for (const auto& [key, tensor] : f.tensors) {
    if (!key.starts_with("param.")) continue;
    names.push_back(key.substr(6));
    params.at(names.back()).value = b.upload(tensor);
  }
  return names;
}

// [B, T, d] host tensor -> [B*T, d] on the backend.
Tensor rows(Backend& b, const SafetensorsFile& f, const std::string& name) {
  Tensor t = upload(b, f, name);
  return t.view({t.dim(0) * t.dim(1), t.dim(2)});
}

void check_parameter_grads(Comparison& cmp, Backend& b, Parameters& params, const std::vector<std::string>& names) {
  for (const std::string& name : names) EXPECT_TRUE(cmp.check("expected.grad." + name, b.download(params.at(name).grad)));
}

TEST_P(GoldenLayerTest, EncoderLayer) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("layer")) {
    if (g.params().at("stack") != "encoder") continue;
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const ModelConfig config = layer_config(g.params());
    Parameters params(config, b);
    const std::vector<std::string> names = load_layer_parameters(b, params, f);
    EncoderLayer layer(params, config, 0);
    Tensor x = rows(b, f, "input.x");
    Tensor padding = upload(b, f, "input.src_key_padding");
    Tensor y = layer.forward(ForwardContext{b, false, {}}, x, padding.dim(0), &padding);
    EXPECT_TRUE(cmp.check("expected.y", y));
    Tensor dx = layer.backward(b, rows(b, f, "cotangent.y"));
    EXPECT_TRUE(cmp.check("expected.grad.x", dx));
    check_parameter_grads(cmp, b, params, names);
    cmp.report();
  }
}

TEST_P(GoldenLayerTest, DecoderLayer) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("layer")) {
    if (g.params().at("stack") != "decoder") continue;
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const ModelConfig config = layer_config(g.params());
    Parameters params(config, b);
    const std::vector<std::string> names = load_layer_parameters(b, params, f);
    DecoderLayer layer(params, config, 0, true);
    Tensor tgt = rows(b, f, "input.tgt"), memory = rows(b, f, "input.memory");
    Tensor tgt_padding = upload(b, f, "input.tgt_key_padding"), src_padding = upload(b, f, "input.src_key_padding");
    Tensor y = layer.forward(ForwardContext{b, false, {}}, tgt, memory, tgt_padding.dim(0), &tgt_padding, &src_padding);
    EXPECT_TRUE(cmp.check("expected.y", y));
    Tensor dmemory = b.zeros(memory.shape(), b.dtype());
    Tensor dtgt = layer.backward(b, rows(b, f, "cotangent.y"), dmemory);
    EXPECT_TRUE(cmp.check("expected.grad.tgt", dtgt));
    EXPECT_TRUE(cmp.check("expected.grad.memory", dmemory));
    check_parameter_grads(cmp, b, params, names);
    cmp.report();
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(GoldenLayerTest);

}  // namespace
}  // namespace trepro::golden
