// Argument checks shared by every backend, so that all of them reject the same bad calls with
// the same message: "<op>: <tensor> has shape [..], expected [..]".
//
// One `<op>_dims` per Backend op checks ranks, shapes, dtypes, devices and scalar arguments and
// returns the dims the op works with; `<op>_values` checks what only the data can tell (ids,
// indices, labels in range), on host copies, before the op writes anything, so that a rejected
// call leaves its outputs untouched. `dtype` and `device` are the backend's.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/backend.h"

namespace trepro::checks {

// Throws std::invalid_argument unless t is defined, on `device`, of `dtype`, with `shape`.
void expect(std::string_view op, std::string_view name, const Tensor& t, const Shape& shape,
            DType dtype, Device device);
// Same, for a tensor that may be null (then nothing is checked).
void expect_optional(std::string_view op, std::string_view name, const Tensor* t, const Shape& shape,
                     DType dtype, Device device);
// Throws std::invalid_argument unless t has rank `rank`.
void expect_rank(std::string_view op, std::string_view name, const Tensor& t, int rank);
// Throws std::invalid_argument with "<op>: <message>" unless `condition`.
void require(bool condition, std::string_view op, std::string_view message);

// The dims every attention op derives from q, k, v, with all checks done.
struct AttentionDims {
  std::int64_t batch, tq, tk, heads, dk, dv;
};
AttentionDims attention_dims(std::string_view op, DType dtype, Device device, const Tensor& q,
                             const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding);

// The dims of embedding_forward / embedding_backward, with every shape checked: ids [B, T]
// int32, the table [V, d] (`table_name`: "table" or "dtable"), the rows [B, T, d] ("out" or
// "dout"), and `positions` [max_len, d] ("pos_table" or "dpos_table") exactly when pos is
// learned. A negative offset throws std::out_of_range.
struct EmbeddingDims {
  std::int64_t batch, time, vocab, d;
};
EmbeddingDims embedding_dims(std::string_view op, DType dtype, Device device, const Tensor& ids,
                             std::string_view table_name, const Tensor& table, std::string_view rows_name,
                             const Tensor& rows, std::string_view positions_name, const Tensor* positions,
                             Positional pos, std::int64_t offset);
// The values, checked before anything is written: every id (`ids`: B * T int32 on the host) in
// [0, V), the first bad one reported by (b, t) and value; then, for learned positions, the last
// position offset + T - 1 inside the table's max_len rows (reported as the first one outside).
void embedding_values(std::string_view op, const std::int32_t* ids, const EmbeddingDims& dims,
                      std::string_view positions_name, const Tensor* positions, std::int64_t offset);

// ---- memory ---------------------------------------------------------------------------------
// upload: `host` is a host tensor, and an int64 one (ids, labels, masks read from files) holds
// only values that fit the int32 every backend stores them as, the first that does not reported
// with its element. Floating tensors and int32 ones need no check.
void upload_source(const Tensor& host);

// ---- elementwise ----------------------------------------------------------------------------
// fill, scale_inplace, sum_squares, all_finite (`op`): x of any shape.
void elementwise_dims(std::string_view op, DType dtype, Device device, const Tensor& x);
// add_inplace: x of acc's shape.
void add_inplace_dims(DType dtype, Device device, const Tensor& acc, const Tensor& x);

// ---- decoding cache -------------------------------------------------------------------------
struct ConcatTimeDims {
  std::int64_t batch, ta, tb, d;
};
ConcatTimeDims concat_time_dims(DType dtype, Device device, const Tensor& a, const Tensor& b, const Tensor& out);
void select_batch_dims(DType dtype, Device device, const Tensor& x, const Tensor& indices, const Tensor& out);
// Every index (`count` int32 on the host) in [0, batch), the first bad one reported.
void select_batch_values(const std::int32_t* indices, std::int64_t count, std::int64_t batch);

// ---- linear, activations --------------------------------------------------------------------
// x [N, K], w [M, K].
struct LinearDims {
  std::int64_t n, k, m;
};
LinearDims linear_forward_dims(DType dtype, Device device, const Tensor& x, const Tensor& w, const Tensor* b,
                               Activation act, const Tensor& y, const Tensor* pre);
LinearDims linear_backward_dims(DType dtype, Device device, const Tensor& x, const Tensor& w, const Tensor* pre,
                                Activation act, const Tensor& dy, const Tensor* dx, const Tensor& dw, const Tensor* db);
void activation_forward_dims(DType dtype, Device device, const Tensor& x, const Tensor& y);
void activation_backward_dims(DType dtype, Device device, const Tensor& x, const Tensor& dy, const Tensor& dx);
void swiglu_forward_dims(DType dtype, Device device, const Tensor& gate, const Tensor& up, const Tensor& y);
void swiglu_backward_dims(DType dtype, Device device, const Tensor& gate, const Tensor& up, const Tensor& dy,
                          const Tensor& dgate, const Tensor& dup);

// ---- attention ------------------------------------------------------------------------------
AttentionDims attention_forward_dims(DType dtype, Device device, const Tensor& q, const Tensor& k, const Tensor& v,
                                     int heads, const Tensor* key_padding, const DropoutSpec& dropout,
                                     const Tensor& out, const Tensor& lse);
AttentionDims attention_backward_dims(DType dtype, Device device, const Tensor& q, const Tensor& k, const Tensor& v,
                                      int heads, const Tensor* key_padding, const DropoutSpec& dropout,
                                      const Tensor& out, const Tensor& lse, const Tensor& dout, const Tensor& dq,
                                      const Tensor& dk, const Tensor& dv);

// ---- norm and the residual ops --------------------------------------------------------------
// x [N, d]. `op` and the names of x and dx are the caller's, so that the fused residual ops,
// which normalize their sum, report errors as their own.
struct NormDims {
  std::int64_t n, d;
};
NormDims norm_forward_dims(std::string_view op, DType dtype, Device device, NormKind kind, std::string_view x_name,
                           const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, const Tensor& y,
                           const Tensor& mean, const Tensor& rstd);
NormDims norm_backward_dims(std::string_view op, DType dtype, Device device, NormKind kind, std::string_view x_name,
                            const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                            const Tensor& dy, std::string_view dx_name, const Tensor& dx, const Tensor& dgamma,
                            const Tensor* dbeta);
// dropout_forward / dropout_backward (`op`): p in [0, 1), out of in's shape.
void dropout_dims(std::string_view op, DType dtype, Device device, std::string_view in_name, const Tensor& in,
                  const DropoutSpec& dropout, std::string_view out_name, const Tensor& out);
void add_dropout_forward_dims(DType dtype, Device device, const Tensor& residual, const Tensor& x,
                              const DropoutSpec& dropout, const Tensor& out);
NormDims add_dropout_norm_forward_dims(DType dtype, Device device, NormKind kind, const Tensor& residual,
                                       const Tensor& x, const DropoutSpec& dropout, const Tensor& gamma,
                                       const Tensor* beta, double eps, const Tensor& sum, const Tensor& y,
                                       const Tensor& mean, const Tensor& rstd);
NormDims add_dropout_norm_backward_dims(DType dtype, Device device, NormKind kind, const Tensor& sum,
                                        const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                                        const DropoutSpec& dropout, const Tensor& dy, const Tensor& dresidual,
                                        const Tensor& dx, const Tensor& dgamma, const Tensor* dbeta);

// ---- rope -----------------------------------------------------------------------------------
// rope_forward (x, y) / rope_backward (dy, dx) under `op` and those names: x [B, T, heads * d]
// with d even. A negative offset throws std::out_of_range.
struct RopeDims {
  std::int64_t batch, time, width, head_width;
};
RopeDims rope_dims(std::string_view op, DType dtype, Device device, std::string_view x_name, const Tensor& x, int heads,
                   std::int64_t offset, std::string_view y_name, const Tensor& y);

// ---- loss, log_softmax ----------------------------------------------------------------------
// logits [N, V], labels [N] int32, lse [N].
struct CrossEntropyDims {
  std::int64_t rows, vocab;
};
CrossEntropyDims cross_entropy_forward_dims(DType dtype, Device device, const Tensor& logits, const Tensor& labels,
                                            double eps, SmoothingForm form, const Tensor& lse);
CrossEntropyDims cross_entropy_backward_dims(DType dtype, Device device, const Tensor& logits, const Tensor& labels,
                                             const Tensor& lse, double eps, SmoothingForm form, const Tensor& dlogits);
// Every label (`labels`: N int32 on the host) is pad_id or a class in [0, V), the first bad one
// reported (std::out_of_range). Returns C, the count of rows that are not pad_id.
std::int64_t cross_entropy_values(std::string_view op, const std::int32_t* labels, const CrossEntropyDims& dims,
                                  int pad_id);
// x, y [N, V], V > 0.
struct LogSoftmaxDims {
  std::int64_t rows, vocab;
};
LogSoftmaxDims log_softmax_forward_dims(DType dtype, Device device, const Tensor& x, const Tensor& y);

// ---- optimizer ------------------------------------------------------------------------------
void adam_update_dims(DType dtype, Device device, const Tensor& param, const Tensor& grad, const Tensor& m,
                      const Tensor& v, double beta1, double beta2, std::int64_t step);

}  // namespace trepro::checks
