#include "optimized/cuda/gemm_layout.h"

#include <limits>
#include <stdexcept>

namespace trepro::cuda {

namespace {

int checked_int(const std::string& op, const char* what, std::int64_t value) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(op + ": " + what + " = " + std::to_string(value) +
                                " does not fit cuBLAS's 32-bit dimensions");
  }
  return static_cast<int>(value);
}

// cuBLAS rejects a leading dimension of 0 even for empty matrices.
int leading(int dim) { return dim > 0 ? dim : 1; }

}  // namespace

GemmCall linear_forward_gemm(const std::string& op, std::int64_t n, std::int64_t k, std::int64_t m) {
  const int N = checked_int(op, "N", n), K = checked_int(op, "K", k), M = checked_int(op, "M", m);
  return {true, false, M, N, K, leading(K), leading(K), leading(M)};
}

GemmCall linear_input_gradient_gemm(const std::string& op, std::int64_t n, std::int64_t k, std::int64_t m) {
  const int N = checked_int(op, "N", n), K = checked_int(op, "K", k), M = checked_int(op, "M", m);
  return {false, false, K, N, M, leading(K), leading(M), leading(K)};
}

GemmCall linear_weight_gradient_gemm(const std::string& op, std::int64_t n, std::int64_t k, std::int64_t m) {
  const int N = checked_int(op, "N", n), K = checked_int(op, "K", k), M = checked_int(op, "M", m);
  return {false, true, K, M, N, leading(K), leading(M), leading(K)};
}

}  // namespace trepro::cuda
