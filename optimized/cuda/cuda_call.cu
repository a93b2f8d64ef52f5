#include "optimized/cuda/cuda_call.h"

#include <stdexcept>
#include <string>

namespace trepro::cuda {

namespace {

[[noreturn]] void fail(std::string_view op, std::string_view call, const std::string& reason, int code) {
  throw std::runtime_error("cuda backend: " + std::string(op) + ": " + std::string(call) + " failed: " + reason +
                           " (" + std::to_string(code) + ")");
}

}  // namespace

void check_cuda(cudaError_t status, std::string_view call, std::string_view op) {
  if (status != cudaSuccess) fail(op, call, cudaGetErrorString(status), static_cast<int>(status));
}

void check_cublas(cublasStatus_t status, std::string_view call, std::string_view op) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(op, call, cublasGetStatusString(status), static_cast<int>(status));
}

void check_launch(std::string_view kernel, std::string_view op) {
  check_cuda(cudaGetLastError(), std::string(kernel) + " launch", op);
}

}  // namespace trepro::cuda
