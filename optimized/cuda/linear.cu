// linear_forward / linear_backward through cuBLAS. Forward is one cuBLASLt matmul with the bias
// (and, for gelu_tanh, the activation with the pre-activation saved as its aux output) fused
// into the epilogue; relu and exact gelu, which cuBLASLt cannot both apply and save pre for, run
// as a separate elementwise kernel. Backward: dpre = act'(pre) dy (elementwise), dx and dw by
// GEMMs (dw with beta = 1: accumulated), db += dpre^T 1 by cublasSgemv. The row-major to
// column-major mapping is gemm_layout.h, host-tested. The GEMM operands are float32 (pedantic, no
// TF32) or, in the bf16 precision, bfloat16 copies with float32 accumulation (linear_gemm.cuh);
// everything else here is float32 in both.
#include "core/backend_checks.h"
#include "optimized/cuda/activation.cuh"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/gemm_layout.h"
#include "optimized/cuda/linear_gemm.cuh"

namespace trepro::cuda {

namespace {

// out[n, m] += b[m], one thread per element.
struct AddBias {
  float* out;
  const float* bias;
  std::int64_t m;
  __device__ void operator()(std::int64_t i) const { out[i] += bias[i % m]; }
};
struct Ones {
  float* x;
  __device__ void operator()(std::int64_t i) const { x[i] = 1.0f; }
};

// A backward GEMM: float32 keeps cublasSgemm; bf16 asks cuBLASLt first (its tensor-core
// kernels), then cublasGemmEx.
void backward_gemm(CudaBackend& backend, const GemmCall& g, const GemmOperands& operands, float beta, float* c,
                   const char* op) {
  if (operands.type != CUDA_R_32F && lt_gemm(backend, g, operands, beta, c, {}, op)) return;
  gemm(backend, g, operands, beta, c, op);
}

}  // namespace

void CudaBackend::linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                                 Tensor* pre) {
  constexpr const char* op = "linear_forward";
  const checks::LinearDims dims = checks::linear_forward_dims(DType::f32, Device::cuda, x, w, b, act, y, pre);
  const std::int64_t n = dims.n, k = dims.k, m = dims.m;
  const GemmCall g = linear_forward_gemm(op, n, k, m);
  if (n == 0 || m == 0) return;
  const float* bias = b ? b->data<float>() : nullptr;
  const GemmOperands operands = gemm_operands(*this, w, x, op);
  // gelu_tanh is cuBLASLt's GELU; its aux output (the pre-activation) needs ld % 8 == 0.
  if (act == Activation::gelu_tanh && m % 8 == 0 && k > 0 &&
      lt_gemm(*this, g, operands, 0.0f, y.data<float>(),
              {bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX, bias, pre->data<float>()}, op)) {
    return;
  }
  // Otherwise the affine part goes to pre (or straight to y without an activation).
  Tensor& affine = act == Activation::none ? y : *pre;
  const bool fused = k > 0 && lt_gemm(*this, g, operands, 0.0f, affine.data<float>(),
                                      {bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, bias, nullptr}, op);
  if (!fused) {
    gemm(*this, g, operands, 0.0f, affine.data<float>(), op);
    if (bias) launch_for_each(n * m, AddBias{affine.data<float>(), bias, m}, stream_, "add_bias", op);
  }
  if (act != Activation::none) launch_activation_forward(act, pre->data<float>(), y.data<float>(), n * m, stream_, op);
}

void CudaBackend::linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                                  Tensor* dx, Tensor& dw, Tensor* db) {
  constexpr const char* op = "linear_backward";
  const checks::LinearDims dims =
      checks::linear_backward_dims(DType::f32, Device::cuda, x, w, pre, act, dy, dx, dw, db);
  const std::int64_t n = dims.n, k = dims.k, m = dims.m;
  const GemmCall input_gradient = linear_input_gradient_gemm(op, n, k, m);
  const GemmCall weight_gradient = linear_weight_gradient_gemm(op, n, k, m);

  Tensor dpre = act == Activation::none ? dy : empty({n, m}, DType::f32);
  if (act != Activation::none) {
    launch_activation_backward(act, pre->data<float>(), dy.data<float>(), dpre.data<float>(), n * m, stream_, op);
  }
  if (dx && n * k > 0) {
    backward_gemm(*this, input_gradient, gemm_operands(*this, w, dpre, op), 0.0f, dx->data<float>(), op);
  }
  if (m * k > 0 && n > 0) {
    backward_gemm(*this, weight_gradient, gemm_operands(*this, x, dpre, op), 1.0f, dw.data<float>(), op);
  }
  if (db && m > 0 && n > 0) {
    Tensor ones = empty({n}, DType::f32);
    launch_for_each(n, Ones{ones.data<float>()}, stream_, "ones", op);
    const float one = 1.0f;
    // dpre row-major [N, M] is column-major [M, N] with ld M: db += dpre^T 1 is a plain gemv.
    check_cublas(cublasSgemv(cublas_, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n), &one, dpre.data<float>(),
                             static_cast<int>(m), ones.data<float>(), 1, &one, db->data<float>(), 1),
                 "cublasSgemv", op);
  }
}

}  // namespace trepro::cuda
