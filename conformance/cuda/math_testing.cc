#include "conformance/cuda/math_testing.h"

#include "conformance/support/tensor_testing.h"
#include "registry/registry.h"

namespace trepro::testing {

HostMath::HostMath()
    : reference(make_reference_backend(DType::f64)), holder(make_reference_backend(DType::f32)) {}

Tensor HostMath::random(const Shape& shape, std::uint64_t seed, double lo, double hi) {
  return reference->upload(random_tensor(*holder, shape, seed, lo, hi));
}

Tensor HostMath::result(const Shape& shape, const std::vector<float>& values) {
  return holder->upload(Tensor::from_values(shape, DType::f32, std::vector<double>(values.begin(), values.end())));
}

std::vector<float> floats(const Tensor& host) {
  std::vector<float> values(static_cast<std::size_t>(host.numel()));
  for (std::int64_t i = 0; i < host.numel(); ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(host.at(i));
  return values;
}

}  // namespace trepro::testing
