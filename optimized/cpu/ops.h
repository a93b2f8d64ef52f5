// The ops of the optimized CPU backend, float32, one file each (optimized/cpu/<op>.cc) under
// the Backend op's name; attention is in attention.h. Each mirrors the Backend method of the
// same name (core/backend.h has the shapes and the maths) with a leading CpuContext, and checks
// its arguments with core/backend_checks.h exactly as the reference does.
#pragma once

#include <cstdint>

#include "core/backend.h"
#include "optimized/cpu/cpu_context.h"

namespace trepro::cpu {

// memory.cc
Tensor empty(const CpuContext& ctx, const Shape& shape, DType dtype);
Tensor zeros(const CpuContext& ctx, const Shape& shape, DType dtype);
Tensor upload(const CpuContext& ctx, const Tensor& host);
Tensor download(const CpuContext& ctx, const Tensor& device_tensor);

// elementwise.cc
void fill(const CpuContext& ctx, Tensor& x, double value);
void add_inplace(const CpuContext& ctx, Tensor& acc, const Tensor& x);
void scale_inplace(const CpuContext& ctx, Tensor& x, double factor);
double sum_squares(const CpuContext& ctx, const Tensor& x);
bool all_finite(const CpuContext& ctx, const Tensor& x);

// concat_time.cc, select_batch.cc
void concat_time(const CpuContext& ctx, const Tensor& a, const Tensor& b, Tensor& out);
void select_batch(const CpuContext& ctx, const Tensor& x, const Tensor& indices, Tensor& out);

// linear.cc (the GEMM itself is gemm.h)
void linear_forward(const CpuContext& ctx, const Tensor& x, const Tensor& w, const Tensor* b, Activation act,
                    Tensor& y, Tensor* pre);
void linear_backward(const CpuContext& ctx, const Tensor& x, const Tensor& w, const Tensor* pre, Activation act,
                     const Tensor& dy, Tensor* dx, Tensor& dw, Tensor* db);

// activation.cc, swiglu.cc
void activation_forward(const CpuContext& ctx, Activation act, const Tensor& x, Tensor& y);
void activation_backward(const CpuContext& ctx, Activation act, const Tensor& x, const Tensor& dy, Tensor& dx);
void swiglu_forward(const CpuContext& ctx, const Tensor& gate, const Tensor& up, Tensor& y);
void swiglu_backward(const CpuContext& ctx, const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate,
                     Tensor& dup);

// norm.cc
void norm_forward(const CpuContext& ctx, NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta,
                  double eps, Tensor& y, Tensor& mean, Tensor& rstd);
void norm_backward(const CpuContext& ctx, NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                   const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta);

// dropout.cc, add_dropout.cc, add_dropout_norm.cc
void dropout_forward(const CpuContext& ctx, const Tensor& x, const DropoutSpec& dropout, Tensor& y);
void dropout_backward(const CpuContext& ctx, const Tensor& dy, const DropoutSpec& dropout, Tensor& dx);
void add_dropout_forward(const CpuContext& ctx, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                         Tensor& out);
void add_dropout_norm_forward(const CpuContext& ctx, NormKind kind, const Tensor& residual, const Tensor& x,
                              const DropoutSpec& dropout, const Tensor& gamma, const Tensor* beta, double eps,
                              Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd);
void add_dropout_norm_backward(const CpuContext& ctx, NormKind kind, const Tensor& sum, const Tensor& gamma,
                               const Tensor& mean, const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                               Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta);

// embedding.cc, rope.cc
void embedding_forward(const CpuContext& ctx, const Tensor& ids, const Tensor& table, double scale, Positional pos,
                       const Tensor* pos_table, std::int64_t offset, Tensor& out);
void embedding_backward(const CpuContext& ctx, const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                        std::int64_t offset, Tensor& dtable, Tensor* dpos_table);
void rope_forward(const CpuContext& ctx, const Tensor& x, int heads, std::int64_t offset, Tensor& y);
void rope_backward(const CpuContext& ctx, const Tensor& dy, int heads, std::int64_t offset, Tensor& dx);

// cross_entropy.cc, log_softmax.cc
double cross_entropy_forward(const CpuContext& ctx, const Tensor& logits, const Tensor& labels, int pad_id,
                             double eps, SmoothingForm form, Tensor& lse, std::int64_t* count);
void cross_entropy_backward(const CpuContext& ctx, const Tensor& logits, const Tensor& labels, const Tensor& lse,
                            int pad_id, double eps, SmoothingForm form, double dloss, Tensor& dlogits);
void log_softmax_forward(const CpuContext& ctx, const Tensor& x, Tensor& y);

// adam.cc
void adam_update(const CpuContext& ctx, Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr,
                 double beta1, double beta2, double eps, std::int64_t step);

}  // namespace trepro::cpu
