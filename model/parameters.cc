#include "model/parameters.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "core/philox.h"

namespace trepro {

Parameters::Parameters(const ModelConfig& config, Backend& backend) {
  std::vector<ParameterSpec> specs = parameter_specs(config);
  params_.reserve(specs.size());
  for (ParameterSpec& spec : specs) {
    Tensor value = backend.zeros(spec.shape, backend.dtype());
    Tensor grad = backend.zeros(spec.shape, backend.dtype());
    index_[spec.name] = params_.size();
    params_.push_back({std::move(spec), std::move(value), std::move(grad)});
  }
}

Parameter* Parameters::find(const std::string& name) {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &params_[it->second];
}

Parameter& Parameters::at(const std::string& name) {
  Parameter* p = find(name);
  if (!p) throw std::invalid_argument("the model has no parameter named " + name);
  return *p;
}

std::int64_t Parameters::count() const {
  std::int64_t n = 0;
  for (const Parameter& p : params_) n += p.value.numel();
  return n;
}

void Parameters::zero_grad(Backend& backend) {
  for (Parameter& p : params_) backend.fill(p.grad, 0.0);
}

namespace {

// Fills `host` per `init`: stream = parameter index, so adding a parameter later in the order
// leaves earlier ones unchanged.
void draw(Tensor& host, const ParameterSpec& spec, std::uint64_t seed, std::uint64_t index) {
  constexpr std::uint32_t kInitSite = 0x1417;
  const PhiloxKey key{seed, index, kInitSite};
  const std::int64_t n = host.numel();
  switch (spec.init) {
    case Init::zeros:
    case Init::ones:
      for (std::int64_t i = 0; i < n; ++i) host.set(i, spec.init == Init::ones ? 1.0 : 0.0);
      return;
    case Init::xavier_uniform: {
      const double fan_out = static_cast<double>(spec.shape[0]);
      const double fan_in = static_cast<double>(spec.shape[1]);
      const double bound = std::sqrt(6.0 / (fan_in + fan_out));
      for (std::int64_t i = 0; i < n; ++i) {
        host.set(i, bound * (2.0 * philox_uniform(key, static_cast<std::uint64_t>(i)) - 1.0));
      }
      return;
    }
    case Init::embed_normal: {
      const double stddev = 1.0 / std::sqrt(static_cast<double>(spec.shape[1]));
      for (std::int64_t i = 0; i < n; ++i) {
        // Box-Muller on two independent draws; 1 - u keeps the log argument in (0, 1].
        const double u1 = 1.0 - philox_uniform(key, 2 * static_cast<std::uint64_t>(i));
        const double u2 = philox_uniform(key, 2 * static_cast<std::uint64_t>(i) + 1);
        host.set(i, stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
      }
      return;
    }
  }
}

template <class T>
void require_finite_values(const T* values, std::int64_t count, const std::string& path, const std::string& name) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (std::isfinite(values[i])) continue;
    const std::string value = std::isnan(values[i]) ? "nan" : values[i] > 0 ? "inf" : "-inf";
    throw SafetensorsError(path + ": tensor " + name + ": element " + std::to_string(i) + " is " + value +
                           ", expected finite weights");
  }
}

}  // namespace

void require_finite_weights(const Tensor& tensor, const std::string& path, const std::string& name) {
  if (tensor.dtype() == DType::f32) require_finite_values(tensor.data<float>(), tensor.numel(), path, name);
  if (tensor.dtype() == DType::f64) require_finite_values(tensor.data<double>(), tensor.numel(), path, name);
}

void Parameters::initialize(Backend& backend, std::uint64_t seed) {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Tensor host = Tensor::empty(params_[i].spec.shape, DType::f64);
    draw(host, params_[i].spec, seed, i);
    params_[i].value = backend.upload(host);
  }
}

std::map<std::string, Tensor> Parameters::values(Backend& backend) const {
  std::map<std::string, Tensor> out;
  for (const Parameter& p : params_) out[p.spec.name] = backend.download(p.value);
  return out;
}

std::map<std::string, Tensor> Parameters::grads(Backend& backend) const {
  std::map<std::string, Tensor> out;
  for (const Parameter& p : params_) out[p.spec.name] = backend.download(p.grad);
  return out;
}

void Parameters::load(Backend& backend, const SafetensorsFile& file, const std::string& path) {
  for (const auto& [name, tensor] : file.tensors) {
    if (!index_.count(name)) {
      throw SafetensorsError(path + ": tensor " + name + ": not a parameter of this model (check the config: " +
                             "tie_embeddings, positional, norm, activation and the layer counts decide the names)");
    }
  }
  for (Parameter& p : params_) {
    const Tensor& t = require_tensor_any(file, path, p.spec.name, {DType::f32, DType::f64}, p.spec.shape);
    require_finite_weights(t, path, p.spec.name);
    p.value = backend.upload(t);
  }
}

}  // namespace trepro
