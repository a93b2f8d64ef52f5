#include "model/optimizer.h"

#include <stdexcept>

namespace trepro {

Adam::Adam(Parameters& params, Backend& backend, const OptimizerConfig& config)
    : params_(params), backend_(backend), config_(config) {
  for (const Parameter& p : params.all()) {
    m_.push_back(backend.zeros(p.value.shape(), backend.dtype()));
    v_.push_back(backend.zeros(p.value.shape(), backend.dtype()));
  }
}

void Adam::update(double lr, std::int64_t step) {
  std::vector<Parameter>& all = params_.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    backend_.adam_update(all[i].value, all[i].grad, m_[i], v_[i], lr, config_.beta1, config_.beta2, config_.eps, step);
  }
}

std::map<std::string, Tensor> Adam::state(Backend& backend) const {
  std::map<std::string, Tensor> out;
  const std::vector<Parameter>& all = params_.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    out["adam.m." + all[i].spec.name] = backend.download(m_[i]);
    out["adam.v." + all[i].spec.name] = backend.download(v_[i]);
  }
  return out;
}

void Adam::load_state(Backend& backend, const std::map<std::string, Tensor>& state, const std::string& source) {
  const std::vector<Parameter>& all = params_.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (auto [prefix, target] : {std::pair{"adam.m.", &m_[i]}, std::pair{"adam.v.", &v_[i]}}) {
      const std::string name = prefix + all[i].spec.name;
      auto it = state.find(name);
      if (it == state.end()) throw std::runtime_error(source + ": tensor " + name + ": missing");
      if (it->second.shape() != all[i].spec.shape) {
        throw std::runtime_error(source + ": tensor " + name + ": shape " + shape_string(it->second.shape()) +
                                 ", expected " + shape_string(all[i].spec.shape));
      }
      *target = backend.upload(it->second);
    }
  }
}

}  // namespace trepro
