// Attention of the optimized CPU backend: fused, flash-style forward and backward.
//
// The implementation is attention.cc (the loop order and the maths), with its tile kernels in
// attention_tiles-inl.h and attention_backward-inl.h. The shapes, maths and masks are those of
// Backend::attention_forward/backward in core/backend.h; the leading CpuContext gives the
// Highway target (dispatch.h), the shared thread pool and the scratch workspace.
#pragma once

#include "core/backend.h"
#include "optimized/cpu/cpu_context.h"

namespace trepro::cpu {

void attention_forward(const CpuContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                       const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                       Tensor& out, Tensor& lse);

void attention_backward(const CpuContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                        const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                        const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                        Tensor& dv);

}  // namespace trepro::cpu
