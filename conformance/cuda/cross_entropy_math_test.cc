// cross_entropy_math.h (the fused softmax + label-smoothed cross-entropy kernels' arithmetic),
// driven as cross_entropy_rows does -- row statistics by the running softmax, one fused loss
// formula per row -- against the reference's cross_entropy_forward / backward, both forms.
#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/cross_entropy_math.h"
#include "optimized/cuda/softmax_math.h"

namespace trepro::testing {
namespace {

constexpr std::int64_t kRows = 9, kVocab = 131;
constexpr int kPad = 0;

TEST(CrossEntropyMath, LossAndGradientMatchReference) {
  HostMath h;
  Backend& ref = *h.reference;
  Tensor logits = h.random({kRows, kVocab}, 1, -4.0, 4.0);
  std::vector<double> label_values;
  for (std::int64_t n = 0; n < kRows; ++n) label_values.push_back(n % 4 == 1 ? kPad : static_cast<double>((n * 37) % kVocab));
  Tensor labels = int_tensor(ref, {kRows}, label_values);
  const std::vector<float> x = floats(logits);
  for (SmoothingForm form : {SmoothingForm::uniform, SmoothingForm::fairseq}) {
    for (double eps : {0.0, 0.1}) {
      SCOPED_TRACE(std::string(form == SmoothingForm::uniform ? "uniform" : "fairseq") + " eps=" + std::to_string(eps));
      Tensor lse = ref.empty({kRows}, DType::f64), dlogits = ref.empty({kRows, kVocab}, DType::f64);
      std::int64_t count = 0;
      const double loss = ref.cross_entropy_forward(logits, labels, kPad, eps, form, lse, &count);
      const double dloss = 0.75;
      ref.cross_entropy_backward(logits, labels, lse, kPad, eps, form, dloss, dlogits);

      const cuda::SmoothedTarget q = cuda::smoothed_target(eps, form, kVocab);
      std::vector<float> lses(kRows), grads(kRows * kVocab, 0.0f);
      double loss_sum = 0;  // the kernel sums row losses in double (CUB)
      std::int64_t rows_counted = 0;
      for (std::int64_t n = 0; n < kRows; ++n) {
        cuda::SoftmaxState<float> state;
        float sum = 0;
        for (std::int64_t v = 0; v < kVocab; ++v) {
          cuda::softmax_add(state, x[n * kVocab + v]);
          sum += x[n * kVocab + v];
        }
        lses[n] = cuda::softmax_lse(state);
        const auto label = static_cast<std::int64_t>(label_values[n]);
        if (label == kPad) continue;
        ++rows_counted;
        loss_sum += cuda::cross_entropy_row_loss(lses[n], x[n * kVocab + label], sum, kVocab, q);
      }
      ASSERT_EQ(rows_counted, count);
      const float g = static_cast<float>(dloss / static_cast<double>(rows_counted));
      for (std::int64_t n = 0; n < kRows; ++n) {
        if (static_cast<int>(label_values[n]) == kPad) continue;
        for (std::int64_t v = 0; v < kVocab; ++v) {
          grads[n * kVocab + v] = cuda::cross_entropy_gradient(x[n * kVocab + v], lses[n], v == label_values[n], q, g);
        }
      }
      const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, kVocab + kRows);
      EXPECT_TRUE(all_close("lse", *h.holder, h.result({kRows}, lses), ref, lse, tol));
      EXPECT_TRUE(all_close("dlogits", *h.holder, h.result({kRows, kVocab}, grads), ref, dlogits, tol));
      EXPECT_NEAR(loss_sum / static_cast<double>(rows_counted), loss, tol.atol + tol.rtol * std::abs(loss));
    }
  }
}

TEST(CrossEntropyMath, TargetsSumToOne) {
  for (SmoothingForm form : {SmoothingForm::uniform, SmoothingForm::fairseq}) {
    const cuda::SmoothedTarget q = cuda::smoothed_target(0.1, form, 10);
    EXPECT_NEAR(q.on + 9 * q.off, 1.0, 1e-15);
  }
  EXPECT_DOUBLE_EQ(cuda::smoothed_target(0.1, SmoothingForm::fairseq, 10).on, 0.9);
}

}  // namespace
}  // namespace trepro::testing
