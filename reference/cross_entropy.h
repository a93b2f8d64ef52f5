// Label-smoothed cross-entropy fused with the softmax over the vocabulary.
//   logits [N, V], labels [N] int32, lse [N]. Rows labelled pad_id are ignored; C counts the others.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <Eigen/Dense>

#include "core/backend_checks.h"
#include "reference/log_softmax.h"

namespace trepro::reference {

namespace cross_entropy_detail {

// The target distribution q of a non-pad row: `on` at the label, `off` at every other class.
//   uniform (PyTorch's label_smoothing): q = (1 - eps) onehot + eps / V   -> on = 1 - eps + eps/V
//   fairseq:                              eps / (V - 1) on every other class -> on = 1 - eps
struct Target {
  double on, off;
};

inline Target smoothed_target(double eps, SmoothingForm form, std::int64_t vocab) {
  if (form == SmoothingForm::uniform) return {1.0 - eps + eps / vocab, eps / vocab};
  return {1.0 - eps, eps / (vocab - 1)};
}

// The checks both directions share.
template <class T>
void check_cross_entropy(const char* op, const Tensor& logits, const Tensor& labels, const Tensor& lse,
                         double eps, SmoothingForm form) {
  checks::expect_rank(op, "logits", logits, 2);
  const std::int64_t rows = logits.dim(0), vocab = logits.dim(1);
  checks::expect(op, "logits", logits, {rows, vocab}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "labels", labels, {rows}, DType::i32, Device::cpu);
  checks::expect(op, "lse", lse, {rows}, dtype_of<T>(), Device::cpu);
  checks::require(vocab > 0, op, "logits has no classes");
  checks::require(eps >= 0.0 && eps <= 1.0, op, "label smoothing eps must be in [0, 1]");
  checks::require(form == SmoothingForm::uniform || vocab > 1, op,
                  "the fairseq form needs at least 2 classes");
}

// True for a row that counts; a label that is neither pad_id nor a class is a data bug.
inline bool counted(const char* op, const Tensor& labels, std::int64_t n, std::int64_t vocab, int pad_id) {
  const std::int32_t label = labels.data<std::int32_t>()[n];
  if (label == pad_id) return false;
  if (label < 0 || label >= vocab) {
    throw std::out_of_range(std::string(op) + ": labels[" + std::to_string(n) + "] = " +
                            std::to_string(label) + " is outside [0, " + std::to_string(vocab) +
                            ") and is not pad_id " + std::to_string(pad_id));
  }
  return true;
}

}  // namespace cross_entropy_detail

// lse_n = log sum_v exp(logits_nv)  (every row, pad or not)
// loss  = (1/C) sum_{n not pad} sum_v -q_n(v) log p_n(v),   log p_n(v) = logits_nv - lse_n
//       = (1/C) sum_n [ (on - off) (lse_n - logits_n,label) + off sum_v (lse_n - logits_nv) ]
// Returns 0 when C == 0; writes C into *count when given.
template <class T>
double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                             SmoothingForm form, Tensor& lse, std::int64_t* count) {
  using namespace cross_entropy_detail;
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  constexpr const char* op = "cross_entropy_forward";
  check_cross_entropy<T>(op, logits, labels, lse, eps, form);
  const std::int64_t rows = logits.dim(0), vocab = logits.dim(1);
  const Target q = smoothed_target(eps, form, vocab);
  const Eigen::Map<const Matrix> x(logits.data<T>(), rows, vocab);
  Eigen::Matrix<T, Eigen::Dynamic, 1> row_loss = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(rows);
  std::int64_t c = 0;
  for (std::int64_t n = 0; n < rows; ++n) {
    const T row_lse = log_sum_exp(x.row(n));
    lse.data<T>()[n] = row_lse;
    if (!counted(op, labels, n, vocab, pad_id)) continue;
    ++c;
    const T nll = row_lse - x(n, labels.data<std::int32_t>()[n]);
    const T all_classes = (row_lse - x.row(n).array()).sum();
    row_loss(n) = static_cast<T>(q.on - q.off) * nll + static_cast<T>(q.off) * all_classes;
  }
  if (count) *count = c;
  return c == 0 ? 0.0 : static_cast<double>(row_loss.sum() / static_cast<T>(c));
}

// dlogits_n = (dloss / C) (softmax(logits_n) - q_n) for non-pad rows, 0 for pad rows (and
// everywhere when C == 0). softmax is recomputed from the saved lse: exp(logits_nv - lse_n).
template <class T>
void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id,
                            double eps, SmoothingForm form, double dloss, Tensor& dlogits) {
  using namespace cross_entropy_detail;
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  constexpr const char* op = "cross_entropy_backward";
  check_cross_entropy<T>(op, logits, labels, lse, eps, form);
  const std::int64_t rows = logits.dim(0), vocab = logits.dim(1);
  checks::expect(op, "dlogits", dlogits, {rows, vocab}, dtype_of<T>(), Device::cpu);
  const Target q = smoothed_target(eps, form, vocab);
  std::int64_t c = 0;
  for (std::int64_t n = 0; n < rows; ++n) c += counted(op, labels, n, vocab, pad_id) ? 1 : 0;
  const Eigen::Map<const Matrix> x(logits.data<T>(), rows, vocab);
  Eigen::Map<Matrix> dx(dlogits.data<T>(), rows, vocab);
  dx.setZero();
  if (c == 0) return;
  const T g = static_cast<T>(dloss / static_cast<double>(c));
  for (std::int64_t n = 0; n < rows; ++n) {
    const std::int32_t label = labels.data<std::int32_t>()[n];
    if (label == pad_id) continue;
    dx.row(n) = (x.row(n).array() - lse.data<T>()[n]).exp() - static_cast<T>(q.off);
    dx(n, label) -= static_cast<T>(q.on - q.off);
    dx.row(n) *= g;
  }
}

}  // namespace trepro::reference
