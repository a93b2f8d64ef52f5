#include "conformance/golden/golden_weights.h"

#include <cmath>
#include <cstdint>

#include "core/sha256.h"
#include "model/parameter_specs.h"

namespace trepro::golden {

namespace {

std::uint64_t name_key(const std::string& name) { return std::stoull(sha256_hex(name).substr(0, 16), nullptr, 16); }

// splitmix64 of key + k * golden gamma, k from 1: the k-th value in [-1, 1).
double unit_value(std::uint64_t key, std::uint64_t k) {
  std::uint64_t z = key + k * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
}

}  // namespace

Tensor golden_parameter(const std::string& name, const Shape& shape, DType dtype) {
  Tensor out = Tensor::empty(shape, dtype);
  const std::uint64_t key = name_key(name);
  const bool matrix = shape.size() == 2;
  const bool bias = name.ends_with(".bias");
  const double spread = matrix ? std::sqrt(3.0 / static_cast<double>(shape[1])) : 0.0;
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    const double t = unit_value(key, static_cast<std::uint64_t>(i) + 1);
    out.set(i, matrix ? spread * t : bias ? 0.125 * t : 1.0 + 0.25 * t);
  }
  return out;
}

std::map<std::string, Tensor> golden_weights(const ModelConfig& config, DType dtype) {
  std::map<std::string, Tensor> weights;
  for (const ParameterSpec& spec : parameter_specs(config)) {
    weights[spec.name] = golden_parameter(spec.name, spec.shape, dtype);
  }
  return weights;
}

std::string data_sha256(const std::map<std::string, Tensor>& tensors) {
  std::string lines;
  for (const auto& [name, tensor] : tensors) {
    const auto* bytes = reinterpret_cast<const char*>(tensor.raw());
    lines += name + " " + sha256_hex(std::string_view(bytes, tensor.nbytes())) + "\n";
  }
  return sha256_hex(lines);
}

}  // namespace trepro::golden
