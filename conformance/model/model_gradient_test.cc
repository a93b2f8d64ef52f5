// The whole model's backward against central differences of its forward + loss, for every
// parameter tensor, in every layout the model supports: if any op's backward, any residual or
// norm path, a tied weight's gradient sum or the loss gradient were wrong, some element of some
// parameter's gradient would be off by O(1) relative.
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/model/relu_kink_watch.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"
#include "registry/registry.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 7;
constexpr double kLabelSmoothing = 0.1;
// Elements checked per parameter tensor (evenly spaced; all of the small ones).
constexpr std::int64_t kElementsPerTensor = 20;

struct GradientCase {
  std::string name;
  ModelConfig config;
};

void PrintTo(const GradientCase& c, std::ostream* os) { *os << c.name; }

std::vector<GradientCase> gradient_cases() {
  std::vector<GradientCase> cases;
  const std::pair<NormPlacement, const char*> norms[] = {{NormPlacement::post, "post"},
                                                         {NormPlacement::pre, "pre"}};
  const std::pair<Activation, const char*> activations[] = {
      {Activation::relu, "relu"}, {Activation::gelu, "gelu"}, {Activation::none, "swiglu"}};
  const std::pair<Positional, const char*> positions[] = {{Positional::sinusoidal, "sinusoidal"},
                                                          {Positional::learned, "learned"}};
  for (const auto& [norm, norm_name] : norms) {
    for (const auto& [activation, activation_name] : activations) {
      for (const auto& [positional, positional_name] : positions) {
        ModelConfig c = with_activation(tiny_config(), activation);
        c.norm = norm;
        c.positional = positional;
        cases.push_back({std::string(norm_name) + "_" + activation_name + "_" + positional_name, c});
      }
    }
  }
  // One change at a time from the paper's layout (Post-LN, ReLU, sinusoidal, tied, LayerNorm).
  ModelConfig rope = tiny_config();
  rope.positional = Positional::rope;
  ModelConfig rms = tiny_config();
  rms.norm_kind = NormKind::rms;
  ModelConfig untied = tiny_config();
  untied.tie_embeddings = false;
  cases.push_back({"rope", rope});
  cases.push_back({"rmsnorm", rms});
  cases.push_back({"untied", untied});
  // Attention narrower and wider than d_model 8 (Table 3 rows (A) and (B)): the projections are
  // not square, and with 3 heads d_model is not a multiple of the head count.
  cases.push_back({"head_dim_narrower", with_head_dim(tiny_config(), 3, 2)});
  cases.push_back({"head_dim_wider", with_head_dim(tiny_config(), 2, 6)});
  ModelConfig head_dim_rope = with_head_dim(tiny_config(), 3, 2);
  head_dim_rope.positional = Positional::rope;
  cases.push_back({"head_dim_rope", head_dim_rope});
  cases.push_back({"decoder_only", with_architecture(tiny_config(), Architecture::decoder_only)});
  cases.push_back({"encoder_only", with_architecture(tiny_config(), Architecture::encoder_only)});
  return cases;
}

class ModelGradientTest : public ::testing::TestWithParam<std::tuple<std::string, GradientCase>> {};

TEST_P(ModelGradientTest, EveryParameterGradientMatchesCentralDifferences) {
  const auto& [backend_name, gradient_case] = GetParam();
  std::unique_ptr<Backend> inner = make_backend(backend_name);
  ReluKinkWatch b(*inner);
  Transformer model(gradient_case.config, b);
  model.initialize(kSeed);
  const Batch batch = tiny_batch(gradient_case.config, kSeed);

  model.parameters().zero_grad(b);
  b.start_reference();
  model.forward(batch);
  b.stop_reference();
  model.loss(batch.labels, kLabelSmoothing, SmoothingForm::uniform);
  model.backward();

  // Re-runs forward + loss reading the parameter check_gradient perturbs in place.
  auto loss = [&] {
    model.forward(batch);
    return model.loss(batch.labels, kLabelSmoothing, SmoothingForm::uniform);
  };
  for (Parameter& p : model.parameters().all()) {
    const Tensor analytic = b.download(p.grad);
    // A parameter the loss does not reach would pass the check trivially (0 == 0).
    EXPECT_GT(b.sum_squares(p.grad), 0.0) << p.spec.name << " receives no gradient";
    EXPECT_TRUE(check_gradient(p.spec.name, b, p.value, analytic, loss, kElementsPerTensor));
  }
  EXPECT_EQ(b.kink_crossings(), 0) << "a perturbed forward crossed a ReLU kink, so a failure above may be a "
                                      "false alarm of central differences: pick another kSeed";
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<std::string, GradientCase>>& info) {
  const auto& [backend_name, gradient_case] = info.param;
  return backend_test_name({backend_name, info.index}) + "_" + gradient_case.name;
}

INSTANTIATE_TEST_SUITE_P(DoubleBackends, ModelGradientTest,
                         ::testing::Combine(::testing::ValuesIn(double_backend_names()),
                                            ::testing::ValuesIn(gradient_cases())),
                         case_name);

}  // namespace
}  // namespace trepro::testing
