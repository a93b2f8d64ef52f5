#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// 7 rows, 2 of them pad (label 1 = pad_id); every class in [0, V) that is not pad appears as a
// label, including class 0 and class V - 1.
constexpr std::int64_t kRows = 7, kVocab = 11;
constexpr int kPad = 1;
constexpr double kLabels[kRows] = {3, 1, 0, 10, 1, 5, 7};
constexpr double kDloss = 1.3;

Tensor labels_tensor(Backend& backend) {
  return int_tensor(backend, {kRows}, std::vector<double>(std::begin(kLabels), std::end(kLabels)));
}

struct Setting {
  SmoothingForm form;
  double eps;
};

std::vector<Setting> settings() {
  return {{SmoothingForm::uniform, 0.0},
          {SmoothingForm::uniform, 0.1},
          {SmoothingForm::fairseq, 0.1},
          {SmoothingForm::uniform, 1.0},
          {SmoothingForm::fairseq, 1.0}};
}

std::string describe(const Setting& s) {
  return std::string(s.form == SmoothingForm::uniform ? "uniform" : "fairseq") + " eps " +
         std::to_string(s.eps);
}

struct Forward {
  double loss;
  std::int64_t count;
  Tensor lse;
};

Forward forward(Backend& backend, const Tensor& logits, const Tensor& labels, const Setting& s) {
  Forward f{0.0, -1, backend.empty({logits.dim(0)}, backend.dtype())};
  f.loss = backend.cross_entropy_forward(logits, labels, kPad, s.eps, s.form, f.lse, &f.count);
  return f;
}

Tensor backward(Backend& backend, const Tensor& logits, const Tensor& labels, const Tensor& lse,
                const Setting& s, double dloss = kDloss) {
  Tensor dlogits = backend.empty(logits.shape(), backend.dtype());
  backend.cross_entropy_backward(logits, labels, lse, kPad, s.eps, s.form, dloss, dlogits);
  return dlogits;
}

// -log softmax(row)(v) of every class, in double on the host: the independent formula.
std::vector<double> neg_log_softmax(const Tensor& logits, std::int64_t row) {
  const std::int64_t vocab = logits.dim(1);
  double m = logits.at(row * vocab);
  for (std::int64_t v = 1; v < vocab; ++v) m = std::max(m, logits.at(row * vocab + v));
  double sum = 0.0;
  for (std::int64_t v = 0; v < vocab; ++v) sum += std::exp(logits.at(row * vocab + v) - m);
  std::vector<double> nll(vocab);
  for (std::int64_t v = 0; v < vocab; ++v) nll[v] = m + std::log(sum) - logits.at(row * vocab + v);
  return nll;
}

// The same values on another backend (float converts to double exactly).
Tensor copy_to(Backend& to, Backend& from, const Tensor& x) { return to.upload(from.download(x)); }

class CrossEntropyTest : public BackendTest {};

// The loss sums V terms per row (lse) and then N rows; dlogits depends on lse only.
TEST_P(CrossEntropyTest, ForwardAndBackwardMatchReference) {
  const Tensor logits = random_tensor(backend(), {kRows, kVocab}, 1, -3.0, 3.0);
  const Tensor labels = labels_tensor(backend());
  const Tensor logits_ref = copy_to(reference(), backend(), logits),
               labels_ref = copy_to(reference(), backend(), labels);
  for (const Setting& s : settings()) {
    SCOPED_TRACE(describe(s));
    const Forward actual = forward(backend(), logits, labels, s);
    const Forward expected = forward(reference(), logits_ref, labels_ref, s);
    const Tolerance tol = tolerance(Check::op_vs_reference, backend().dtype(), kVocab + kRows);
    EXPECT_NEAR(actual.loss, expected.loss, tol.atol + tol.rtol * std::abs(expected.loss));
    EXPECT_EQ(actual.count, 5);
    EXPECT_TRUE(all_close("lse", backend(), actual.lse, reference(), expected.lse, tol));
    EXPECT_TRUE(all_close("dlogits", backend(), backward(backend(), logits, labels, actual.lse, s),
                          reference(), backward(reference(), logits_ref, labels_ref, expected.lse, s), tol));
  }
}

// loss = (1/C) sum over non-pad rows of (1 - eps) nll + smoothing, with nll = -log p(label):
//   uniform: smoothing = eps * mean_v(-log p_v)           (eps = 0: plain cross-entropy)
//   fairseq: smoothing = eps / (V - 1) * sum_{v != label}(-log p_v)
// and lse_n = log sum_v exp(logits_nv) for every row, pad or not.
TEST_P(CrossEntropyTest, MatchesTheSmoothingFormulas) {
  Backend& b = backend();
  const Tensor logits = random_tensor(b, {kRows, kVocab}, 2, -3.0, 3.0);
  const Tensor labels = labels_tensor(b);
  const Tensor host = b.download(logits);
  for (const Setting& s : settings()) {
    SCOPED_TRACE(describe(s));
    double total = 0.0;
    Tensor lse = Tensor::empty({kRows}, DType::f64);
    for (std::int64_t n = 0; n < kRows; ++n) {
      const std::vector<double> nll = neg_log_softmax(host, n);
      lse.set(n, nll[0] + host.at(n * kVocab));
      const auto label = static_cast<std::int64_t>(kLabels[n]);
      if (label == kPad) continue;
      double all = 0.0;
      for (const double term : nll) all += term;
      const double smoothing =
          s.form == SmoothingForm::uniform ? s.eps * all / kVocab : s.eps / (kVocab - 1) * (all - nll[label]);
      total += (1.0 - s.eps) * nll[label] + smoothing;
    }
    const Forward f = forward(b, logits, labels, s);
    const Tolerance tol = tolerance(Check::invariant, b.dtype(), kVocab + kRows);
    EXPECT_NEAR(f.loss, total / 5, tol.atol + tol.rtol * total / 5);
    EXPECT_TRUE(all_close("lse", b, f.lse, reference(), lse, tol));
  }
}

// Pad rows contribute nothing: their logits can be anything, their gradient is 0, and a batch
// of pad only has loss 0 and zero gradient.
TEST_P(CrossEntropyTest, PadRowsContributeNothing) {
  Backend& b = backend();
  const Setting s{SmoothingForm::uniform, 0.1};
  const Tensor logits = random_tensor(b, {kRows, kVocab}, 3, -3.0, 3.0);
  const Tensor labels = labels_tensor(b);
  Tensor wild_host = b.download(logits);
  for (const std::int64_t pad_row : {1, 4}) {
    for (std::int64_t v = 0; v < kVocab; ++v) wild_host.set(pad_row * kVocab + v, v == 0 ? 40.0 : -40.0);
  }
  const Tensor wild = b.upload(wild_host);
  const Forward f = forward(b, logits, labels, s), fw = forward(b, wild, labels, s);
  EXPECT_EQ(fw.loss, f.loss);
  const Tensor dwild = b.download(backward(b, wild, labels, fw.lse, s));
  const Tensor d = b.download(backward(b, logits, labels, f.lse, s));
  for (std::int64_t n = 0; n < kRows; ++n) {
    for (std::int64_t v = 0; v < kVocab; ++v) {
      if (kLabels[n] == kPad) {
        EXPECT_EQ(dwild.at(n * kVocab + v), 0.0) << "pad row " << n;
      } else {
        EXPECT_EQ(dwild.at(n * kVocab + v), d.at(n * kVocab + v)) << "row " << n;
      }
    }
  }

  const Tensor all_pad = int_tensor(b, {kRows}, std::vector<double>(kRows, kPad));
  const Forward empty = forward(b, logits, all_pad, s);
  EXPECT_EQ(empty.loss, 0.0);
  EXPECT_EQ(empty.count, 0);
  const Tensor dempty = backward(b, logits, all_pad, empty.lse, s);
  EXPECT_TRUE(all_close("dlogits", b, dempty, b, b.zeros(logits.shape(), b.dtype()), {0.0, 0.0}));
}

// Logits around 1e4 overflow exp unless the max is subtracted; shifting every logit of a row
// changes neither the loss nor the gradient. Multiples of 1/8 stay exact in float at 1e4; lse
// is rounded at that magnitude, which bounds the float error.
TEST_P(CrossEntropyTest, IsShiftInvariantAndDoesNotOverflow) {
  Backend& b = backend();
  const Setting s{SmoothingForm::fairseq, 0.1};
  const Tensor random = b.download(random_tensor(b, {kRows, kVocab}, 8, -3.0, 3.0));
  Tensor base = Tensor::empty({kRows, kVocab}, DType::f64);
  Tensor shifted = Tensor::empty({kRows, kVocab}, DType::f64);
  for (std::int64_t i = 0; i < base.numel(); ++i) {
    base.set(i, std::round(8.0 * random.at(i)) / 8.0);
    shifted.set(i, base.at(i) + 1e4);
  }
  const Tensor labels = labels_tensor(b), x = b.upload(base), x_shifted = b.upload(shifted);
  const Forward f = forward(b, x, labels, s), fs = forward(b, x_shifted, labels, s);
  const double atol = 4 * unit_roundoff(b.dtype()) * 1e4;
  EXPECT_NEAR(fs.loss, f.loss, atol);
  const Tensor d = backward(b, x, labels, f.lse, s), ds = backward(b, x_shifted, labels, fs.lse, s);
  EXPECT_TRUE(b.all_finite(ds));
  EXPECT_TRUE(all_close("dlogits", b, ds, b, d, {atol, 0.0}));
}

// PyTorch 1.13 (Debian's python3-torch, /usr/bin/python3), float64:
//   import torch; x = torch.tensor(<logits below>, dtype=torch.float64, requires_grad=True)
//   l = torch.nn.functional.cross_entropy(x, torch.tensor([3, 0, 4, 1]), ignore_index=0,
//       label_smoothing=0.1); l.backward(); print(repr(l.item()), x.grad.flatten().tolist())
// Row 1 is ignored (label 0 = pad), yet class 0 still gets its eps/V share in the other rows.
TEST_P(CrossEntropyTest, MatchesPyTorchLabelSmoothing) {
  Backend& b = backend();
  const Tensor logits = b.upload(Tensor::from_values({4, 5}, DType::f64,
                                                     {0.5, -1.25, 2.0, 0.0, 1.5,      //
                                                      3.0, 1.0, -2.0, 0.25, 0.75,     //
                                                      -0.5, 0.125, 1.0, -1.5, 2.5,    //
                                                      1.0, 2.0, -0.75, 0.5, -3.0}));
  const Tensor labels = int_tensor(b, {4}, {3, 0, 4, 1});
  const Tensor torch_grad = Tensor::from_values(
      {4, 5}, DType::f64,
      {0.030451719429681296, -0.0002164583401881079, 0.1596863986099244, -0.28415322746018046,
       0.09423156776076287,  // row 1 is pad:
       0.0, 0.0, 0.0, 0.0, 0.0,
       0.005322295693737612, 0.015731663796965698, 0.047064134908651634, -0.0022561738932956833,
       -0.06586192050605931,
       0.06713022512550662, -0.10606591671124356, 0.006157310234445067, 0.03809341079678201,
       -0.00531502944549023});
  Tensor lse = b.empty({4}, b.dtype());
  std::int64_t count = -1;
  const double loss = b.cross_entropy_forward(logits, labels, 0, 0.1, SmoothingForm::uniform, lse, &count);
  Tensor dlogits = b.empty({4, 5}, b.dtype());
  b.cross_entropy_backward(logits, labels, lse, 0, 0.1, SmoothingForm::uniform, 1.0, dlogits);
  const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), 5 + 4);
  EXPECT_NEAR(loss, 1.2985045015617136, tol.atol + tol.rtol * 1.2985045015617136);
  EXPECT_EQ(count, 3);
  EXPECT_TRUE(all_close("dlogits", b, dlogits, reference(), torch_grad, tol));
}

TEST_P(CrossEntropyTest, RejectsLabelsOutOfRange) {
  Backend& b = backend();
  const Setting s{SmoothingForm::uniform, 0.1};
  const Tensor logits = random_tensor(b, {kRows, kVocab}, 4);
  Tensor lse = b.empty({kRows}, b.dtype()), dlogits = b.empty({kRows, kVocab}, b.dtype());
  const Tensor too_big = int_tensor(b, {kRows}, {3, 1, 11, 10, 1, 5, 7});
  EXPECT_THAT([&] { b.cross_entropy_forward(logits, too_big, kPad, s.eps, s.form, lse, nullptr); },
              ThrowsMessage<std::out_of_range>(
                  HasSubstr("cross_entropy_forward: labels[2] = 11 is outside [0, 11) and is not pad_id 1")));
  // PyTorch's default ignore_index is only an ignore index when it is the pad_id.
  const Tensor negative = int_tensor(b, {kRows}, {-100, 1, 0, 10, 1, 5, 7});
  EXPECT_THAT(
      [&] { b.cross_entropy_forward(logits, negative, kPad, s.eps, s.form, lse, nullptr); },
      ThrowsMessage<std::out_of_range>(HasSubstr("cross_entropy_forward: labels[0] = -100 is outside")));
  EXPECT_THAT(
      [&] { b.cross_entropy_backward(logits, too_big, lse, kPad, s.eps, s.form, 1.0, dlogits); },
      ThrowsMessage<std::out_of_range>(HasSubstr("cross_entropy_backward: labels[2] = 11 is outside")));
}

TEST_P(CrossEntropyTest, RejectsBadShapesNamingTheTensor) {
  Backend& b = backend();
  const Setting s{SmoothingForm::uniform, 0.1};
  const Tensor logits = random_tensor(b, {kRows, kVocab}, 5);
  const Tensor labels = labels_tensor(b);
  Tensor lse = b.empty({kRows}, b.dtype()), dlogits = b.empty({kRows, kVocab}, b.dtype());
  const Tensor long_labels = int_tensor(b, {kRows + 1}, std::vector<double>(kRows + 1, 0));
  EXPECT_THAT([&] { b.cross_entropy_forward(logits, long_labels, kPad, s.eps, s.form, lse, nullptr); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("cross_entropy_forward: labels has shape [8], expected [7]")));
  const Tensor float_labels = random_tensor(b, {kRows}, 6);
  EXPECT_THAT([&] { b.cross_entropy_forward(logits, float_labels, kPad, s.eps, s.form, lse, nullptr); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("cross_entropy_forward: labels has dtype")));
  Tensor lse_2d = b.empty({kRows, 1}, b.dtype());
  EXPECT_THAT([&] { b.cross_entropy_forward(logits, labels, kPad, s.eps, s.form, lse_2d, nullptr); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("cross_entropy_forward: lse has shape [7, 1], expected [7]")));
  EXPECT_THAT([&] { b.cross_entropy_forward(logits, labels, kPad, 1.5, s.form, lse, nullptr); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("cross_entropy_forward: label smoothing eps")));
  Tensor dlogits_wide = b.empty({kRows, kVocab + 1}, b.dtype());
  EXPECT_THAT([&] { b.cross_entropy_backward(logits, labels, lse, kPad, s.eps, s.form, 1.0, dlogits_wide); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("cross_entropy_backward: dlogits has shape [7, 12], expected [7, 11]")));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(CrossEntropyTest);

// Central differences of dloss * loss(logits), for both forms and with and without smoothing.
class CrossEntropyGradientTest : public BackendTest {};

TEST_P(CrossEntropyGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  const Tensor labels = labels_tensor(b);
  for (const Setting& s : settings()) {
    SCOPED_TRACE(describe(s));
    Tensor logits = random_tensor(b, {kRows, kVocab}, 7, -3.0, 3.0);
    const Tensor dlogits = backward(b, logits, labels, forward(b, logits, labels, s).lse, s);
    const auto loss = [&] { return kDloss * forward(b, logits, labels, s).loss; };
    EXPECT_TRUE(check_gradient("dlogits", b, logits, dlogits, loss, 512));
  }
}

TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(CrossEntropyGradientTest);

}  // namespace
}  // namespace trepro::testing
