// A whole model on each backend against the float64 reference on the same parameters and
// batch: logits, loss and every parameter gradient within Check::model_vs_reference at the
// model's widest sum. The parameters are copied from the tested backend, so both sides start
// from identical values and only the arithmetic differs.
#include <cmath>

#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 23;
constexpr double kLabelSmoothing = 0.1;

class ModelVsReferenceTest : public BackendTest {
 protected:
  void expect_agreement(const ModelConfig& config) {
    Backend& b = backend();
    Backend& ref = reference();
    Transformer model(config, b), truth(config, ref);
    model.initialize(kSeed);
    for (Parameter& p : model.parameters().all()) {
      truth.parameters().at(p.spec.name).value = ref.upload(b.download(p.value));
    }
    const Batch batch = tiny_batch(config, kSeed);
    const Tolerance tol = tolerance(Check::model_vs_reference, b.dtype(), widest_sum(config));

    model.parameters().zero_grad(b);
    truth.parameters().zero_grad(ref);
    const Tensor logits = model.forward(batch);
    const Tensor expected_logits = truth.forward(batch);
    EXPECT_TRUE(all_close("logits", b, logits, ref, expected_logits, tol));
    const double loss = model.loss(batch.labels, kLabelSmoothing, SmoothingForm::uniform);
    const double expected_loss = truth.loss(batch.labels, kLabelSmoothing, SmoothingForm::uniform);
    EXPECT_LE(std::abs(loss - expected_loss), tol.atol + tol.rtol * std::abs(expected_loss))
        << "loss " << loss << ", expected " << expected_loss;
    model.backward();
    truth.backward();
    for (Parameter& p : model.parameters().all()) {
      EXPECT_TRUE(
          all_close(p.spec.name + ".grad", b, p.grad, ref, truth.parameters().at(p.spec.name).grad, tol));
    }
  }
};

TEST_P(ModelVsReferenceTest, PaperLayoutAgreesWithFloat64) {
  if (backend().name() == reference().name()) GTEST_SKIP() << "the float64 reference is the ground truth";
  expect_agreement(tiny_config());
}

TEST_P(ModelVsReferenceTest, PreLnSwiGluLearnedAgreesWithFloat64) {
  if (backend().name() == reference().name()) GTEST_SKIP() << "the float64 reference is the ground truth";
  ModelConfig config = with_activation(tiny_config(), Activation::none);
  config.norm = NormPlacement::pre;
  config.positional = Positional::learned;
  expect_agreement(config);
}

TEST_P(ModelVsReferenceTest, DecoderOnlyRopeRmsNormAgreesWithFloat64) {
  if (backend().name() == reference().name()) GTEST_SKIP() << "the float64 reference is the ground truth";
  ModelConfig config = with_architecture(tiny_config(), Architecture::decoder_only);
  config.positional = Positional::rope;
  config.norm_kind = NormKind::rms;
  config.activation = Activation::gelu;
  expect_agreement(config);
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ModelVsReferenceTest);

}  // namespace
}  // namespace trepro::testing
