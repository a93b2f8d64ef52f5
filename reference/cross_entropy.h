// Label-smoothed cross-entropy fused with the softmax over the vocabulary.
//   logits [N, V], labels [N] int32, lse [N]. Rows labelled pad_id are ignored; C counts the others.
#pragma once

#include <cstdint>

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
  const auto dims = checks::cross_entropy_forward_dims(dtype_of<T>(), Device::cpu, logits, labels, eps, form, lse);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const std::int64_t c =
      checks::cross_entropy_values("cross_entropy_forward", labels.data<std::int32_t>(), dims, pad_id);
  const Target q = smoothed_target(eps, form, vocab);
  const Eigen::Map<const Matrix> x(logits.data<T>(), rows, vocab);
  Eigen::Matrix<T, Eigen::Dynamic, 1> row_loss = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(rows);
  for (std::int64_t n = 0; n < rows; ++n) {
    const T row_lse = log_sum_exp(x.row(n));
    lse.data<T>()[n] = row_lse;
    if (labels.data<std::int32_t>()[n] == pad_id) continue;
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
  const auto dims =
      checks::cross_entropy_backward_dims(dtype_of<T>(), Device::cpu, logits, labels, lse, eps, form, dlogits);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const std::int64_t c =
      checks::cross_entropy_values("cross_entropy_backward", labels.data<std::int32_t>(), dims, pad_id);
  const Target q = smoothed_target(eps, form, vocab);
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
