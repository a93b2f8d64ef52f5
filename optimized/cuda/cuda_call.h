// Every CUDA runtime, cuBLAS and cuBLASLt call of the backend goes through one of these: a
// failure throws std::runtime_error "cuda backend: <op>: <call> failed: <reason> (<code>)", so an
// error names both the call and the op that made it.
#pragma once

#include <string_view>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace trepro::cuda {

void check_cuda(cudaError_t status, std::string_view call, std::string_view op);
void check_cublas(cublasStatus_t status, std::string_view call, std::string_view op);
// After a kernel launch: launch errors (bad configuration, too much shared memory) surface here;
// errors while the kernel runs surface at the next synchronizing call.
void check_launch(std::string_view kernel, std::string_view op);

// dim3 from the launch-shape functions' plain integers.
inline dim3 grid_of(long long x, long long y = 1) {
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(y));
}

}  // namespace trepro::cuda
