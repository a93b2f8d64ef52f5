// train.precision "bf16" (GEMM operands rounded to bfloat16, float32 accumulation), on two
// backends: "cuda" in bf16 mode, on a machine with a GPU (without one those tests skip, saying
// why), and "bf16-emulated", the host emulation of `trepro compare-kernels`
// (experiments/kernel_accuracy/bf16_emulation.h), everywhere; so the bf16 tolerance is checked
// here against the emulation, and on a GPU against the device.
// - The linear op equals the float64 reference run on the bf16-rounded operands, within the
//   float32 tolerance: the backend rounds exactly as core/bf16.h (host-tested) and only the
//   order of the float32 sums differs. On cuda this proves the bf16 path is taken and correct.
// - The linear op and whole models (the three layouts of model_vs_reference_test.cc) agree with
//   the float64 reference on the unrounded values within bf16_tolerance: what bf16 costs.
// scripts/gpu-check records the cuda results as the bf16 conformance.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/tensor_testing.h"
#include "experiments/kernel_accuracy/bf16_emulation.h"
#include "core/bf16.h"
#include "registry/registry.h"
#if defined(TR_WITH_CUDA)
#include "optimized/cuda/cuda_backend.h"
#endif

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 29;
constexpr double kLabelSmoothing = 0.1;

constexpr const char* kCuda = "cuda";
constexpr const char* kEmulated = "bf16_emulated";

std::string cuda_skip_reason() {
#if defined(TR_WITH_CUDA)
  const CudaDeviceStatus status = cuda_device_status();
  return status.available ? "" : "no usable CUDA device (" + status.reason + "); scripts/gpu-check runs these on a GPU";
#else
  return "built without the CUDA backend (TR_WITH_CUDA is OFF)";
#endif
}

class Bf16Linear : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == kCuda) {
      const std::string reason = cuda_skip_reason();
      if (!reason.empty()) GTEST_SKIP() << reason;
      backend_ = make_backend("cuda");
      backend_->set_precision(Precision::bf16);
    } else {
      backend_ = kernel_accuracy::make_bf16_emulation(make_backend("cpu"));
    }
    reference_ = make_reference_backend(DType::f64);
  }

  // A float64 reference tensor of `t`'s values rounded to bfloat16 (t holds float32 values).
  Tensor rounded(const Tensor& t) {
    Tensor host = Tensor::empty(t.shape(), DType::f64);
    for (std::int64_t i = 0; i < t.numel(); ++i) host.set(i, round_to_bf16(static_cast<float>(t.at(i))));
    return reference_->upload(host);
  }

  // linear forward and backward (no activation) on the device, and on the reference with
  // `operand` applied to x, w and dy.
  template <class Operand>
  void check_linear(std::int64_t n, std::int64_t k, std::int64_t m, Operand operand, Tolerance tol) {
    // float32 values as the reference's float64 inputs, so that rounding them is exact.
    const auto input = [&](const Shape& shape, std::uint64_t seed) {
      return reference_->upload(backend_->download(backend_->upload(random_tensor(*reference_, shape, seed))));
    };
    const Tensor x = input({n, k}, 1), w = input({m, k}, 2), b = input({m}, 3), dy = input({n, m}, 4);
    Backend& ref = *reference_;
    Tensor y_ref = ref.empty({n, m}, DType::f64), dx_ref = ref.empty({n, k}, DType::f64);
    Tensor dw_ref = ref.zeros({m, k}, DType::f64), db_ref = ref.zeros({m}, DType::f64);
    Tensor unused_dw = ref.zeros({m, k}, DType::f64);
    ref.linear_forward(operand(x), operand(w), &b, Activation::none, y_ref, nullptr);
    ref.linear_backward(operand(x), operand(w), nullptr, Activation::none, operand(dy), &dx_ref, dw_ref, nullptr);
    ref.linear_backward(x, w, nullptr, Activation::none, dy, nullptr, unused_dw, &db_ref);

    Backend& dev = *backend_;
    Tensor y = dev.empty({n, m}, DType::f32), dx = dev.empty({n, k}, DType::f32);
    Tensor dw = dev.zeros({m, k}, DType::f32), db = dev.zeros({m}, DType::f32);
    const Tensor x_dev = dev.upload(x), w_dev = dev.upload(w), b_dev = dev.upload(b), dy_dev = dev.upload(dy);
    dev.linear_forward(x_dev, w_dev, &b_dev, Activation::none, y, nullptr);
    dev.linear_backward(x_dev, w_dev, nullptr, Activation::none, dy_dev, &dx, dw, &db);
    EXPECT_TRUE(all_close("y", dev, y, ref, y_ref, tol));
    EXPECT_TRUE(all_close("dx", dev, dx, ref, dx_ref, tol));
    EXPECT_TRUE(all_close("dw", dev, dw, ref, dw_ref, tol));
    // db sums the unrounded dy in float32 in both precisions.
    EXPECT_TRUE(all_close("db", dev, db, ref, db_ref, tolerance(Check::op_vs_reference, DType::f32, n)));
  }

  std::unique_ptr<Backend> backend_, reference_;
};

TEST_P(Bf16Linear, IsFloat64OnBf16RoundedOperands) {
  // Odd sizes (no multiple of 8: cuBLASLt's fallbacks) and a Transformer shape.
  for (const auto [n, k, m] : {std::array<std::int64_t, 3>{7, 13, 5}, std::array<std::int64_t, 3>{96, 512, 512}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(k) + "x" + std::to_string(m));
    const std::int64_t widest = std::max(k, std::max(n, m));
    check_linear(n, k, m, [this](const Tensor& t) { return rounded(t); },
                 tolerance(Check::op_vs_reference, DType::f32, widest));
  }
}

TEST_P(Bf16Linear, AgreesWithFloat64WithinTheBf16Tolerance) {
  const std::int64_t n = 64, k = 512, m = 256;
  check_linear(n, k, m, [](const Tensor& t) { return t; }, bf16_tolerance(Check::op_vs_reference, std::max(n, k)));
}

class Bf16Model : public Bf16Linear {
 protected:
  // As model_vs_reference_test.cc, with the bf16 tolerance.
  void expect_agreement(const ModelConfig& config) {
    Backend& b = *backend_;
    Backend& ref = *reference_;
    Transformer model(config, b), truth(config, ref);
    model.initialize(kSeed);
    for (Parameter& p : model.parameters().all()) truth.parameters().at(p.spec.name).value = ref.upload(b.download(p.value));
    const Batch batch = tiny_batch(config, kSeed);
    const Tolerance tol = bf16_tolerance(Check::model_vs_reference, widest_sum(config));
    model.parameters().zero_grad(b);
    truth.parameters().zero_grad(ref);
    EXPECT_TRUE(all_close("logits", b, model.forward(batch), ref, truth.forward(batch), tol));
    const double loss = model.loss(batch.labels, kLabelSmoothing, SmoothingForm::uniform);
    const double expected = truth.loss(batch.labels, kLabelSmoothing, SmoothingForm::uniform);
    EXPECT_LE(std::abs(loss - expected), kBf16ModelLossRtol * std::abs(expected)) << "loss " << loss << ", expected " << expected;
    model.backward();
    truth.backward();
    for (Parameter& p : model.parameters().all()) {
      const Tensor& exact = truth.parameters().at(p.spec.name).grad;
      EXPECT_TRUE(all_close(p.spec.name + ".grad", b, p.grad, ref, exact, tol));
      // The key projections' biases have a zero gradient in exact arithmetic (a query's scores
      // all shift by the same amount): the elementwise check's absolute part is theirs.
      if (p.spec.name.ends_with("k_proj.bias")) continue;
      EXPECT_TRUE(norm_close(p.spec.name + ".grad", b, p.grad, ref, exact, kBf16ModelGradientNormBound));
      Tensor zero = ref.zeros(exact.shape(), DType::f64);
      EXPECT_FALSE(norm_close(p.spec.name + ".grad = 0", ref, zero, ref, exact, kBf16ModelGradientNormBound));
    }
  }
};

TEST_P(Bf16Model, PaperLayoutAgreesWithFloat64) { expect_agreement(tiny_config()); }

TEST_P(Bf16Model, PreLnSwiGluLearnedAgreesWithFloat64) {
  ModelConfig config = with_activation(tiny_config(), Activation::none);
  config.norm = NormPlacement::pre;
  config.positional = Positional::learned;
  expect_agreement(config);
}

TEST_P(Bf16Model, DecoderOnlyRopeRmsNormAgreesWithFloat64) {
  ModelConfig config = with_architecture(tiny_config(), Architecture::decoder_only);
  config.positional = Positional::rope;
  config.norm_kind = NormKind::rms;
  config.activation = Activation::gelu;
  expect_agreement(config);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Bf16, Bf16Linear, ::testing::Values(kEmulated, kCuda), param_name);
INSTANTIATE_TEST_SUITE_P(Bf16, Bf16Model, ::testing::Values(kEmulated, kCuda), param_name);

}  // namespace
}  // namespace trepro::testing
