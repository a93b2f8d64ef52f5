#include "core/random_tensor.h"

#include "core/philox.h"

namespace trepro {

Tensor random_tensor(Backend& backend, const Shape& shape, std::uint64_t seed, double lo, double hi) {
  Tensor host = Tensor::empty(shape, DType::f64);
  const PhiloxKey key{seed, 0, 0x7e57};
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    host.set(i, lo + (hi - lo) * philox_uniform(key, static_cast<std::uint64_t>(i)));
  }
  return backend.upload(host);
}

}  // namespace trepro
