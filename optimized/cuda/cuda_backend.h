// The CUDA backend, seen from plain C++ (the registry): whether a device is usable, and the
// backend itself. Everything CUDA-specific is behind this header, so that nothing else in the
// project includes a CUDA header or depends on the toolkit.
#pragma once

#include <memory>
#include <string>

#include "core/backend.h"

namespace trepro {

struct CudaDeviceStatus {
  bool available = false;
  // Why not, for skip messages: "cudaGetDeviceCount returned 35 (...)" or "... 0 devices".
  std::string reason;
};

// cudaGetDeviceCount succeeding with a count > 0; any error (35 without a driver) or 0 devices
// means "no device".
CudaDeviceStatus cuda_device_status();

// Backend "cuda": float32 on device 0. Throws std::runtime_error naming the CUDA call when the
// device cannot be set up.
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace trepro
