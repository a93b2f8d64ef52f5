// ForwardingBackend (core/forwarding_backend.h), the base of the decorators: one that overrides
// nothing is its inner backend. A whole model (forward with dropout on, loss, backward) through
// it gives the inner backend's logits, loss and gradients bit for bit, so every op reaches the
// inner backend with its arguments unchanged.
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"
#include "core/forwarding_backend.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 31;
constexpr Tolerance kBitIdentical{0.0, 0.0};

class ForwardingBackendTest : public BackendTest {
 protected:
  void expect_identical(const ModelConfig& config) {
    Backend& inner = backend();
    ForwardingBackend forwarding(inner);
    EXPECT_EQ(forwarding.name(), inner.name());
    EXPECT_EQ(forwarding.dtype(), inner.dtype());
    EXPECT_EQ(forwarding.device(), inner.device());
    Transformer direct(config, inner), forwarded(config, forwarding);
    direct.initialize(kSeed);
    forwarded.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed);
    const DropoutStream dropout{kSeed, 1, 0};

    direct.parameters().zero_grad(inner);
    forwarded.parameters().zero_grad(forwarding);
    const Tensor logits = direct.forward(batch, /*training=*/true, dropout);
    const Tensor forwarded_logits = forwarded.forward(batch, /*training=*/true, dropout);
    EXPECT_TRUE(all_close("logits", inner, forwarded_logits, inner, logits, kBitIdentical));
    EXPECT_EQ(forwarded.loss(batch.labels, 0.1, SmoothingForm::uniform),
              direct.loss(batch.labels, 0.1, SmoothingForm::uniform));
    direct.backward();
    forwarded.backward();
    for (Parameter& p : direct.parameters().all()) {
      EXPECT_TRUE(all_close(p.spec.name + ".grad", inner, forwarded.parameters().at(p.spec.name).grad, inner, p.grad,
                            kBitIdentical));
    }
  }
};

TEST_P(ForwardingBackendTest, PaperLayoutIsTheInnerBackend) { expect_identical(tiny_config()); }

TEST_P(ForwardingBackendTest, PreLnSwiGluLearnedWithDropoutIsTheInnerBackend) {
  ModelConfig config = with_activation(tiny_config(), Activation::none);
  config.norm = NormPlacement::pre;
  config.positional = Positional::learned;
  config.dropout = 0.1;
  config.attention_dropout = 0.1;
  expect_identical(config);
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ForwardingBackendTest);

}  // namespace
}  // namespace trepro::testing
