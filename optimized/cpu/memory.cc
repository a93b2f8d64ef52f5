// Memory of the optimized CPU backend: host tensors (the device is the CPU), float32, from the
// backend's caching allocator (core/caching_allocator.h).
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"

namespace trepro::cpu {

Tensor CpuBackend::empty(const Shape& shape, DType dtype) {
  return allocate_tensor(context_.allocator, shape, dtype, Device::cpu);
}

Tensor CpuBackend::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.raw(), 0, t.nbytes());
  return t;
}

// Floating values become float32, integers int32.
Tensor CpuBackend::upload(const Tensor& host) {
  checks::upload_source(host);
  if (host.dtype() == DType::f32 || host.dtype() == DType::i32) {
    Tensor out = empty(host.shape(), host.dtype());
    std::memcpy(out.raw(), host.raw(), host.nbytes());
    return out;
  }
  const bool floating = host.dtype() == DType::f64;
  Tensor out = empty(host.shape(), floating ? DType::f32 : DType::i32);
  for (std::int64_t i = 0; i < host.numel(); ++i) out.set(i, host.at(i));
  return out;
}

Tensor CpuBackend::download(const Tensor& device_tensor) { return device_tensor.clone(); }

}  // namespace trepro::cpu
