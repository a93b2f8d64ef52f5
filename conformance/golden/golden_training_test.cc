// Training golden: model/ Trainer (Adam, the Noam schedule, label smoothing) for 20 steps against
// torch.optim.Adam + LambdaLR on the same fixed batches: every step's loss and learning rate, and
// the final weights.
#include <gtest/gtest.h>

#include "conformance/golden/golden_case.h"
#include "conformance/support/backend_fixture.h"
#include "model/trainer.h"

namespace trepro::golden {
namespace {

class GoldenTrainingTest : public testing::BackendTest {};

TEST_P(GoldenTrainingTest, AdamNoamLabelSmoothing) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("training")) {
    SCOPED_TRACE(g.label());
    const Config config = load_config(g.path("config"));
    Transformer model(config.model, b);
    model.parameters().load(b, g.read("weights"), g.path("weights"));
    const SafetensorsFile batches = g.read("batches");
    const std::int64_t steps = g.params().at("steps"), count = g.params().at("batches");
    Trainer trainer(model, config);
    std::vector<double> losses, rates;
    for (std::int64_t step = 0; step < steps; ++step) {
      const std::string i = std::to_string(step % count);
      const Batch batch{batches.tensors.at("src." + i), batches.tensors.at("tgt." + i),
                        batches.tensors.at("labels." + i)};
      const StepResult result = trainer.step(batch);
      losses.push_back(result.loss);
      rates.push_back(result.learning_rate);
    }

    const SafetensorsFile expected = g.read("expected");
    Comparison cmp(g, b, expected);
    EXPECT_TRUE(cmp.check("loss", Tensor::from_values({steps}, DType::f64, losses)));
    // Both sides compute the rate in double, whatever the backend.
    EXPECT_TRUE(cmp.check_with("lr", Tensor::from_values({steps}, DType::f64, rates), g.tolerance(DType::f64), true));
    const bool float32 = g.dtype == DType::f32 || b.dtype() == DType::f32;
    const double zero_gradient_atol = g.params().at("zero_gradient_atol").at(float32 ? "float32" : "float64");
    const auto& zero_gradient = g.params().at("zero_gradient_parameters");
    for (const auto& [name, value] : model.parameters().values(b)) {
      const bool noise_only = std::find(zero_gradient.begin(), zero_gradient.end(), name) != zero_gradient.end();
      EXPECT_TRUE(noise_only ? cmp.check_with("final." + name, value, {zero_gradient_atol, 0.0}, false)
                             : cmp.check("final." + name, value));
    }
    cmp.report();
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(GoldenTrainingTest);

}  // namespace
}  // namespace trepro::golden
