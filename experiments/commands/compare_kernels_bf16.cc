#include "experiments/commands/compare_kernels_bf16.h"

#include <stdexcept>

#include "optimized/cuda/bf16_math.h"

namespace trepro::cli {
namespace {

class Bf16Emulation final : public Backend {
 public:
  explicit Bf16Emulation(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {
    if (inner_->dtype() != DType::f32 || inner_->device() != Device::cpu) {
      throw std::invalid_argument("bf16 emulation: needs a float32 host backend, got " + inner_->name());
    }
  }

  std::string name() const override { return "bf16-emulated"; }
  DType dtype() const override { return DType::f32; }
  Device device() const override { return Device::cpu; }
  int threads() const override { return inner_->threads(); }

  // ---- The GEMM-bearing op: operands rounded to bf16, float32 products and sums ----------------
  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override {
    inner_->linear_forward(rounded(x), rounded(w), b, act, y, pre);
  }
  // As the cuda backend: dpre = act'(pre) dy in float32, then dx = dpre w and dw += dpre^T x on
  // rounded operands, db += the column sums of the unrounded dpre (a float32 gemv there).
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override {
    Tensor dpre = dy;
    if (act != Activation::none) {
      if (!pre) throw std::invalid_argument("linear_backward: pre is required when the activation is not none");
      dpre = inner_->empty(dy.shape(), DType::f32);
      inner_->activation_backward(act, *pre, dy, dpre);
    }
    inner_->linear_backward(rounded(x), rounded(w), nullptr, Activation::none, rounded(dpre), dx, dw, nullptr);
    if (db) add_column_sums(dpre, *db);
  }

  // ---- Everything else: float32, as on the cuda backend in bf16 mode --------------------------
  Tensor empty(const Shape& shape, DType dtype) override { return inner_->empty(shape, dtype); }
  Tensor zeros(const Shape& shape, DType dtype) override { return inner_->zeros(shape, dtype); }
  Tensor upload(const Tensor& host) override { return inner_->upload(host); }
  Tensor download(const Tensor& device_tensor) override { return inner_->download(device_tensor); }
  void fill(Tensor& x, double value) override { inner_->fill(x, value); }
  void add_inplace(Tensor& acc, const Tensor& x) override { inner_->add_inplace(acc, x); }
  void scale_inplace(Tensor& x, double factor) override { inner_->scale_inplace(x, factor); }
  double sum_squares(const Tensor& x) override { return inner_->sum_squares(x); }
  bool all_finite(const Tensor& x) override { return inner_->all_finite(x); }
  void concat_time(const Tensor& a, const Tensor& b, Tensor& out) override { inner_->concat_time(a, b, out); }
  void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) override {
    inner_->select_batch(x, indices, out);
  }
  void activation_forward(Activation act, const Tensor& x, Tensor& y) override { inner_->activation_forward(act, x, y); }
  void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) override {
    inner_->activation_backward(act, x, dy, dx);
  }
  void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) override { inner_->swiglu_forward(gate, up, y); }
  void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) override {
    inner_->swiglu_backward(gate, up, dy, dgate, dup);
  }
  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                         bool causal, double scale, const DropoutSpec& dropout, Tensor& out, Tensor& lse) override {
    inner_->attention_forward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse);
  }
  void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                          bool causal, double scale, const DropoutSpec& dropout, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) override {
    inner_->attention_backward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse, dout, dq, dk, dv);
  }
  void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, Tensor& y,
                    Tensor& mean, Tensor& rstd) override {
    inner_->norm_forward(kind, x, gamma, beta, eps, y, mean, rstd);
  }
  void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                     const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override {
    inner_->norm_backward(kind, x, gamma, mean, rstd, dy, dx, dgamma, dbeta);
  }
  void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) override {
    inner_->dropout_forward(x, dropout, y);
  }
  void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) override {
    inner_->dropout_backward(dy, dropout, dx);
  }
  void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) override {
    inner_->add_dropout_forward(residual, x, dropout, out);
  }
  void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                const Tensor& gamma, const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                Tensor& mean, Tensor& rstd) override {
    inner_->add_dropout_norm_forward(kind, residual, x, dropout, gamma, beta, eps, sum, y, mean, rstd);
  }
  void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy, Tensor& dresidual,
                                 Tensor& dx, Tensor& dgamma, Tensor* dbeta) override {
    inner_->add_dropout_norm_backward(kind, sum, gamma, mean, rstd, dropout, dy, dresidual, dx, dgamma, dbeta);
  }
  void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos, const Tensor* pos_table,
                         std::int64_t offset, Tensor& out) override {
    inner_->embedding_forward(ids, table, scale, pos, pos_table, offset, out);
  }
  void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos, std::int64_t offset,
                          Tensor& dtable, Tensor* dpos_table) override {
    inner_->embedding_backward(ids, dout, scale, pos, offset, dtable, dpos_table);
  }
  void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) override {
    inner_->rope_forward(x, heads, offset, y);
  }
  void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) override {
    inner_->rope_backward(dy, heads, offset, dx);
  }
  double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps, SmoothingForm form,
                               Tensor& lse, std::int64_t* count) override {
    return inner_->cross_entropy_forward(logits, labels, pad_id, eps, form, lse, count);
  }
  void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id, double eps,
                              SmoothingForm form, double dloss, Tensor& dlogits) override {
    inner_->cross_entropy_backward(logits, labels, lse, pad_id, eps, form, dloss, dlogits);
  }
  void log_softmax_forward(const Tensor& x, Tensor& y) override { inner_->log_softmax_forward(x, y); }
  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1, double beta2,
                   double eps, std::int64_t step) override {
    inner_->adam_update(param, grad, m, v, lr, beta1, beta2, eps, step);
  }

 private:
  // x's values rounded to bfloat16 (the cuda conversion kernel's function), kept as float.
  Tensor rounded(const Tensor& x) {
    Tensor r = inner_->empty(x.shape(), DType::f32);
    const float* in = x.data<float>();
    float* out = r.data<float>();
    for (std::int64_t i = 0; i < x.numel(); ++i) out[i] = cuda::round_to_bf16(in[i]);
    return r;
  }

  // db[j] += sum_i dpre[i, j], summed in float32 row by row.
  static void add_column_sums(const Tensor& dpre, Tensor& db) {
    const std::int64_t rows = dpre.dim(0), cols = dpre.dim(1);
    const float* d = dpre.data<float>();
    float* out = db.data<float>();
    for (std::int64_t j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < rows; ++i) sum += d[i * cols + j];
      out[j] += sum;
    }
  }

  std::unique_ptr<Backend> inner_;
};

}  // namespace

std::unique_ptr<Backend> make_bf16_emulation(std::unique_ptr<Backend> float32) {
  return std::make_unique<Bf16Emulation>(std::move(float32));
}

}  // namespace trepro::cli
