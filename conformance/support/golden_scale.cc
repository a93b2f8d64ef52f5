#include "conformance/support/golden_scale.h"

namespace trepro {

std::string golden_scale_tensor(const std::string& name, const std::function<bool(const std::string&)>& present) {
  const std::string bias = "k_proj.bias";
  if (name.find("grad") == std::string::npos || !name.ends_with(bias)) return name;
  std::string weight = name.substr(0, name.size() - 4) + "weight";
  if (present(weight)) return weight;
  const std::size_t grad = weight.find("grad.");
  return grad == std::string::npos ? weight : weight.replace(grad, 5, "grad_sample.");
}

}  // namespace trepro
