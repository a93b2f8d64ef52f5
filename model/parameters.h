// The model's parameters, their gradients, and their initialisation and (de)serialisation.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/safetensors.h"
#include "model/parameter_specs.h"

namespace trepro {

struct Parameter {
  ParameterSpec spec;
  Tensor value;  // on the backend's device, backend dtype
  Tensor grad;   // same shape; accumulated by backward, cleared by zero_grad
};

class Parameters {
 public:
  // Values and gradients zero-filled on `backend`.
  Parameters(const ModelConfig& config, Backend& backend);

  // Throws std::invalid_argument naming `name` when the model has no such parameter.
  Parameter& at(const std::string& name);
  Parameter* find(const std::string& name);  // null when absent
  std::vector<Parameter>& all() { return params_; }
  const std::vector<Parameter>& all() const { return params_; }
  std::int64_t count() const;  // number of scalars

  void zero_grad(Backend& backend);
  // Deterministic initialisation from `seed` (see Init), drawn in double with Philox on the host
  // so every backend starts from the same values (rounded to its dtype).
  void initialize(Backend& backend, std::uint64_t seed);

  // Host copies in the backend's dtype, by name.
  std::map<std::string, Tensor> values(Backend& backend) const;
  std::map<std::string, Tensor> grads(Backend& backend) const;
  // Loads every parameter from `file` (read from `path`, named in errors): a missing tensor, an
  // extra one, a wrong shape, a non-floating dtype or a value that is not finite is an error.
  // float32 and float64 files are accepted by every backend (converted to its dtype).
  void load(Backend& backend, const SafetensorsFile& file, const std::string& path);

 private:
  std::vector<Parameter> params_;  // never resized after construction: modules keep pointers
  std::map<std::string, std::size_t> index_;
};

// Throws SafetensorsError "<path>: tensor <name>: element <i> is nan, expected finite weights"
// at the first NaN or infinity of `tensor` (on the host; integer dtypes hold none). A diverged
// or damaged checkpoint would otherwise load, decode and average as if it were sound.
void require_finite_weights(const Tensor& tensor, const std::string& path, const std::string& name);

}  // namespace trepro
