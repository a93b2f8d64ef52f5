// Label-smoothed cross-entropy fused with the softmax over the vocabulary, optimized CPU backend
// (core/backend.h). Forward reads each row twice (max, then exp-sum and the smoothing sum
// together) and never writes probabilities; backward writes dlogits in one pass from the saved
// lse. Rows are split over the pool; the loss adds the row losses in row order, in double.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/cross_entropy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// lse of every row; for a counted row (labels != pad) its loss
//   (on - off) (lse - x_label) + off sum_v (lse - x_v)     into row_loss (0 for pad rows).
void cross_entropy_forward_rows(const float* logits, const std::int32_t* labels, std::size_t rows, std::size_t vocab,
                                int pad_id, double on, double off, float* lse, double* row_loss) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = logits + r * vocab;
    const RowLogSumExp row = row_log_sum_exp(x, vocab);
    lse[r] = row.lse;
    row_loss[r] = 0.0;
    if (labels[r] == pad_id) continue;
    const double nll = static_cast<double>(row.lse) - x[labels[r]];
    const double all_classes = static_cast<double>(vocab) * (static_cast<double>(row.lse) - row.max) + row.sum_below;
    row_loss[r] = (on - off) * nll + off * all_classes;
  }
}

// dlogits = g (exp(x - lse) - q) for counted rows, 0 for pad rows.
void cross_entropy_backward_rows(const float* logits, const std::int32_t* labels, const float* lse, std::size_t rows,
                                 std::size_t vocab, int pad_id, float on, float off, float g, float* dlogits) {
  const FloatTag d;
  for (std::size_t r = 0; r < rows; ++r) {
    float* dx = dlogits + r * vocab;
    if (labels[r] == pad_id) {
      std::fill(dx, dx + vocab, 0.0f);
      continue;
    }
    const auto vlse = hn::Set(d, lse[r]), voff = hn::Set(d, off), vg = hn::Set(d, g);
    map_vectors<1, 1>(vocab, {logits + r * vocab}, {dx}, [&](const FloatVec* v, FloatVec* out) {
      out[0] = hn::Mul(hn::Sub(hn::Exp(d, hn::Sub(v[0], vlse)), voff), vg);
    });
    // The label's own term: subtract g (on - off) from it, from the unscaled value as the
    // reference orders it.
    const float x_label = logits[r * vocab + static_cast<std::size_t>(labels[r])];
    HWY_ALIGN float lane[HWY_MAX_BYTES / sizeof(float)] = {x_label};
    const auto p = hn::GetLane(hn::Exp(d, hn::Sub(hn::Load(d, lane), vlse)));
    dx[labels[r]] = ((p - off) - (on - off)) * g;
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(cross_entropy_forward_rows);
HWY_EXPORT(cross_entropy_backward_rows);

namespace {

// The target distribution q of a counted row: `on` at the label, `off` at every other class
// (core/backend.h has both smoothing forms).
struct SmoothedTarget {
  double on, off;
};

SmoothedTarget smoothed_target(double eps, SmoothingForm form, std::int64_t vocab) {
  if (form == SmoothingForm::uniform) return {1.0 - eps + eps / vocab, eps / vocab};
  return {1.0 - eps, eps / (vocab - 1)};
}

std::int64_t row_grain(std::int64_t vocab) { return std::max<std::int64_t>(1, 16384 / vocab); }

}  // namespace

double CpuBackend::cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                                         SmoothingForm form, Tensor& lse, std::int64_t* count) {
  const checks::CrossEntropyDims dims =
      checks::cross_entropy_forward_dims(DType::f32, Device::cpu, logits, labels, eps, form, lse);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  // Every label is checked before any work: a bad one is a data bug, reported by value.
  const std::int64_t c =
      checks::cross_entropy_values("cross_entropy_forward", labels.data<std::int32_t>(), dims, pad_id);
  const SmoothedTarget q = smoothed_target(eps, form, vocab);
  // Row losses in double: the workspace holds floats, two per double.
  auto* row_loss =
      reinterpret_cast<double*>(context_.workspace.floats(0, Slot::op_scratch, static_cast<std::size_t>(2 * rows)));
  const auto kernel = for_target(HWY_DISPATCH_TABLE(cross_entropy_forward_rows), context_.target);
  context_.pool.parallel_for(0, rows, row_grain(vocab), [&](std::int64_t lo, std::int64_t hi) {
    kernel(logits.data<float>() + lo * vocab, labels.data<std::int32_t>() + lo, static_cast<std::size_t>(hi - lo),
           static_cast<std::size_t>(vocab), pad_id, q.on, q.off, lse.data<float>() + lo, row_loss + lo);
  });
  if (count != nullptr) *count = c;
  if (c == 0) return 0.0;
  double total = 0.0;
  for (std::int64_t n = 0; n < rows; ++n) total += row_loss[n];
  return total / static_cast<double>(c);
}

void CpuBackend::cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id,
                                        double eps, SmoothingForm form, double dloss, Tensor& dlogits) {
  const checks::CrossEntropyDims dims =
      checks::cross_entropy_backward_dims(DType::f32, Device::cpu, logits, labels, lse, eps, form, dlogits);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const std::int64_t c =
      checks::cross_entropy_values("cross_entropy_backward", labels.data<std::int32_t>(), dims, pad_id);
  const SmoothedTarget q = smoothed_target(eps, form, vocab);
  if (c == 0) {
    std::fill(dlogits.data<float>(), dlogits.data<float>() + dlogits.numel(), 0.0f);
    return;
  }
  const auto g = static_cast<float>(dloss / static_cast<double>(c));
  const auto kernel = for_target(HWY_DISPATCH_TABLE(cross_entropy_backward_rows), context_.target);
  context_.pool.parallel_for(0, rows, row_grain(vocab), [&](std::int64_t lo, std::int64_t hi) {
    kernel(logits.data<float>() + lo * vocab, labels.data<std::int32_t>() + lo, lse.data<float>() + lo,
           static_cast<std::size_t>(hi - lo), static_cast<std::size_t>(vocab), pad_id, static_cast<float>(q.on),
           static_cast<float>(q.off), g, dlogits.data<float>() + lo * vocab);
  });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
