// Layer/RMS norm kernels, shared by norm.cu and the fused residual ops of add_dropout.cu.
#pragma once

#include "core/backend.h"

namespace trepro::cuda {

// The residual + dropout prologue of the fused forward: sum = residual + dropout(x) is written
// and normalized. Null residual: plain norm of x.
struct NormPrologue {
  const float* residual = nullptr;
  float* sum = nullptr;
  DropoutSpec dropout;
};
// The dropout epilogue of the fused backward: dx_dropped = dropout_backward(dx). Null: plain.
struct NormEpilogue {
  float* dx_dropped = nullptr;
  DropoutSpec dropout;
};

void launch_norm_forward(NormKind kind, const float* x, const NormPrologue& prologue, const float* gamma,
                         const float* beta, float eps, float* y, float* mean, float* rstd, std::int64_t rows,
                         std::int64_t d, cudaStream_t stream, const char* op);
void launch_norm_backward(NormKind kind, const float* x, const float* gamma, const float* mean, const float* rstd,
                          const float* dy, float* dx, const NormEpilogue& epilogue, float* dgamma, float* dbeta,
                          std::int64_t rows, std::int64_t d, cudaStream_t stream, const char* op);

}  // namespace trepro::cuda
