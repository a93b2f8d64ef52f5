// Whole-model goldens: logits, loss and every gradient of model/ Transformer against the PyTorch
// model of golden/gen/model.py, in process and through the `trepro forward` contract (the built
// CLI, run once per backend).
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "conformance/golden/golden_case.h"
#include "conformance/golden/golden_weights.h"
#include "conformance/support/backend_fixture.h"
#include "model/transformer.h"

namespace trepro::golden {
namespace {

namespace fs = std::filesystem;

class GoldenModelTest : public testing::BackendTest {};

// The committed weights, or (paper-shaped case) the golden formula's, checked against the
// manifest's hash of the weights PyTorch used.
std::map<std::string, Tensor> case_weights(const GoldenCase& g, const Config& config) {
  if (g.has_file("weights")) return g.read("weights").tensors;
  std::map<std::string, Tensor> weights = golden_weights(config.model, g.dtype);
  EXPECT_EQ(data_sha256(weights), g.params().at("weights_data_sha256").get<std::string>())
      << g.label() << ": the C++ golden parameter formula differs from golden/gen/values.py";
  return weights;
}

// A decoder-only case has no src file, an encoder-only one no tgt file: their models read none.
Tensor ids(const GoldenCase& g, const std::string& role) {
  return g.has_file(role) ? g.read(role).tensors.at(role) : Tensor();
}

Tensor gather(const Tensor& values, const Tensor& index) {
  Tensor out = Tensor::empty({index.numel()}, DType::f64);
  for (std::int64_t i = 0; i < index.numel(); ++i) out.set(i, values.at(static_cast<std::int64_t>(index.at(i))));
  return out;
}

double l2_norm(const Tensor& t) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < t.numel(); ++i) sum += t.at(i) * t.at(i);
  return std::sqrt(sum);
}

// `outputs` are host tensors named as `trepro forward --grads` writes them.
void check_outputs(const GoldenCase& g, Backend& b, const std::map<std::string, Tensor>& outputs) {
  const SafetensorsFile expected = g.read("expected");
  Comparison cmp(g, b, expected);
  auto output = [&](const std::string& name) -> const Tensor* {
    auto it = outputs.find(name);
    if (it == outputs.end()) ADD_FAILURE() << g.label() << ": the model wrote no " << name;
    return it == outputs.end() ? nullptr : &it->second;
  };
  std::size_t grads_checked = 0;
  for (const auto& [name, tensor] : expected.tensors) {
    if (name == "logits" || name == "loss" || name.starts_with("grad.")) {
      if (const Tensor* actual = output(name)) {
        EXPECT_TRUE(cmp.check(name, *actual));
      }
      grads_checked += name.starts_with("grad.");
    } else if (name.starts_with("grad_sample.")) {
      const std::string param = name.substr(std::string("grad_sample.").size());
      if (const Tensor* actual = output("grad." + param)) {
        EXPECT_TRUE(cmp.check(name, gather(*actual, expected.tensors.at("grad_index." + param))));
        EXPECT_TRUE(cmp.check_scalar("grad_norm." + param, l2_norm(*actual)));
      }
      ++grads_checked;
    }
  }
  std::size_t grads_written = 0;
  for (const auto& [name, tensor] : outputs) grads_written += name.starts_with("grad.");
  EXPECT_EQ(grads_checked, grads_written) << g.label() << ": the model's parameters differ from PyTorch's";
  cmp.report();
}

TEST_P(GoldenModelTest, TransformerInProcess) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("model")) {
    SCOPED_TRACE(g.label());
    const Config config = load_config(g.path("config"));
    Transformer model(config.model, b);
    model.parameters().load(b, SafetensorsFile{case_weights(g, config), {}}, g.label() + " weights");
    const Batch batch{ids(g, "src"), ids(g, "tgt"), ids(g, "labels")};
    const Tensor& positions = batch.tgt.defined() ? batch.tgt : batch.src;
    std::map<std::string, Tensor> outputs;
    outputs["logits"] =
        b.download(model.forward(batch)).view({positions.dim(0), positions.dim(1), config.model.vocab_size});
    const double loss = model.loss(batch.labels, config.train.label_smoothing, config.train.label_smoothing_form);
    outputs["loss"] = Tensor::from_values({}, DType::f64, {loss});
    model.parameters().zero_grad(b);
    model.backward();
    for (auto& [name, grad] : model.parameters().grads(b)) outputs["grad." + name] = grad;
    check_outputs(g, b, outputs);
  }
}

// A fresh folder under the system's temporary directory, removed at the end of the scope.
struct TemporaryFolder {
  fs::path path;
  TemporaryFolder() {
    std::string pattern = (fs::temp_directory_path() / "trepro-golden-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TemporaryFolder() { fs::remove_all(path); }
};

TEST_P(GoldenModelTest, TreproForwardContract) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("model")) {
    SCOPED_TRACE(g.label());
    TemporaryFolder tmp;
    std::string weights = g.has_file("weights") ? g.path("weights") : (tmp.path / "weights.safetensors").string();
    if (!g.has_file("weights")) write_safetensors(weights, case_weights(g, load_config(g.path("config"))));
    const std::string out = (tmp.path / "out.safetensors").string();
    // `trepro forward` refuses --src for a decoder-only model and --tgt for an encoder-only one,
    // whose cases have no such file.
    const std::string src = g.has_file("src") ? "' --src '" + g.path("src") : "";
    const std::string tgt = g.has_file("tgt") ? "' --tgt '" + g.path("tgt") : "";
    const std::string command = std::string("'") + TREPRO_CLI + "' forward --config '" + g.path("config") +
                                "' --weights '" + weights + src + tgt + "' --labels '" + g.path("labels") +
                                "' --grads --backend " + b.name() + " --out '" + out + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    check_outputs(g, b, read_safetensors(out).tensors);
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(GoldenModelTest);

}  // namespace
}  // namespace trepro::golden
