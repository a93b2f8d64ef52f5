// linear_forward / linear_backward through cuBLAS. Forward is one cuBLASLt matmul with the bias
// (and, for gelu_tanh, the activation with the pre-activation saved as its aux output) fused
// into the epilogue; relu and exact gelu, which cuBLASLt cannot both apply and save pre for, run
// as a separate elementwise kernel. Backward: dpre = act'(pre) dy (elementwise), dx and dw by
// cublasSgemm (dw with beta = 1: accumulated), db += dpre^T 1 by cublasSgemv. The row-major to
// column-major mapping is gemm_layout.h, host-tested. Math mode is pedantic float32 (no TF32).
#include "core/backend_checks.h"
#include "optimized/cuda/activation.cuh"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/gemm_layout.h"

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

// RAII for the cuBLASLt descriptors of one call.
struct LtDescriptors {
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~LtDescriptors() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (matmul) cublasLtMatmulDescDestroy(matmul);
  }
};

// C = op(A) op(B) with `epilogue` (bias, aux as given); false when cuBLASLt has no algorithm for
// this shape and epilogue, so that the caller falls back to cublasSgemm + kernels.
bool lt_matmul(CudaBackend& backend, const GemmCall& g, const float* a, const float* b, float* c,
               cublasLtEpilogue_t epilogue, const float* bias, float* aux, const char* op) {
  LtDescriptors d;
  check_cublas(cublasLtMatmulDescCreate(&d.matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate", op);
  const cublasOperation_t ta = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "cublasLtMatmulDescSetAttribute(TRANSA)", op);
  check_cublas(cublasLtMatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "cublasLtMatmulDescSetAttribute(TRANSB)", op);
  check_cublas(cublasLtMatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "cublasLtMatmulDescSetAttribute(EPILOGUE)", op);
  if (bias) {
    check_cublas(cublasLtMatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", op);
  }
  if (aux) {
    const std::int64_t aux_ld = g.ldc;
    check_cublas(cublasLtMatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)), "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_POINTER)", op);
    check_cublas(cublasLtMatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)), "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_LD)", op);
  }
  // Column-major layouts as stored (before op): A is [k, m] when transposed, else [m, k].
  check_cublas(cublasLtMatrixLayoutCreate(&d.a, CUDA_R_32F, g.transpose_a ? g.k : g.m, g.transpose_a ? g.m : g.k, g.lda), "cublasLtMatrixLayoutCreate(A)", op);
  check_cublas(cublasLtMatrixLayoutCreate(&d.b, CUDA_R_32F, g.transpose_b ? g.n : g.k, g.transpose_b ? g.k : g.n, g.ldb), "cublasLtMatrixLayoutCreate(B)", op);
  check_cublas(cublasLtMatrixLayoutCreate(&d.c, CUDA_R_32F, g.m, g.n, g.ldc), "cublasLtMatrixLayoutCreate(C)", op);
  check_cublas(cublasLtMatmulPreferenceCreate(&d.preference), "cublasLtMatmulPreferenceCreate", op);
  const std::size_t workspace = CudaBackend::kLtWorkspaceBytes;
  check_cublas(cublasLtMatmulPreferenceSetAttribute(d.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)), "cublasLtMatmulPreferenceSetAttribute", op);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(backend.cublaslt(), d.matmul, d.a, d.b, d.c, d.c,
                                                               d.preference, 1, &heuristic, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || found == 0) return false;
  check_cublas(status, "cublasLtMatmulAlgoGetHeuristic", op);
  const float one = 1.0f, zero = 0.0f;
  check_cublas(cublasLtMatmul(backend.cublaslt(), d.matmul, &one, a, d.a, b, d.b, &zero, c, d.c, c, d.c, &heuristic.algo,
                              backend.lt_workspace(), workspace, backend.stream()),
               "cublasLtMatmul", op);
  return true;
}

void sgemm(CudaBackend& backend, const GemmCall& g, const float* a, const float* b, float beta, float* c, const char* op) {
  const float one = 1.0f;
  check_cublas(cublasSgemm(backend.cublas(), g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                           g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, &one, a, g.lda, b, g.ldb, &beta, c,
                           g.ldc),
               "cublasSgemm", op);
}

}  // namespace

void CudaBackend::linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                                 Tensor* pre) {
  constexpr const char* op = "linear_forward";
  checks::expect_rank(op, "x", x, 2);
  checks::expect_rank(op, "w", w, 2);
  const std::int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  checks::expect(op, "x", x, {n, k}, DType::f32, Device::cuda);
  checks::expect(op, "w", w, {m, k}, DType::f32, Device::cuda);
  checks::expect_optional(op, "b", b, {m}, DType::f32, Device::cuda);
  checks::expect(op, "y", y, {n, m}, DType::f32, Device::cuda);
  checks::require(act == Activation::none || pre != nullptr, op, "pre is required when the activation is not none");
  checks::expect_optional(op, "pre", pre, {n, m}, DType::f32, Device::cuda);
  const GemmCall g = linear_forward_gemm(op, n, k, m);
  if (n == 0 || m == 0) return;
  const float* bias = b ? b->data<float>() : nullptr;
  // gelu_tanh is cuBLASLt's GELU; its aux output (the pre-activation) needs ld % 8 == 0.
  if (act == Activation::gelu_tanh && m % 8 == 0 && k > 0 &&
      lt_matmul(*this, g, w.data<float>(), x.data<float>(), y.data<float>(),
                bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX, bias, pre->data<float>(), op)) {
    return;
  }
  // Otherwise the affine part goes to pre (or straight to y without an activation).
  Tensor& affine = act == Activation::none ? y : *pre;
  const bool fused = k > 0 && lt_matmul(*this, g, w.data<float>(), x.data<float>(), affine.data<float>(),
                                        bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, bias, nullptr, op);
  if (!fused) {
    sgemm(*this, g, w.data<float>(), x.data<float>(), 0.0f, affine.data<float>(), op);
    if (bias) launch_for_each(n * m, AddBias{affine.data<float>(), bias, m}, stream_, "add_bias", op);
  }
  if (act != Activation::none) launch_activation_forward(act, pre->data<float>(), y.data<float>(), n * m, stream_, op);
}

void CudaBackend::linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                                  Tensor* dx, Tensor& dw, Tensor* db) {
  constexpr const char* op = "linear_backward";
  checks::expect_rank(op, "x", x, 2);
  checks::expect_rank(op, "w", w, 2);
  const std::int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  checks::expect(op, "x", x, {n, k}, DType::f32, Device::cuda);
  checks::expect(op, "w", w, {m, k}, DType::f32, Device::cuda);
  checks::require(act == Activation::none || pre != nullptr, op, "pre is required when the activation is not none");
  checks::expect_optional(op, "pre", pre, {n, m}, DType::f32, Device::cuda);
  checks::expect(op, "dy", dy, {n, m}, DType::f32, Device::cuda);
  checks::expect_optional(op, "dx", dx, {n, k}, DType::f32, Device::cuda);
  checks::expect(op, "dw", dw, {m, k}, DType::f32, Device::cuda);
  checks::expect_optional(op, "db", db, {m}, DType::f32, Device::cuda);
  const GemmCall input_gradient = linear_input_gradient_gemm(op, n, k, m);
  const GemmCall weight_gradient = linear_weight_gradient_gemm(op, n, k, m);

  Tensor dpre = act == Activation::none ? dy : empty({n, m}, DType::f32);
  if (act != Activation::none) {
    launch_activation_backward(act, pre->data<float>(), dy.data<float>(), dpre.data<float>(), n * m, stream_, op);
  }
  if (dx && n * k > 0) sgemm(*this, input_gradient, w.data<float>(), dpre.data<float>(), 0.0f, dx->data<float>(), op);
  if (m * k > 0 && n > 0) sgemm(*this, weight_gradient, x.data<float>(), dpre.data<float>(), 1.0f, dw.data<float>(), op);
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
