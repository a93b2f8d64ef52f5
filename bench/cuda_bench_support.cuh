// Shared by the CUDA benchmarks: the backend (or a skip naming why there is none), random device
// tensors, and a stream synchronization per iteration so that wall time measures the kernels.
#pragma once

#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "core/philox.h"
#include "optimized/cuda/cuda_backend.h"
#include "optimized/cuda/cuda_backend_impl.h"

namespace trepro::bench {

// The CUDA backend, or null after state.SkipWithError naming why (no device, no driver).
inline std::unique_ptr<cuda::CudaBackend> cuda_backend_or_skip(benchmark::State& state) {
  const CudaDeviceStatus status = cuda_device_status();
  if (!status.available) {
    state.SkipWithError(("no CUDA device: " + status.reason).c_str());
    return nullptr;
  }
  return std::make_unique<cuda::CudaBackend>();
}

// Uniform in [-1, 1) from Philox, uploaded.
inline Tensor random_device_tensor(Backend& backend, const Shape& shape, std::uint64_t seed) {
  Tensor host = Tensor::empty(shape, DType::f32);
  const PhiloxKey key{seed, 0, 0xbe7c};
  for (std::int64_t i = 0; i < host.numel(); ++i) host.set(i, 2 * philox_uniform(key, static_cast<std::uint64_t>(i)) - 1);
  return backend.upload(host);
}

}  // namespace trepro::bench
