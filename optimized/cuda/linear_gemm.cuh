// The GEMMs of linear.cu in the backend's precision (core/backend.h, Precision).
//   float32: the float tensors themselves, cuBLASLt or cublasSgemm, pedantic (no TF32).
//   bf16:    both operands rounded to bfloat16 (core/bf16.h's float_to_bf16, round to nearest
//            even) by a conversion kernel into scratch memory from the caching allocator, then
//            cuBLASLt or cublasGemmEx with CUDA_R_16BF A and B, CUDA_R_32F C and D and
//            CUBLAS_COMPUTE_32F: tensor-core products, float32 accumulation and results. The bias
//            and activation epilogues stay in float32.
#pragma once

#include <cublasLt.h>

#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/gemm_layout.h"

namespace trepro::cuda {

// A and B of one GEMM as cuBLAS reads them.
struct GemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  cudaDataType_t type = CUDA_R_32F;
  Tensor a_bf16, b_bf16;  // the bf16 copies that a and b point into (unset in float32)
};

// `a` and `b` (float32 tensors on the device) as operands in the backend's precision; in bf16
// the copies are queued on the backend's stream and live as long as the returned value.
GemmOperands gemm_operands(CudaBackend& backend, const Tensor& a, const Tensor& b, const char* op);

// What cuBLASLt applies to the product before writing D: a bias (or nullptr) and, for the GELU
// epilogues, the pre-activation written to aux (or nullptr).
struct GemmEpilogue {
  cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_DEFAULT;
  const float* bias = nullptr;
  float* aux = nullptr;
};

// C = epilogue(op(A) op(B) + beta C) through cuBLASLt; false when cuBLASLt has no algorithm for
// this shape, operand type and epilogue (the caller then falls back to gemm + kernels).
bool lt_gemm(CudaBackend& backend, const GemmCall& g, const GemmOperands& operands, float beta, float* c,
             const GemmEpilogue& epilogue, const char* op);
// C = op(A) op(B) + beta C: cublasSgemm in float32, cublasGemmEx in bf16.
void gemm(CudaBackend& backend, const GemmCall& g, const GemmOperands& operands, float beta, float* c, const char* op);

}  // namespace trepro::cuda
