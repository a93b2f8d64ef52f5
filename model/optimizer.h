// Adam over every parameter of a model (first and second moments kept per parameter); the
// training step that drives it is model/trainer.h.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "model/transformer.h"

namespace trepro {

class Adam {
 public:
  Adam(Parameters& params, Backend& backend, const OptimizerConfig& config);

  // One update at `lr`; `step` counts from 1 (bias correction uses it).
  void update(double lr, std::int64_t step);
  // Moments by parameter name, "adam.m.<name>" and "adam.v.<name>" (host copies), for checkpoints.
  std::map<std::string, Tensor> state(Backend& backend) const;
  void load_state(Backend& backend, const std::map<std::string, Tensor>& state, const std::string& source);

 private:
  Parameters& params_;
  Backend& backend_;
  OptimizerConfig config_;
  std::vector<Tensor> m_, v_;  // parallel to params_.all()
};

}  // namespace trepro
