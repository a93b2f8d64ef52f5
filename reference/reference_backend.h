// The reference backend: every op written plainly with Eigen, templated on the scalar.
// ReferenceBackend<double> is the ground truth for every accuracy measurement in the project.
//
// Each op is a function template in its own header (reference/<op>.h, the maths and shapes in
// a comment next to the code); this class only routes the Backend interface to them.
#pragma once

#include "core/backend.h"

namespace trepro::reference {

template <class T>
class ReferenceBackend final : public Backend {
 public:
  std::string name() const override;
  DType dtype() const override { return dtype_of<T>(); }
  int threads() const override;
  Device device() const override { return Device::cpu; }

  Tensor empty(const Shape& shape, DType dtype) override;
  Tensor zeros(const Shape& shape, DType dtype) override;
  Tensor upload(const Tensor& host) override;
  Tensor download(const Tensor& device_tensor) override;

  void fill(Tensor& x, double value) override;
  void add_inplace(Tensor& acc, const Tensor& x) override;
  void scale_inplace(Tensor& x, double factor) override;
  double sum_squares(const Tensor& x) override;
  bool all_finite(const Tensor& x) override;

  void concat_time(const Tensor& a, const Tensor& b, Tensor& out) override;
  void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) override;

  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override;
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override;

  void activation_forward(Activation act, const Tensor& x, Tensor& y) override;
  void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) override;
  void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) override;
  void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate,
                       Tensor& dup) override;

  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                         bool causal, double scale, const DropoutSpec& dropout, Tensor& out, Tensor& lse) override;
  void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                          bool causal, double scale, const DropoutSpec& dropout, const Tensor& out,
                          const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) override;

  void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, Tensor& y,
                    Tensor& mean, Tensor& rstd) override;
  void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                     const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override;

  void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) override;
  void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) override;
  void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                           Tensor& out) override;
  void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                const Tensor& gamma, const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                Tensor& mean, Tensor& rstd) override;
  void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                                 Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override;

  void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                         const Tensor* pos_table, std::int64_t offset, Tensor& out) override;
  void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos, std::int64_t offset,
                          Tensor& dtable, Tensor* dpos_table) override;

  void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) override;
  void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) override;

  double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                               SmoothingForm form, Tensor& lse, std::int64_t* count) override;
  void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id,
                              double eps, SmoothingForm form, double dloss, Tensor& dlogits) override;
  void log_softmax_forward(const Tensor& x, Tensor& y) override;

  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1, double beta2,
                   double eps, std::int64_t step) override;
};

extern template class ReferenceBackend<float>;
extern template class ReferenceBackend<double>;

}  // namespace trepro::reference
