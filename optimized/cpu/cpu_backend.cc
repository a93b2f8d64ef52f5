#include "optimized/cpu/cpu_backend.h"

#include <cstdlib>
#include <stdexcept>

#include "optimized/cpu/attention.h"
#include "optimized/cpu/dispatch.h"
#include "optimized/cpu/ops.h"

namespace trepro::cpu {

CpuBackend::CpuBackend(std::int64_t target, int threads)
    : target_(target), pool_(threads), workspace_(threads),
      context_{target, pool_, workspace_,
               std::make_shared<CachingAllocator>(
                   "cpu backend: host memory",
                   // Every allocation bin is a multiple of kHostAlignment, as aligned_alloc requires.
                   [](std::size_t bytes) { return std::aligned_alloc(kHostAlignment, bytes); },
                   [](void* block) { std::free(block); })} {}

std::string CpuBackend::name() const { return "cpu-" + target_name(target_); }

Tensor CpuBackend::empty(const Shape& shape, DType dtype) { return cpu::empty(context_, shape, dtype); }
Tensor CpuBackend::zeros(const Shape& shape, DType dtype) { return cpu::zeros(context_, shape, dtype); }
Tensor CpuBackend::upload(const Tensor& host) { return cpu::upload(context_, host); }
Tensor CpuBackend::download(const Tensor& device_tensor) { return cpu::download(context_, device_tensor); }

void CpuBackend::fill(Tensor& x, double value) { cpu::fill(context_, x, value); }
void CpuBackend::add_inplace(Tensor& acc, const Tensor& x) { cpu::add_inplace(context_, acc, x); }
void CpuBackend::scale_inplace(Tensor& x, double factor) { cpu::scale_inplace(context_, x, factor); }
double CpuBackend::sum_squares(const Tensor& x) { return cpu::sum_squares(context_, x); }
bool CpuBackend::all_finite(const Tensor& x) { return cpu::all_finite(context_, x); }

void CpuBackend::concat_time(const Tensor& a, const Tensor& b, Tensor& out) { cpu::concat_time(context_, a, b, out); }
void CpuBackend::select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  cpu::select_batch(context_, x, indices, out);
}

void CpuBackend::linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                                Tensor* pre) {
  cpu::linear_forward(context_, x, w, b, act, y, pre);
}
void CpuBackend::linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act,
                                 const Tensor& dy, Tensor* dx, Tensor& dw, Tensor* db) {
  cpu::linear_backward(context_, x, w, pre, act, dy, dx, dw, db);
}

void CpuBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
  cpu::activation_forward(context_, act, x, y);
}
void CpuBackend::activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) {
  cpu::activation_backward(context_, act, x, dy, dx);
}
void CpuBackend::swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
  cpu::swiglu_forward(context_, gate, up, y);
}
void CpuBackend::swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
  cpu::swiglu_backward(context_, gate, up, dy, dgate, dup);
}

void CpuBackend::attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                   const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                                   Tensor& out, Tensor& lse) {
  cpu::attention_forward(context_, q, k, v, heads, key_padding, causal, scale, dropout, out, lse);
}
void CpuBackend::attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                    const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                                    const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                                    Tensor& dv) {
  cpu::attention_backward(context_, q, k, v, heads, key_padding, causal, scale, dropout, out, lse, dout, dq, dk, dv);
}

void CpuBackend::norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps,
                              Tensor& y, Tensor& mean, Tensor& rstd) {
  cpu::norm_forward(context_, kind, x, gamma, beta, eps, y, mean, rstd);
}
void CpuBackend::norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                               const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  cpu::norm_backward(context_, kind, x, gamma, mean, rstd, dy, dx, dgamma, dbeta);
}

void CpuBackend::dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) {
  cpu::dropout_forward(context_, x, dropout, y);
}
void CpuBackend::dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) {
  cpu::dropout_backward(context_, dy, dropout, dx);
}
void CpuBackend::add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                     Tensor& out) {
  cpu::add_dropout_forward(context_, residual, x, dropout, out);
}
void CpuBackend::add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                                          const DropoutSpec& dropout, const Tensor& gamma, const Tensor* beta,
                                          double eps, Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd) {
  cpu::add_dropout_norm_forward(context_, kind, residual, x, dropout, gamma, beta, eps, sum, y, mean, rstd);
}
void CpuBackend::add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                           const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                                           Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  cpu::add_dropout_norm_backward(context_, kind, sum, gamma, mean, rstd, dropout, dy, dresidual, dx, dgamma, dbeta);
}

void CpuBackend::embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                                   const Tensor* pos_table, std::int64_t offset, Tensor& out) {
  cpu::embedding_forward(context_, ids, table, scale, pos, pos_table, offset, out);
}
void CpuBackend::embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                                    std::int64_t offset, Tensor& dtable, Tensor* dpos_table) {
  cpu::embedding_backward(context_, ids, dout, scale, pos, offset, dtable, dpos_table);
}

void CpuBackend::rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) {
  cpu::rope_forward(context_, x, heads, offset, y);
}
void CpuBackend::rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) {
  cpu::rope_backward(context_, dy, heads, offset, dx);
}

double CpuBackend::cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                                         SmoothingForm form, Tensor& lse, std::int64_t* count) {
  return cpu::cross_entropy_forward(context_, logits, labels, pad_id, eps, form, lse, count);
}
void CpuBackend::cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id,
                                        double eps, SmoothingForm form, double dloss, Tensor& dlogits) {
  cpu::cross_entropy_backward(context_, logits, labels, lse, pad_id, eps, form, dloss, dlogits);
}
void CpuBackend::log_softmax_forward(const Tensor& x, Tensor& y) { cpu::log_softmax_forward(context_, x, y); }

void CpuBackend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1,
                             double beta2, double eps, std::int64_t step) {
  cpu::adam_update(context_, param, grad, m, v, lr, beta1, beta2, eps, step);
}

std::vector<CpuTarget> cpu_backend_targets() {
  std::vector<CpuTarget> targets;
  for (std::int64_t target : compiled_targets()) targets.push_back({"cpu-" + target_name(target), target});
  return targets;
}

std::string default_cpu_backend_name() {
  if (const char* forced = std::getenv("TREPRO_CPU_TARGET")) {
    try {
      return "cpu-" + target_name(target_from_name(forced));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("TREPRO_CPU_TARGET: ") + e.what());
    }
  }
  return cpu_backend_targets().front().backend_name;
}

std::unique_ptr<Backend> make_cpu_backend(std::int64_t target) { return make_cpu_backend(target, default_thread_count()); }

std::unique_ptr<Backend> make_cpu_backend(std::int64_t target, int threads) {
  return std::make_unique<CpuBackend>(target, threads);
}

}  // namespace trepro::cpu
