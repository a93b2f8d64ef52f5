#include "core/token_ids.h"

#include "core/safetensors.h"

namespace trepro {

Tensor read_token_ids(const std::string& path, const std::string& what) {
  if (path.empty()) return {};
  SafetensorsFile file = read_safetensors(path);
  if (file.tensors.size() != 1) {
    throw SafetensorsError(path + ": --" + what + " must hold exactly one tensor, found " +
                           std::to_string(file.tensors.size()));
  }
  const std::string name = file.tensors.begin()->first;
  const Tensor& ids = require_tensor_any(file, path, name, {DType::i32, DType::i64});
  if (ids.rank() != 2) {
    throw SafetensorsError(path + ": tensor " + name + ": shape " + shape_string(ids.shape()) +
                           ", expected a [B, T] matrix of token ids");
  }
  // The model has no output for no sequence or no position (Transformer::upload_ids).
  if (ids.numel() == 0) {
    throw SafetensorsError(path + ": tensor " + name + ": shape " + shape_string(ids.shape()) + " holds no token; --" +
                           what + " needs B >= 1 sequences of T >= 1 tokens");
  }
  return ids;
}

}  // namespace trepro
