// safetensors I/O (https://github.com/huggingface/safetensors format): an 8-byte little-endian
// header length, a JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {string: string}}, then the raw little-endian tensor bytes.
//
// Readable by the Python `safetensors` package and by torch. Supported dtypes: F32, F64, I32,
// I64. Every error names the file and, where there is one, the tensor.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace trepro {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;           // host tensors
  std::map<std::string, std::string> metadata;     // "__metadata__"
};

struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws SafetensorsError on a missing, truncated or malformed file (header length past the end
// of the file, bad JSON, unknown dtype, offsets out of range, overlapping or not matching
// shape x dtype size, trailing bytes).
SafetensorsFile read_safetensors(const std::string& path);
// The "__metadata__" of a file, reading its header only (a checkpoint's step without its
// gigabytes of tensors); the same errors for a file too short or a bad header.
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);
// Atomic: writes a temporary file in the same folder, fsyncs, renames. Tensors must be host
// tensors; names are written in sorted order.
void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Looks up `name` and checks it; throws SafetensorsError "<file>: tensor <name>: ..." when it is
// missing, of none of `dtypes`, or of another shape. An empty `shape` argument skips the shape
// check.
const Tensor& require_tensor_any(const SafetensorsFile& file, const std::string& path, const std::string& name,
                                 const std::vector<DType>& dtypes, const Shape& shape = {});

}  // namespace trepro
