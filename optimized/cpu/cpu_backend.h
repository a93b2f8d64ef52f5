// The optimized CPU backend: float32, Highway SIMD for one target chosen per instance
// ("cpu-avx3", "cpu-avx2", "cpu-sse4", "cpu-scalar"), one thread pool shared by all its ops.
//
// Each op's members are defined in its own file, optimized/cpu/<op>.cc (memory.cc: empty, zeros,
// upload, download; elementwise.cc: fill ... all_finite), with its argument checks from
// core/backend_checks.h and its Highway kernels; cpu_backend.cc has the rest: construction,
// the name, the list of compiled targets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "optimized/cpu/cpu_context.h"
#include "optimized/cpu/packed_weights.h"

namespace trepro::cpu {

class CpuBackend final : public Backend {
 public:
  // target: one bit of compiled_targets(); threads >= 1.
  CpuBackend(std::int64_t target, int threads);

  std::string name() const override;
  DType dtype() const override { return DType::f32; }
  int threads() const override { return pool_.threads(); }
  Device device() const override { return Device::cpu; }
  void begin_constant_weights() override;
  void end_constant_weights() override;
  const CpuContext& context() const { return context_; }

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

 private:
  std::int64_t target_;
  ThreadPool pool_;
  Workspace workspace_;
  CpuContext context_;
  PackedWeights packed_weights_;
};

// One entry per compiled target, best first: {"cpu-avx3", target bit}.
struct CpuTarget {
  std::string backend_name;
  std::int64_t target;
};
std::vector<CpuTarget> cpu_backend_targets();
// The backend name the plain choice "cpu" means: TREPRO_CPU_TARGET (a target name such as
// "avx2") when set, else the best compiled target. Throws std::invalid_argument naming the
// variable when it names no compiled target.
std::string default_cpu_backend_name();
// threads defaults to default_thread_count() (TREPRO_THREADS or the hardware's).
std::unique_ptr<Backend> make_cpu_backend(std::int64_t target);
std::unique_ptr<Backend> make_cpu_backend(std::int64_t target, int threads);

}  // namespace trepro::cpu
