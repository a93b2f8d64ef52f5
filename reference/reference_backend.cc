#include "reference/reference_backend.h"

#include <cstring>
#include <stdexcept>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/backend_checks.h"
#include "reference/activation.h"
#include "reference/adam.h"
#include "reference/add_dropout.h"
#include "reference/attention.h"
#include "reference/concat_time.h"
#include "reference/cross_entropy.h"
#include "reference/dropout.h"
#include "reference/elementwise.h"
#include "reference/embedding.h"
#include "reference/linear.h"
#include "reference/log_softmax.h"
#include "reference/norm.h"
#include "reference/rope.h"
#include "reference/select_batch.h"
#include "reference/swiglu.h"

namespace trepro::reference {

template <class T> int ReferenceBackend<T>::threads() const {
#ifdef _OPENMP
  return omp_get_max_threads();  // Eigen's GEMM threads
#else
  return 1;
#endif
}

template <class T> std::string ReferenceBackend<T>::name() const {
  return std::is_same_v<T, float> ? "reference-f32" : "reference-f64";
}

template <class T> Tensor ReferenceBackend<T>::empty(const Shape& shape, DType dtype) {
  return Tensor::empty(shape, dtype);
}
template <class T> Tensor ReferenceBackend<T>::zeros(const Shape& shape, DType dtype) {
  return Tensor::zeros(shape, dtype);
}

template <class T> Tensor ReferenceBackend<T>::upload(const Tensor& host) {
  checks::upload_source(host);
  const bool floating = host.dtype() == DType::f32 || host.dtype() == DType::f64;
  Tensor out = Tensor::empty(host.shape(), floating ? dtype() : DType::i32);
  for (std::int64_t i = 0; i < host.numel(); ++i) out.set(i, host.at(i));
  return out;
}

template <class T> Tensor ReferenceBackend<T>::download(const Tensor& device_tensor) { return device_tensor.clone(); }

template <class T> void ReferenceBackend<T>::fill(Tensor& x, double value) { reference::fill<T>(x, value); }
template <class T> void ReferenceBackend<T>::add_inplace(Tensor& acc, const Tensor& x) { reference::add_inplace<T>(acc, x); }
template <class T> void ReferenceBackend<T>::scale_inplace(Tensor& x, double factor) { reference::scale_inplace<T>(x, factor); }
template <class T> double ReferenceBackend<T>::sum_squares(const Tensor& x) { return reference::sum_squares<T>(x); }
template <class T> bool ReferenceBackend<T>::all_finite(const Tensor& x) { return reference::all_finite<T>(x); }

template <class T> void ReferenceBackend<T>::concat_time(const Tensor& a, const Tensor& b, Tensor& out) {
  reference::concat_time<T>(a, b, out);
}
template <class T>
void ReferenceBackend<T>::select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  reference::select_batch<T>(x, indices, out);
}

template <class T>
void ReferenceBackend<T>::linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                                         Tensor* pre) {
  reference::linear_forward<T>(x, w, b, act, y, pre);
}
template <class T>
void ReferenceBackend<T>::linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act,
                                          const Tensor& dy, Tensor* dx, Tensor& dw, Tensor* db) {
  reference::linear_backward<T>(x, w, pre, act, dy, dx, dw, db);
}

template <class T> void ReferenceBackend<T>::activation_forward(Activation act, const Tensor& x, Tensor& y) {
  reference::activation_forward<T>(act, x, y);
}
template <class T>
void ReferenceBackend<T>::activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) {
  reference::activation_backward<T>(act, x, dy, dx);
}
template <class T> void ReferenceBackend<T>::swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
  reference::swiglu_forward<T>(gate, up, y);
}
template <class T>
void ReferenceBackend<T>::swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate,
                                          Tensor& dup) {
  reference::swiglu_backward<T>(gate, up, dy, dgate, dup);
}

template <class T>
void ReferenceBackend<T>::attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                            const Tensor* key_padding, bool causal, double scale,
                                            const DropoutSpec& dropout, Tensor& out, Tensor& lse) {
  reference::attention_forward<T>(q, k, v, heads, key_padding, causal, scale, dropout, out, lse);
}
template <class T>
void ReferenceBackend<T>::attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                             const Tensor* key_padding, bool causal, double scale,
                                             const DropoutSpec& dropout, const Tensor& out, const Tensor& lse,
                                             const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) {
  reference::attention_backward<T>(q, k, v, heads, key_padding, causal, scale, dropout, out, lse, dout, dq, dk, dv);
}

template <class T>
void ReferenceBackend<T>::norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta,
                                       double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  reference::norm_forward<T>(kind, x, gamma, beta, eps, y, mean, rstd);
}
template <class T>
void ReferenceBackend<T>::norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                        const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma,
                                        Tensor* dbeta) {
  reference::norm_backward<T>(kind, x, gamma, mean, rstd, dy, dx, dgamma, dbeta);
}

template <class T>
void ReferenceBackend<T>::dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) {
  reference::dropout_forward<T>(x, dropout, y);
}
template <class T>
void ReferenceBackend<T>::dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) {
  reference::dropout_backward<T>(dy, dropout, dx);
}
template <class T>
void ReferenceBackend<T>::add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                              Tensor& out) {
  reference::add_dropout_forward<T>(residual, x, dropout, out);
}
template <class T>
void ReferenceBackend<T>::add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                                                   const DropoutSpec& dropout, const Tensor& gamma,
                                                   const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                                   Tensor& mean, Tensor& rstd) {
  reference::add_dropout_norm_forward<T>(kind, residual, x, dropout, gamma, beta, eps, sum, y, mean, rstd);
}
template <class T>
void ReferenceBackend<T>::add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma,
                                                    const Tensor& mean, const Tensor& rstd,
                                                    const DropoutSpec& dropout, const Tensor& dy,
                                                    Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  reference::add_dropout_norm_backward<T>(kind, sum, gamma, mean, rstd, dropout, dy, dresidual, dx, dgamma, dbeta);
}

template <class T>
void ReferenceBackend<T>::embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                                            const Tensor* pos_table, std::int64_t offset, Tensor& out) {
  reference::embedding_forward<T>(ids, table, scale, pos, pos_table, offset, out);
}
template <class T>
void ReferenceBackend<T>::embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                                             std::int64_t offset, Tensor& dtable, Tensor* dpos_table) {
  reference::embedding_backward<T>(ids, dout, scale, pos, offset, dtable, dpos_table);
}

template <class T>
void ReferenceBackend<T>::rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) {
  reference::rope_forward<T>(x, heads, offset, y);
}
template <class T>
void ReferenceBackend<T>::rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) {
  reference::rope_backward<T>(dy, heads, offset, dx);
}

template <class T>
double ReferenceBackend<T>::cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                                                  SmoothingForm form, Tensor& lse, std::int64_t* count) {
  return reference::cross_entropy_forward<T>(logits, labels, pad_id, eps, form, lse, count);
}
template <class T>
void ReferenceBackend<T>::cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse,
                                                 int pad_id, double eps, SmoothingForm form, double dloss,
                                                 Tensor& dlogits) {
  reference::cross_entropy_backward<T>(logits, labels, lse, pad_id, eps, form, dloss, dlogits);
}
template <class T> void ReferenceBackend<T>::log_softmax_forward(const Tensor& x, Tensor& y) {
  reference::log_softmax_forward<T>(x, y);
}

template <class T>
void ReferenceBackend<T>::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr,
                                      double beta1, double beta2, double eps, std::int64_t step) {
  reference::adam_update<T>(param, grad, m, v, lr, beta1, beta2, eps, step);
}

template class ReferenceBackend<float>;
template class ReferenceBackend<double>;

}  // namespace trepro::reference
