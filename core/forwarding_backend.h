// A Backend that forwards every op to another backend, so that a decorator (a backend that
// watches or changes a few ops of another: conformance/model/relu_kink_watch.h, the bf16
// emulation of experiments/kernel_accuracy/) overrides only the ops it changes and inherits the
// rest of the interface unchanged, including ops added to core/backend.h later.
//
// What it is credited with (Backend::provides) is said at construction, never assumed: a
// decorator of a whole backend provides what its inner backend provides; a partial backend (a
// few ops of its own, the rest forwarded so that a model still runs) provides only the ops it
// lists, so that the conformance suite reports the others as not provided instead of crediting
// it with the inner backend's work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"

namespace trepro {

enum class Decorates { whole_backend };

class ForwardingBackend : public Backend {
 public:
  // `inner` must outlive this backend. A decorator of the whole of `inner`.
  ForwardingBackend(Backend& inner, Decorates) : inner_(inner), whole_(true) {}
  // A partial backend: it computes the ops of `own` itself (it overrides them) and provides only
  // those.
  ForwardingBackend(Backend& inner, std::vector<OpDirection> own) : inner_(inner), whole_(false), own_(std::move(own)) {}

  bool provides(OpDirection op) const override {
    if (whole_) return inner_.provides(op);
    return std::find(own_.begin(), own_.end(), op) != own_.end();
  }

  std::string name() const override { return inner_.name(); }
  DType dtype() const override { return inner_.dtype(); }
  Device device() const override { return inner_.device(); }
  int threads() const override { return inner_.threads(); }
  void set_precision(Precision precision) override { inner_.set_precision(precision); }

  Tensor empty(const Shape& shape, DType dtype) override { return inner_.empty(shape, dtype); }
  Tensor zeros(const Shape& shape, DType dtype) override { return inner_.zeros(shape, dtype); }
  Tensor upload(const Tensor& host) override { return inner_.upload(host); }
  Tensor download(const Tensor& device_tensor) override { return inner_.download(device_tensor); }

  void fill(Tensor& x, double value) override { inner_.fill(x, value); }
  void add_inplace(Tensor& acc, const Tensor& x) override { inner_.add_inplace(acc, x); }
  void scale_inplace(Tensor& x, double factor) override { inner_.scale_inplace(x, factor); }
  double sum_squares(const Tensor& x) override { return inner_.sum_squares(x); }
  bool all_finite(const Tensor& x) override { return inner_.all_finite(x); }

  void concat_time(const Tensor& a, const Tensor& b, Tensor& out) override {
    forwarding({Op::concat_time, Direction::forward});
    inner_.concat_time(a, b, out);
  }
  void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) override {
    forwarding({Op::select_batch, Direction::forward});
    inner_.select_batch(x, indices, out);
  }

  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override {
    forwarding({Op::linear, Direction::forward});
    inner_.linear_forward(x, w, b, act, y, pre);
  }
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override {
    forwarding({Op::linear, Direction::backward});
    inner_.linear_backward(x, w, pre, act, dy, dx, dw, db);
  }

  void activation_forward(Activation act, const Tensor& x, Tensor& y) override {
    forwarding({Op::activation, Direction::forward});
    inner_.activation_forward(act, x, y);
  }
  void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) override {
    forwarding({Op::activation, Direction::backward});
    inner_.activation_backward(act, x, dy, dx);
  }
  void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) override {
    forwarding({Op::swiglu, Direction::forward});
    inner_.swiglu_forward(gate, up, y);
  }
  void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate,
                       Tensor& dup) override {
    forwarding({Op::swiglu, Direction::backward});
    inner_.swiglu_backward(gate, up, dy, dgate, dup);
  }

  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                         bool causal, double scale, const DropoutSpec& dropout, Tensor& out, Tensor& lse) override {
    forwarding({Op::attention, Direction::forward});
    inner_.attention_forward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse);
  }
  void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                          bool causal, double scale, const DropoutSpec& dropout, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) override {
    forwarding({Op::attention, Direction::backward});
    inner_.attention_backward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse, dout, dq, dk, dv);
  }

  void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, Tensor& y,
                    Tensor& mean, Tensor& rstd) override {
    forwarding({Op::norm, Direction::forward});
    inner_.norm_forward(kind, x, gamma, beta, eps, y, mean, rstd);
  }
  void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                     const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override {
    forwarding({Op::norm, Direction::backward});
    inner_.norm_backward(kind, x, gamma, mean, rstd, dy, dx, dgamma, dbeta);
  }

  void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) override {
    forwarding({Op::dropout, Direction::forward});
    inner_.dropout_forward(x, dropout, y);
  }
  void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) override {
    forwarding({Op::dropout, Direction::backward});
    inner_.dropout_backward(dy, dropout, dx);
  }
  void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) override {
    forwarding({Op::add_dropout, Direction::forward});
    inner_.add_dropout_forward(residual, x, dropout, out);
  }
  void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                const Tensor& gamma, const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                Tensor& mean, Tensor& rstd) override {
    forwarding({Op::add_dropout_norm, Direction::forward});
    inner_.add_dropout_norm_forward(kind, residual, x, dropout, gamma, beta, eps, sum, y, mean, rstd);
  }
  void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy, Tensor& dresidual,
                                 Tensor& dx, Tensor& dgamma, Tensor* dbeta) override {
    forwarding({Op::add_dropout_norm, Direction::backward});
    inner_.add_dropout_norm_backward(kind, sum, gamma, mean, rstd, dropout, dy, dresidual, dx, dgamma, dbeta);
  }

  void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos, const Tensor* pos_table,
                         std::int64_t offset, Tensor& out) override {
    forwarding({Op::embedding, Direction::forward});
    inner_.embedding_forward(ids, table, scale, pos, pos_table, offset, out);
  }
  void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos, std::int64_t offset,
                          Tensor& dtable, Tensor* dpos_table) override {
    forwarding({Op::embedding, Direction::backward});
    inner_.embedding_backward(ids, dout, scale, pos, offset, dtable, dpos_table);
  }

  void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) override {
    forwarding({Op::rope, Direction::forward});
    inner_.rope_forward(x, heads, offset, y);
  }
  void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) override {
    forwarding({Op::rope, Direction::backward});
    inner_.rope_backward(dy, heads, offset, dx);
  }

  double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps, SmoothingForm form,
                               Tensor& lse, std::int64_t* count) override {
    forwarding({Op::cross_entropy, Direction::forward});
    return inner_.cross_entropy_forward(logits, labels, pad_id, eps, form, lse, count);
  }
  void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id, double eps,
                              SmoothingForm form, double dloss, Tensor& dlogits) override {
    forwarding({Op::cross_entropy, Direction::backward});
    inner_.cross_entropy_backward(logits, labels, lse, pad_id, eps, form, dloss, dlogits);
  }
  void log_softmax_forward(const Tensor& x, Tensor& y) override {
    forwarding({Op::log_softmax, Direction::forward});
    inner_.log_softmax_forward(x, y);
  }

  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1, double beta2,
                   double eps, std::int64_t step) override {
    forwarding({Op::adam, Direction::forward});
    inner_.adam_update(param, grad, m, v, lr, beta1, beta2, eps, step);
  }

 protected:
  Backend& inner() const { return inner_; }
  // Called before every op is forwarded to the inner backend: the conformance suite's guard
  // (conformance/support/provided_ops_guard.h) refuses there the ops a backend does not provide.
  virtual void forwarding(OpDirection op) { static_cast<void>(op); }

 private:
  Backend& inner_;
  bool whole_;
  std::vector<OpDirection> own_;
};

}  // namespace trepro
