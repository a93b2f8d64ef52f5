// cuBLASLt / cuBLAS calls of the linear layer in float32 or bf16 (see linear_gemm.cuh).
#include "optimized/cuda/linear_gemm.cuh"

#include "core/bf16.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

// out[i] = float_to_bf16(in[i]), one thread per element (launch_for_each's grid-stride loop).
struct ToBf16 {
  const float* in;
  Bf16Bits* out;
  __device__ void operator()(std::int64_t i) const { out[i] = float_to_bf16(in[i]); }
};

Tensor bf16_copy(CudaBackend& backend, const Tensor& x, const char* op) {
  Tensor copy = backend.scratch_bytes(static_cast<std::size_t>(x.numel()) * sizeof(Bf16Bits));
  launch_for_each(x.numel(), ToBf16{x.data<float>(), reinterpret_cast<Bf16Bits*>(copy.raw())}, backend.stream(),
                  "float_to_bf16", op);
  return copy;
}

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

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value,
                   const char* call, const char* op) {
  check_cublas(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), call, op);
}

}  // namespace

GemmOperands gemm_operands(CudaBackend& backend, const Tensor& a, const Tensor& b, const char* op) {
  GemmOperands operands;
  if (backend.precision() == Precision::float32) {
    operands.a = a.data<float>();
    operands.b = b.data<float>();
    return operands;
  }
  operands.type = CUDA_R_16BF;
  operands.a_bf16 = bf16_copy(backend, a, op);
  operands.b_bf16 = bf16_copy(backend, b, op);
  operands.a = operands.a_bf16.raw();
  operands.b = operands.b_bf16.raw();
  return operands;
}

bool lt_gemm(CudaBackend& backend, const GemmCall& g, const GemmOperands& operands, float beta, float* c,
             const GemmEpilogue& epilogue, const char* op) {
  LtDescriptors d;
  // Compute and scale type float32 for both operand types: float32 accumulation.
  check_cublas(cublasLtMatmulDescCreate(&d.matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate", op);
  const cublasOperation_t ta = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_attribute(d.matmul, CUBLASLT_MATMUL_DESC_TRANSA, ta, "cublasLtMatmulDescSetAttribute(TRANSA)", op);
  set_attribute(d.matmul, CUBLASLT_MATMUL_DESC_TRANSB, tb, "cublasLtMatmulDescSetAttribute(TRANSB)", op);
  set_attribute(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue.kind, "cublasLtMatmulDescSetAttribute(EPILOGUE)", op);
  // Bias and aux default to D's type: float32 in both precisions.
  if (epilogue.bias) {
    set_attribute(d.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, epilogue.bias, "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", op);
  }
  if (epilogue.aux) {
    const std::int64_t aux_ld = g.ldc;
    set_attribute(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, epilogue.aux,
                  "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_POINTER)", op);
    set_attribute(d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld, "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_LD)", op);
  }
  // Column-major layouts as stored (before op): A is [k, m] when transposed, else [m, k].
  check_cublas(cublasLtMatrixLayoutCreate(&d.a, operands.type, g.transpose_a ? g.k : g.m, g.transpose_a ? g.m : g.k, g.lda),
               "cublasLtMatrixLayoutCreate(A)", op);
  check_cublas(cublasLtMatrixLayoutCreate(&d.b, operands.type, g.transpose_b ? g.n : g.k, g.transpose_b ? g.k : g.n, g.ldb),
               "cublasLtMatrixLayoutCreate(B)", op);
  check_cublas(cublasLtMatrixLayoutCreate(&d.c, CUDA_R_32F, g.m, g.n, g.ldc), "cublasLtMatrixLayoutCreate(C)", op);
  check_cublas(cublasLtMatmulPreferenceCreate(&d.preference), "cublasLtMatmulPreferenceCreate", op);
  const std::size_t workspace = CudaBackend::kLtWorkspaceBytes;
  check_cublas(cublasLtMatmulPreferenceSetAttribute(d.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                    sizeof(workspace)),
               "cublasLtMatmulPreferenceSetAttribute", op);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(backend.cublaslt(), d.matmul, d.a, d.b, d.c, d.c,
                                                               d.preference, 1, &heuristic, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || found == 0) return false;
  check_cublas(status, "cublasLtMatmulAlgoGetHeuristic", op);
  const float one = 1.0f;
  // C and D are the same matrix: beta = 1 accumulates in place (the weight gradient).
  check_cublas(cublasLtMatmul(backend.cublaslt(), d.matmul, &one, operands.a, d.a, operands.b, d.b, &beta, c, d.c, c,
                              d.c, &heuristic.algo, backend.lt_workspace(), workspace, backend.stream()),
               "cublasLtMatmul", op);
  return true;
}

void gemm(CudaBackend& backend, const GemmCall& g, const GemmOperands& operands, float beta, float* c, const char* op) {
  const float one = 1.0f;
  const cublasOperation_t ta = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (operands.type == CUDA_R_32F) {
    check_cublas(cublasSgemm(backend.cublas(), ta, tb, g.m, g.n, g.k, &one, static_cast<const float*>(operands.a), g.lda,
                             static_cast<const float*>(operands.b), g.ldb, &beta, c, g.ldc),
                 "cublasSgemm", op);
    return;
  }
  check_cublas(cublasGemmEx(backend.cublas(), ta, tb, g.m, g.n, g.k, &one, operands.a, operands.type, g.lda, operands.b,
                            operands.type, g.ldb, &beta, c, CUDA_R_32F, g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx(bf16)", op);
}

}  // namespace trepro::cuda
