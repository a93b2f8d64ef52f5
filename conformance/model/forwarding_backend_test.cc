// ForwardingBackend (core/forwarding_backend.h), the base of the decorators: one that overrides
// nothing is its inner backend. A whole model (forward with dropout on, loss, backward) through
// it gives the inner backend's logits, loss and gradients bit for bit, so every op reaches the
// inner backend with its arguments unchanged. What it is credited with is said at construction:
// a decorator provides its inner backend's ops, a partial backend only its own, and the suite's
// guard refuses the others as not provided.
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/exception_message.h"
#include "conformance/support/provided_ops_guard.h"
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
    ForwardingBackend forwarding(inner, Decorates::whole_backend);
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

// A partial backend: its own norm forward (here the inner's, the point being what it claims).
class OwnNormForward final : public ForwardingBackend {
 public:
  explicit OwnNormForward(Backend& inner) : ForwardingBackend(inner, {{Op::norm, Direction::forward}}) {}
  std::string name() const override { return "own-norm-forward"; }
  void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, Tensor& y,
                    Tensor& mean, Tensor& rstd) override {
    inner().norm_forward(kind, x, gamma, beta, eps, y, mean, rstd);
  }
};

TEST(ForwardingBackendCredit, ADecoratorProvidesItsInnerBackendsOpsAndAPartialBackendOnlyItsOwn) {
  std::unique_ptr<Backend> inner = make_reference_backend(DType::f32);
  ForwardingBackend decorator(*inner, Decorates::whole_backend);
  OwnNormForward partial(*inner);
  for (OpDirection op : every_op_direction()) {
    SCOPED_TRACE(describe(op));
    EXPECT_TRUE(decorator.provides(op));
    const OpDirection own{Op::norm, Direction::forward};
    EXPECT_EQ(partial.provides(op), op == own);
  }
}

TEST(ForwardingBackendCredit, TheGuardRunsAPartialBackendsOwnOpsAndRefusesTheForwardedOnes) {
  std::unique_ptr<Backend> inner = make_reference_backend(DType::f32);
  OwnNormForward partial(*inner);
  std::vector<std::pair<std::string, bool>> heard;
  ProvidedOpsGuard guard(partial, [&](OpDirection op, bool provided) { heard.emplace_back(describe(op), provided); });
  Tensor x = random_tensor(guard, {2, 4}, 1), gamma = random_tensor(guard, {4}, 2), beta = random_tensor(guard, {4}, 3);
  Tensor y = guard.empty({2, 4}, DType::f32), mean = guard.empty({2}, DType::f32), rstd = guard.empty({2}, DType::f32);
  guard.norm_forward(NormKind::layer, x, gamma, &beta, 1e-5, y, mean, rstd);
  Tensor dx = guard.empty({2, 4}, DType::f32), dgamma = guard.zeros({4}, DType::f32), dbeta = guard.zeros({4}, DType::f32);
  EXPECT_EQ(message_of<NotProvided>(
                [&] { guard.norm_backward(NormKind::layer, x, gamma, mean, rstd, y, dx, dgamma, &dbeta); }),
            "not provided: norm backward by backend own-norm-forward");
  const std::vector<std::pair<std::string, bool>> expected = {{"norm forward", true}, {"norm backward", false}};
  EXPECT_EQ(heard, expected);
}

}  // namespace
}  // namespace trepro::testing
