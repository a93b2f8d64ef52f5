#include "experiments/kernel_accuracy/bf16_emulation.h"

#include <stdexcept>

#include "core/forwarding_backend.h"
#include "core/bf16.h"

namespace trepro::kernel_accuracy {
namespace {

// Every op but linear's forward and backward is the inner backend's: float32, as on the cuda
// backend in bf16 mode.
class Bf16Emulation final : public ForwardingBackend {
 public:
  // `owned` is taken by reference before it is moved into `owned_`: the backend it points to
  // stays where it is.
  explicit Bf16Emulation(std::unique_ptr<Backend> owned) : ForwardingBackend(*owned, Decorates::whole_backend), owned_(std::move(owned)) {
    if (inner().dtype() != DType::f32 || inner().device() != Device::cpu) {
      throw std::invalid_argument("bf16 emulation: needs a float32 host backend, got " + inner().name());
    }
  }

  std::string name() const override { return "bf16-emulated"; }

  // ---- The GEMM-bearing op: operands rounded to bf16, float32 products and sums ----------------
  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override {
    inner().linear_forward(rounded(x), rounded(w), b, act, y, pre);
  }
  // As the cuda backend: dpre = act'(pre) dy in float32, then dx = dpre w and dw += dpre^T x on
  // rounded operands, db += the column sums of the unrounded dpre (a float32 gemv there).
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override {
    Tensor dpre = dy;
    if (act != Activation::none) {
      if (!pre) throw std::invalid_argument("linear_backward: pre is required when the activation is not none");
      dpre = inner().empty(dy.shape(), DType::f32);
      inner().activation_backward(act, *pre, dy, dpre);
    }
    inner().linear_backward(rounded(x), rounded(w), nullptr, Activation::none, rounded(dpre), dx, dw, nullptr);
    if (db) add_column_sums(dpre, *db);
  }

 private:
  // x's values rounded to bfloat16 (the cuda conversion kernel's function), kept as float.
  Tensor rounded(const Tensor& x) {
    Tensor r = inner().empty(x.shape(), DType::f32);
    const float* in = x.data<float>();
    float* out = r.data<float>();
    for (std::int64_t i = 0; i < x.numel(); ++i) out[i] = round_to_bf16(in[i]);
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

  std::unique_ptr<Backend> owned_;
};

}  // namespace

std::unique_ptr<Backend> make_bf16_emulation(std::unique_ptr<Backend> float32) {
  return std::make_unique<Bf16Emulation>(std::move(float32));
}

}  // namespace trepro::kernel_accuracy
