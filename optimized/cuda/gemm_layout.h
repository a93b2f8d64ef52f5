// The row-major linear layer as column-major cuBLAS calls. cuBLAS computes, column-major,
//   C [m, n] = alpha op(A) op(B) + beta C,   op = transpose or not,
// and a row-major [R, S] matrix is the column-major [S, R] matrix with leading dimension S. So
// with x [N, K], w [M, K], dpre [N, M] row-major:
//   forward      y^T [M, N]  = op(w) x     : A = w (transposed, lda K), B = x (ldb K), C = y (ldc M)
//   input grad   dx^T [K, N] = w^T dpre^T  : A = w (lda K), B = dpre (ldb M), C = dx (ldc K)
//   weight grad  dw^T [K, M] = x^T dpre    : A = x (lda K), B = dpre (transposed, ldb M), C = dw (ldc K)
// Host functions, so that conformance/cuda/gemm_layout_test.cc runs the same calls through a
// plain column-major GEMM against the reference linear layer.
#pragma once

#include <cstdint>
#include <string>

namespace trepro::cuda {

struct GemmCall {
  bool transpose_a, transpose_b;
  int m, n, k;
  int lda, ldb, ldc;
};

// Throw std::invalid_argument naming `op` when a dimension does not fit cuBLAS's int.
GemmCall linear_forward_gemm(const std::string& op, std::int64_t n, std::int64_t k, std::int64_t m);
GemmCall linear_input_gradient_gemm(const std::string& op, std::int64_t n, std::int64_t k, std::int64_t m);
GemmCall linear_weight_gradient_gemm(const std::string& op, std::int64_t n, std::int64_t k, std::int64_t m);

}  // namespace trepro::cuda
