#include "core/backend_checks.h"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace trepro::checks {

void require(bool condition, std::string_view op, std::string_view message) {
  if (!condition) throw std::invalid_argument(std::string(op) + ": " + std::string(message));
}

// require with a message built only when the check fails: the checks run on every op call, and
// building each message there (shape_string, to_string) cost a few % of a decoding step.
template <class Message>
  requires std::invocable<const Message&>
void require(bool condition, std::string_view op, const Message& message) {
  if (!condition) require(false, op, std::string_view(message()));
}

void expect_rank(std::string_view op, std::string_view name, const Tensor& t, int rank) {
  require(t.defined(), op, [&] { return std::string(name) + " is undefined"; });
  require(t.rank() == rank, op, [&] {
    return std::string(name) + " has shape " + shape_string(t.shape()) + ", expected rank " + std::to_string(rank);
  });
}

void expect(std::string_view op, std::string_view name, const Tensor& t, const Shape& shape, DType dtype,
            Device device) {
  require(t.defined(), op, [&] { return std::string(name) + " is undefined"; });
  require(t.shape() == shape, op, [&] {
    return std::string(name) + " has shape " + shape_string(t.shape()) + ", expected " + shape_string(shape);
  });
  require(t.dtype() == dtype, op, [&] {
    return std::string(name) + " has dtype " + std::string(dtype_name(t.dtype())) + ", expected " +
           std::string(dtype_name(dtype));
  });
  require(t.device() == device, op,
          [&] { return std::string(name) + " is on " + std::string(device_name(t.device())) + ", expected " +
              std::string(device_name(device)); });
}

void expect_optional(std::string_view op, std::string_view name, const Tensor* t, const Shape& shape,
                     DType dtype, Device device) {
  if (t) expect(op, name, *t, shape, dtype, device);
}

AttentionDims attention_dims(std::string_view op, DType dtype, Device device, const Tensor& q, const Tensor& k,
                             const Tensor& v, int heads, const Tensor* key_padding) {
  expect_rank(op, "q", q, 3);
  expect_rank(op, "k", k, 3);
  expect_rank(op, "v", v, 3);
  require(heads > 0, op, [&] { return "heads must be positive, got " + std::to_string(heads); });
  AttentionDims d{q.dim(0), q.dim(1), k.dim(1), heads, 0, 0};
  require(q.dim(2) % heads == 0, op, [&] {
    return "q width " + std::to_string(q.dim(2)) + " is not divisible by heads " + std::to_string(heads);
  });
  require(v.dim(2) % heads == 0, op, [&] {
    return "v width " + std::to_string(v.dim(2)) + " is not divisible by heads " + std::to_string(heads);
  });
  d.dk = q.dim(2) / heads;
  d.dv = v.dim(2) / heads;
  expect(op, "q", q, {d.batch, d.tq, heads * d.dk}, dtype, device);
  expect(op, "k", k, {d.batch, d.tk, heads * d.dk}, dtype, device);
  expect(op, "v", v, {d.batch, d.tk, heads * d.dv}, dtype, device);
  expect_optional(op, "key_padding", key_padding, {d.batch, d.tk}, DType::i32, device);
  return d;
}

EmbeddingDims embedding_dims(std::string_view op, DType dtype, Device device, const Tensor& ids,
                             std::string_view table_name, const Tensor& table, std::string_view rows_name,
                             const Tensor& rows, std::string_view positions_name, const Tensor* positions,
                             Positional pos, std::int64_t offset) {
  expect_rank(op, "ids", ids, 2);
  expect_rank(op, table_name, table, 2);
  const EmbeddingDims dims{ids.dim(0), ids.dim(1), table.dim(0), table.dim(1)};
  expect(op, "ids", ids, {dims.batch, dims.time}, DType::i32, device);
  expect(op, table_name, table, {dims.vocab, dims.d}, dtype, device);
  expect(op, rows_name, rows, {dims.batch, dims.time, dims.d}, dtype, device);
  // The positions table is given exactly when positions are learned: anything else is wiring.
  if (pos == Positional::learned) {
    require(positions != nullptr, op,
            [&] { return std::string(positions_name) + " is required for learned positions"; });
    expect_rank(op, positions_name, *positions, 2);
    expect(op, positions_name, *positions, {positions->dim(0), dims.d}, dtype, device);
  } else {
    require(positions == nullptr, op, [&] { return std::string(positions_name) + " is only for learned positions"; });
  }
  if (offset < 0) {
    throw std::out_of_range(std::string(op) + ": position offset " + std::to_string(offset) + " is negative");
  }
  return dims;
}

void embedding_values(std::string_view op, const std::int32_t* ids, const EmbeddingDims& dims,
                      std::string_view positions_name, const Tensor* positions, std::int64_t offset) {
  for (std::int64_t i = 0; i < dims.batch * dims.time; ++i) {
    if (ids[i] < 0 || ids[i] >= dims.vocab) {
      throw std::out_of_range(std::string(op) + ": ids[" + std::to_string(i / dims.time) + ", " +
                              std::to_string(i % dims.time) + "] = " + std::to_string(ids[i]) + " is outside [0, " +
                              std::to_string(dims.vocab) + ")");
    }
  }
  if (positions == nullptr || dims.batch * dims.time == 0) return;
  const std::int64_t max_len = positions->dim(0);
  if (offset + dims.time > max_len) {
    throw std::out_of_range(std::string(op) + ": position " + std::to_string(std::max(offset, max_len)) +
                            " is outside [0, " + std::to_string(max_len) + ") of " + std::string(positions_name));
  }
}

void elementwise_dims(std::string_view op, DType dtype, Device device, const Tensor& x) {
  expect(op, "x", x, x.shape(), dtype, device);
}

void add_inplace_dims(DType dtype, Device device, const Tensor& acc, const Tensor& x) {
  constexpr std::string_view op = "add_inplace";
  expect(op, "acc", acc, acc.shape(), dtype, device);
  expect(op, "x", x, acc.shape(), dtype, device);
}

ConcatTimeDims concat_time_dims(DType dtype, Device device, const Tensor& a, const Tensor& b, const Tensor& out) {
  constexpr std::string_view op = "concat_time";
  expect_rank(op, "a", a, 3);
  expect_rank(op, "b", b, 3);
  const ConcatTimeDims dims{a.dim(0), a.dim(1), b.dim(1), a.dim(2)};
  expect(op, "a", a, {dims.batch, dims.ta, dims.d}, dtype, device);
  expect(op, "b", b, {dims.batch, dims.tb, dims.d}, dtype, device);
  expect(op, "out", out, {dims.batch, dims.ta + dims.tb, dims.d}, dtype, device);
  return dims;
}

void select_batch_dims(DType dtype, Device device, const Tensor& x, const Tensor& indices, const Tensor& out) {
  constexpr std::string_view op = "select_batch";
  require(x.rank() >= 1, op, "x must have a batch dimension");
  expect_rank(op, "indices", indices, 1);
  Shape out_shape = x.shape();
  out_shape[0] = indices.dim(0);
  expect(op, "x", x, x.shape(), dtype, device);
  expect(op, "indices", indices, {indices.dim(0)}, DType::i32, device);
  expect(op, "out", out, out_shape, dtype, device);
}

void upload_source(const Tensor& host) {
  if (host.device() != Device::cpu) throw std::invalid_argument("upload: source is not a host tensor");
  if (host.dtype() != DType::i64) return;
  const std::int64_t* values = host.data<std::int64_t>();
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    if (values[i] < std::numeric_limits<std::int32_t>::min() || values[i] > std::numeric_limits<std::int32_t>::max()) {
      throw std::out_of_range("upload: integer " + std::to_string(values[i]) + " at element " + std::to_string(i) +
                              " does not fit in int32");
    }
  }
}

void select_batch_values(const std::int32_t* indices, std::int64_t count, std::int64_t batch) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (indices[i] < 0 || indices[i] >= batch) {
      throw std::out_of_range("select_batch: indices[" + std::to_string(i) + "] = " + std::to_string(indices[i]) +
                              " is outside [0, " + std::to_string(batch) + ")");
    }
  }
}

namespace {

// What both directions of linear check first: x [N, K], w [M, K], pre [N, M] when act needs it.
LinearDims linear_inputs(std::string_view op, DType dtype, Device device, const Tensor& x, const Tensor& w) {
  expect_rank(op, "x", x, 2);
  expect_rank(op, "w", w, 2);
  const LinearDims dims{x.dim(0), x.dim(1), w.dim(0)};
  expect(op, "x", x, {dims.n, dims.k}, dtype, device);
  expect(op, "w", w, {dims.m, dims.k}, dtype, device);
  return dims;
}

void linear_pre(std::string_view op, DType dtype, Device device, const LinearDims& dims, Activation act,
                const Tensor* pre) {
  require(act == Activation::none || pre != nullptr, op, "pre is required when the activation is not none");
  expect_optional(op, "pre", pre, {dims.n, dims.m}, dtype, device);
}

}  // namespace

LinearDims linear_forward_dims(DType dtype, Device device, const Tensor& x, const Tensor& w, const Tensor* b,
                               Activation act, const Tensor& y, const Tensor* pre) {
  constexpr std::string_view op = "linear_forward";
  const LinearDims dims = linear_inputs(op, dtype, device, x, w);
  expect_optional(op, "b", b, {dims.m}, dtype, device);
  expect(op, "y", y, {dims.n, dims.m}, dtype, device);
  linear_pre(op, dtype, device, dims, act, pre);
  return dims;
}

LinearDims linear_backward_dims(DType dtype, Device device, const Tensor& x, const Tensor& w, const Tensor* pre,
                                Activation act, const Tensor& dy, const Tensor* dx, const Tensor& dw,
                                const Tensor* db) {
  constexpr std::string_view op = "linear_backward";
  const LinearDims dims = linear_inputs(op, dtype, device, x, w);
  linear_pre(op, dtype, device, dims, act, pre);
  expect(op, "dy", dy, {dims.n, dims.m}, dtype, device);
  expect_optional(op, "dx", dx, {dims.n, dims.k}, dtype, device);
  expect(op, "dw", dw, {dims.m, dims.k}, dtype, device);
  expect_optional(op, "db", db, {dims.m}, dtype, device);
  return dims;
}

void activation_forward_dims(DType dtype, Device device, const Tensor& x, const Tensor& y) {
  constexpr std::string_view op = "activation_forward";
  expect(op, "x", x, x.shape(), dtype, device);
  expect(op, "y", y, x.shape(), dtype, device);
}

void activation_backward_dims(DType dtype, Device device, const Tensor& x, const Tensor& dy, const Tensor& dx) {
  constexpr std::string_view op = "activation_backward";
  expect(op, "x", x, x.shape(), dtype, device);
  expect(op, "dy", dy, x.shape(), dtype, device);
  expect(op, "dx", dx, x.shape(), dtype, device);
}

void swiglu_forward_dims(DType dtype, Device device, const Tensor& gate, const Tensor& up, const Tensor& y) {
  constexpr std::string_view op = "swiglu_forward";
  expect_rank(op, "gate", gate, 2);
  expect(op, "gate", gate, gate.shape(), dtype, device);
  expect(op, "up", up, gate.shape(), dtype, device);
  expect(op, "y", y, gate.shape(), dtype, device);
}

void swiglu_backward_dims(DType dtype, Device device, const Tensor& gate, const Tensor& up, const Tensor& dy,
                          const Tensor& dgate, const Tensor& dup) {
  constexpr std::string_view op = "swiglu_backward";
  expect_rank(op, "gate", gate, 2);
  expect(op, "gate", gate, gate.shape(), dtype, device);
  expect(op, "up", up, gate.shape(), dtype, device);
  expect(op, "dy", dy, gate.shape(), dtype, device);
  expect(op, "dgate", dgate, gate.shape(), dtype, device);
  expect(op, "dup", dup, gate.shape(), dtype, device);
}

namespace {

// What both directions of attention check: the inputs, the forward's outputs, the dropout rate.
AttentionDims attention_io(std::string_view op, DType dtype, Device device, const Tensor& q, const Tensor& k,
                           const Tensor& v, int heads, const Tensor* key_padding, const DropoutSpec& dropout,
                           const Tensor& out, const Tensor& lse) {
  const AttentionDims d = attention_dims(op, dtype, device, q, k, v, heads, key_padding);
  expect(op, "out", out, {d.batch, d.tq, d.heads * d.dv}, dtype, device);
  expect(op, "lse", lse, {d.batch, d.heads, d.tq}, dtype, device);
  require(dropout.p >= 0.0 && dropout.p < 1.0, op, "dropout p must be in [0, 1)");
  return d;
}

}  // namespace

AttentionDims attention_forward_dims(DType dtype, Device device, const Tensor& q, const Tensor& k, const Tensor& v,
                                     int heads, const Tensor* key_padding, const DropoutSpec& dropout,
                                     const Tensor& out, const Tensor& lse) {
  return attention_io("attention_forward", dtype, device, q, k, v, heads, key_padding, dropout, out, lse);
}

AttentionDims attention_backward_dims(DType dtype, Device device, const Tensor& q, const Tensor& k, const Tensor& v,
                                      int heads, const Tensor* key_padding, const DropoutSpec& dropout,
                                      const Tensor& out, const Tensor& lse, const Tensor& dout, const Tensor& dq,
                                      const Tensor& dk, const Tensor& dv) {
  constexpr std::string_view op = "attention_backward";
  const AttentionDims d = attention_io(op, dtype, device, q, k, v, heads, key_padding, dropout, out, lse);
  expect(op, "dout", dout, out.shape(), dtype, device);
  expect(op, "dq", dq, q.shape(), dtype, device);
  expect(op, "dk", dk, k.shape(), dtype, device);
  expect(op, "dv", dv, v.shape(), dtype, device);
  return d;
}

namespace {

// beta (forward) or dbeta (backward) is required for layer norm and must be null for rms.
void norm_bias(std::string_view op, NormKind kind, std::string_view name, const Tensor* bias) {
  if (kind == NormKind::layer) {
    require(bias != nullptr, op, [&] { return std::string(name) + " is required for layer norm"; });
  } else {
    require(bias == nullptr, op, [&] { return std::string(name) + " must be null for rms norm"; });
  }
}

NormDims norm_rows(std::string_view op, std::string_view x_name, const Tensor& x) {
  expect_rank(op, x_name, x, 2);
  const NormDims dims{x.dim(0), x.dim(1)};
  require(dims.d > 0, op, [&] { return std::string(x_name) + " has no features: shape " + shape_string(x.shape()); });
  return dims;
}

void dropout_p(std::string_view op, const DropoutSpec& dropout) {
  require(dropout.p >= 0 && dropout.p < 1, op, [&] { return "p must be in [0, 1), got " + std::to_string(dropout.p); });
}

// residual, x (and the sum of the Post-LN form) [N, d], as the residual ops take them.
void residual_inputs(std::string_view op, DType dtype, Device device, const Tensor& residual, const Tensor& x) {
  expect_rank(op, "residual", residual, 2);
  expect(op, "residual", residual, residual.shape(), dtype, device);
  expect(op, "x", x, residual.shape(), dtype, device);
}

}  // namespace

NormDims norm_forward_dims(std::string_view op, DType dtype, Device device, NormKind kind, std::string_view x_name,
                           const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, const Tensor& y,
                           const Tensor& mean, const Tensor& rstd) {
  const NormDims dims = norm_rows(op, x_name, x);
  const std::int64_t n = dims.n, d = dims.d;
  require(eps >= 0, op, [&] { return "eps must be >= 0, got " + std::to_string(eps); });
  norm_bias(op, kind, "beta", beta);
  expect(op, x_name, x, {n, d}, dtype, device);
  expect(op, "gamma", gamma, {d}, dtype, device);
  expect_optional(op, "beta", beta, {d}, dtype, device);
  expect(op, "y", y, {n, d}, dtype, device);
  expect(op, "mean", mean, {n}, dtype, device);
  expect(op, "rstd", rstd, {n}, dtype, device);
  return dims;
}

NormDims norm_backward_dims(std::string_view op, DType dtype, Device device, NormKind kind, std::string_view x_name,
                            const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                            const Tensor& dy, std::string_view dx_name, const Tensor& dx, const Tensor& dgamma,
                            const Tensor* dbeta) {
  const NormDims dims = norm_rows(op, x_name, x);
  const std::int64_t n = dims.n, d = dims.d;
  norm_bias(op, kind, "dbeta", dbeta);
  expect(op, x_name, x, {n, d}, dtype, device);
  expect(op, "gamma", gamma, {d}, dtype, device);
  expect(op, "mean", mean, {n}, dtype, device);
  expect(op, "rstd", rstd, {n}, dtype, device);
  expect(op, "dy", dy, {n, d}, dtype, device);
  expect(op, dx_name, dx, {n, d}, dtype, device);
  expect(op, "dgamma", dgamma, {d}, dtype, device);
  expect_optional(op, "dbeta", dbeta, {d}, dtype, device);
  return dims;
}

void dropout_dims(std::string_view op, DType dtype, Device device, std::string_view in_name, const Tensor& in,
                  const DropoutSpec& dropout, std::string_view out_name, const Tensor& out) {
  dropout_p(op, dropout);
  expect(op, in_name, in, in.shape(), dtype, device);
  expect(op, out_name, out, in.shape(), dtype, device);
}

void add_dropout_forward_dims(DType dtype, Device device, const Tensor& residual, const Tensor& x,
                              const DropoutSpec& dropout, const Tensor& out) {
  constexpr std::string_view op = "add_dropout_forward";
  residual_inputs(op, dtype, device, residual, x);
  dropout_p(op, dropout);
  expect(op, "out", out, residual.shape(), dtype, device);
}

NormDims add_dropout_norm_forward_dims(DType dtype, Device device, NormKind kind, const Tensor& residual,
                                       const Tensor& x, const DropoutSpec& dropout, const Tensor& gamma,
                                       const Tensor* beta, double eps, const Tensor& sum, const Tensor& y,
                                       const Tensor& mean, const Tensor& rstd) {
  constexpr std::string_view op = "add_dropout_norm_forward";
  residual_inputs(op, dtype, device, residual, x);
  expect(op, "sum", sum, residual.shape(), dtype, device);
  dropout_p(op, dropout);
  return norm_forward_dims(op, dtype, device, kind, "sum", sum, gamma, beta, eps, y, mean, rstd);
}

NormDims add_dropout_norm_backward_dims(DType dtype, Device device, NormKind kind, const Tensor& sum,
                                        const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                                        const DropoutSpec& dropout, const Tensor& dy, const Tensor& dresidual,
                                        const Tensor& dx, const Tensor& dgamma, const Tensor* dbeta) {
  constexpr std::string_view op = "add_dropout_norm_backward";
  dropout_p(op, dropout);
  const NormDims dims = norm_backward_dims(op, dtype, device, kind, "sum", sum, gamma, mean, rstd, dy, "dresidual",
                                           dresidual, dgamma, dbeta);
  expect(op, "dx", dx, sum.shape(), dtype, device);
  return dims;
}

RopeDims rope_dims(std::string_view op, DType dtype, Device device, std::string_view x_name, const Tensor& x, int heads,
                   std::int64_t offset, std::string_view y_name, const Tensor& y) {
  expect_rank(op, x_name, x, 3);
  require(heads > 0, op, [&] { return "heads must be positive, got " + std::to_string(heads); });
  const std::int64_t batch = x.dim(0), time = x.dim(1), width = x.dim(2);
  require(width % heads == 0, op, [&] {
    return std::string(x_name) + " width " + std::to_string(width) + " is not divisible by heads " +
           std::to_string(heads);
  });
  const RopeDims dims{batch, time, width, width / heads};
  require(dims.head_width % 2 == 0, op,
          [&] { return "head width " + std::to_string(dims.head_width) + " is odd: rope rotates pairs"; });
  expect(op, x_name, x, {batch, time, width}, dtype, device);
  expect(op, y_name, y, {batch, time, width}, dtype, device);
  if (offset < 0) {
    throw std::out_of_range(std::string(op) + ": position offset " + std::to_string(offset) + " is negative");
  }
  return dims;
}

namespace {

CrossEntropyDims cross_entropy_inputs(std::string_view op, DType dtype, Device device, const Tensor& logits,
                                      const Tensor& labels, const Tensor& lse, double eps, SmoothingForm form) {
  expect_rank(op, "logits", logits, 2);
  const CrossEntropyDims dims{logits.dim(0), logits.dim(1)};
  expect(op, "logits", logits, {dims.rows, dims.vocab}, dtype, device);
  expect(op, "labels", labels, {dims.rows}, DType::i32, device);
  expect(op, "lse", lse, {dims.rows}, dtype, device);
  require(dims.vocab > 0, op, "logits has no classes");
  require(eps >= 0.0 && eps <= 1.0, op, "label smoothing eps must be in [0, 1]");
  require(form == SmoothingForm::uniform || dims.vocab > 1, op, "the fairseq form needs at least 2 classes");
  return dims;
}

}  // namespace

CrossEntropyDims cross_entropy_forward_dims(DType dtype, Device device, const Tensor& logits, const Tensor& labels,
                                            double eps, SmoothingForm form, const Tensor& lse) {
  return cross_entropy_inputs("cross_entropy_forward", dtype, device, logits, labels, lse, eps, form);
}

CrossEntropyDims cross_entropy_backward_dims(DType dtype, Device device, const Tensor& logits, const Tensor& labels,
                                             const Tensor& lse, double eps, SmoothingForm form, const Tensor& dlogits) {
  constexpr std::string_view op = "cross_entropy_backward";
  const CrossEntropyDims dims = cross_entropy_inputs(op, dtype, device, logits, labels, lse, eps, form);
  expect(op, "dlogits", dlogits, {dims.rows, dims.vocab}, dtype, device);
  return dims;
}

std::int64_t cross_entropy_values(std::string_view op, const std::int32_t* labels, const CrossEntropyDims& dims,
                                  int pad_id) {
  std::int64_t count = 0;
  for (std::int64_t n = 0; n < dims.rows; ++n) {
    if (labels[n] == pad_id) continue;
    // A label that is neither pad_id nor a class is a data bug, reported by value.
    if (labels[n] < 0 || labels[n] >= dims.vocab) {
      throw std::out_of_range(std::string(op) + ": labels[" + std::to_string(n) + "] = " + std::to_string(labels[n]) +
                              " is outside [0, " + std::to_string(dims.vocab) + ") and is not pad_id " +
                              std::to_string(pad_id));
    }
    ++count;
  }
  return count;
}

LogSoftmaxDims log_softmax_forward_dims(DType dtype, Device device, const Tensor& x, const Tensor& y) {
  constexpr std::string_view op = "log_softmax_forward";
  expect_rank(op, "x", x, 2);
  const LogSoftmaxDims dims{x.dim(0), x.dim(1)};
  require(dims.vocab > 0, op, "x has no classes");
  expect(op, "x", x, {dims.rows, dims.vocab}, dtype, device);
  expect(op, "y", y, {dims.rows, dims.vocab}, dtype, device);
  return dims;
}

void adam_update_dims(DType dtype, Device device, const Tensor& param, const Tensor& grad, const Tensor& m,
                      const Tensor& v, double beta1, double beta2, std::int64_t step) {
  constexpr std::string_view op = "adam_update";
  // Bias correction divides by 1 - beta^step, which is 0 at step 0.
  require(step >= 1, op, [&] { return "step must be >= 1, got " + std::to_string(step); });
  require(beta1 >= 0 && beta1 < 1, op, [&] { return "beta1 must be in [0, 1), got " + std::to_string(beta1); });
  require(beta2 >= 0 && beta2 < 1, op, [&] { return "beta2 must be in [0, 1), got " + std::to_string(beta2); });
  expect(op, "param", param, param.shape(), dtype, device);
  expect(op, "grad", grad, param.shape(), dtype, device);
  expect(op, "m", m, param.shape(), dtype, device);
  expect(op, "v", v, param.shape(), dtype, device);
}

}  // namespace trepro::checks
