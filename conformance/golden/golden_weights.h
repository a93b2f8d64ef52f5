// The golden parameter formula of golden/gen/values.py, bit for bit: how the paper-shaped model
// case shares its 15M weights without committing them. Integer mixing and exact floating steps
// only, so Python and C++ compute the same bits.
#pragma once

#include <map>
#include <string>

#include "core/config.h"
#include "core/tensor.h"

namespace trepro::golden {

// Parameter `name` (project naming) of `shape`, computed in double and rounded to `dtype`.
Tensor golden_parameter(const std::string& name, const Shape& shape, DType dtype);
// Every parameter of a model with `config`.
std::map<std::string, Tensor> golden_weights(const ModelConfig& config, DType dtype);
// sha256 of the lines "<name> <sha256 of its raw bytes>\n" in name order (the manifest's
// weights_data_sha256).
std::string data_sha256(const std::map<std::string, Tensor>& tensors);

}  // namespace trepro::golden
