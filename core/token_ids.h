// Token-id files: a safetensors file holding exactly one int32 or int64 [B, T] tensor, whatever
// its name (the --src, --tgt and --labels of `trepro forward`).
#pragma once

#include <string>

#include "core/tensor.h"

namespace trepro {

// Throws SafetensorsError naming `path` and `what` (the option) unless the file holds one
// integer matrix with B >= 1 rows and T >= 1 columns. An empty `path` gives an undefined Tensor.
Tensor read_token_ids(const std::string& path, const std::string& what);

}  // namespace trepro
