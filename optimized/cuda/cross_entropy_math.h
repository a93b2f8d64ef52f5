// Label-smoothed cross-entropy arithmetic (cross_entropy.cu); formulas as
// reference/cross_entropy.h. Target q: `on` at the label, `off` at every other class:
//   uniform: on = 1 - eps + eps / V, off = eps / V;  fairseq: on = 1 - eps, off = eps / (V - 1)
// Row loss, from the row's lse, its label's logit and the sum of its logits (one fused pass):
//   sum_v -q(v) log p(v) = (on - off)(lse - x_label) + off (V lse - sum_v x_v)
// Gradient: dx_v = g (exp(x_v - lse) - off - [v = label](on - off)),  g = dloss / C.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/backend.h"
#include "core/host_device.h"

namespace trepro::cuda {

struct SmoothedTarget {
  double on, off;
};

TR_HOST_DEVICE inline SmoothedTarget smoothed_target(double eps, SmoothingForm form, std::int64_t vocab) {
  if (form == SmoothingForm::uniform) return {1.0 - eps + eps / vocab, eps / vocab};
  return {1.0 - eps, eps / (vocab - 1)};
}

template <class T>
TR_HOST_DEVICE T cross_entropy_row_loss(T lse, T label_logit, T logit_sum, std::int64_t vocab, SmoothedTarget q) {
  return static_cast<T>(q.on - q.off) * (lse - label_logit) +
         static_cast<T>(q.off) * (static_cast<T>(vocab) * lse - logit_sum);
}

template <class T>
TR_HOST_DEVICE T cross_entropy_gradient(T logit, T lse, bool is_label, SmoothedTarget q, T g) {
  const T target = static_cast<T>(q.off) + (is_label ? static_cast<T>(q.on - q.off) : T(0));
  return g * (std::exp(logit - lse) - target);
}

}  // namespace trepro::cuda
