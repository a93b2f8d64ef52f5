#include "core/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json_input.h"

namespace trepro {

// Tensor bytes and the header length are copied as they are, so the host must share the file's order.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

using nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";

struct DTypeCode {
  DType dtype;
  std::string_view code;
};
constexpr DTypeCode kCodes[] = {
    {DType::f32, "F32"}, {DType::f64, "F64"}, {DType::i32, "I32"}, {DType::i64, "I64"}};

std::string dtype_code(DType dtype) {
  for (const DTypeCode& c : kCodes) {
    if (c.dtype == dtype) return std::string(c.code);
  }
  throw std::logic_error("unknown dtype");
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw SafetensorsError(path + ": " + what);
}

std::string range(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// One tensor as the header declares it; offsets are relative to the data section.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin;
  std::uint64_t end;
};

bool is_index(const json& v) {
  return v.is_number_unsigned() && v.get<std::uint64_t>() <= std::numeric_limits<std::int64_t>::max();
}

Entry parse_entry(const std::string& path, const std::string& name, const json& info,
                  std::uint64_t data_size) {
  const std::string where = "tensor " + name + ": ";
  if (!info.is_object()) fail(path, where + "entry is not an object: " + info.dump());
  for (const auto& [key, value] : info.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      fail(path, where + "unexpected key \"" + key + "\"");
    }
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!info.contains(key)) fail(path, where + "missing \"" + key + "\"");
  }

  Entry e{name, DType::f32, {}, 0, 0};
  const json& dtype = info["dtype"];
  if (!dtype.is_string()) fail(path, where + "dtype is not a string: " + dtype.dump());
  const auto code = std::find_if(std::begin(kCodes), std::end(kCodes),
                                 [&](const DTypeCode& c) { return c.code == dtype.get<std::string>(); });
  if (code == std::end(kCodes)) {
    fail(path, where + "unsupported dtype \"" + dtype.get<std::string>() +
                   "\" (supported: F32, F64, I32, I64)");
  }
  e.dtype = code->dtype;

  const json& shape = info["shape"];
  if (!shape.is_array() || !std::all_of(shape.begin(), shape.end(), is_index)) {
    fail(path, where + "shape must be a list of non-negative integers, got " + shape.dump());
  }
  for (const json& d : shape) e.shape.push_back(d.get<std::int64_t>());

  const json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !is_index(offsets[0]) || !is_index(offsets[1]) ||
      offsets[0].get<std::uint64_t>() > offsets[1].get<std::uint64_t>()) {
    fail(path, where + "data_offsets must be [begin, end] with begin <= end, got " + offsets.dump());
  }
  e.begin = offsets[0].get<std::uint64_t>();
  e.end = offsets[1].get<std::uint64_t>();
  if (e.end > data_size) {
    fail(path, "truncated: tensor " + name + " needs bytes " + range(e.begin, e.end) +
                   " but the data section has " + std::to_string(data_size) + " bytes");
  }

  // Saturating, so that an absurd shape cannot wrap around to the right byte count.
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t needed = dtype_size(e.dtype);
  for (std::int64_t d : e.shape) {
    auto n = static_cast<std::uint64_t>(d);
    needed = n != 0 && needed > kMax / n ? kMax : needed * n;
  }
  if (needed != e.end - e.begin) {
    fail(path, where + "data_offsets " + range(e.begin, e.end) + " hold " + std::to_string(e.end - e.begin) +
                   " bytes but shape " + shape_string(e.shape) + " of " + dtype_code(e.dtype) + " needs " +
                   (needed == kMax ? "at least 2^64" : std::to_string(needed)) + " bytes");
  }
  return e;
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& info) {
  if (!info.is_object()) fail(path, "__metadata__ is not an object: " + info.dump());
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : info.items()) {
    if (!value.is_string()) {
      fail(path, "__metadata__ value of \"" + key + "\" is not a string: " + value.dump());
    }
    metadata.emplace(key, value.get<std::string>());
  }
  return metadata;
}

// The header's length, from the file's first 8 bytes `start`, checked against the `file_size`.
std::uint64_t header_length(const std::string& path, std::string_view start, std::uint64_t file_size) {
  if (file_size < 8) {
    fail(path, "the file has " + std::to_string(file_size) +
                   " bytes, fewer than the 8-byte header length (not a safetensors file)");
  }
  // The size was taken before the read: a file cut short in between is a truncation, not a short file.
  if (start.size() < 8) {
    fail(path, "only " + std::to_string(start.size()) + " of its " + std::to_string(file_size) +
                   " bytes could be read for the 8-byte header length (truncated while reading?)");
  }
  std::uint64_t length = 0;
  std::memcpy(&length, start.data(), 8);
  if (length > file_size - 8) {
    fail(path, "header length " + std::to_string(length) + " is larger than the " + std::to_string(file_size - 8) +
                   " bytes after it (truncated, or not a safetensors file)");
  }
  return length;
}

json parse_header(const std::string& path, std::string_view text) {
  json header;
  try {
    // A crafted header must not crash the reader, and a tensor named twice is an error (both
    // core/json_input.h).
    header = parse_json(text, path + ": header");
  } catch (const JsonInputError& e) {
    throw SafetensorsError(e.what());
  }
  if (!header.is_object()) fail(path, "header is not a JSON object: " + header.dump());
  return header;
}

// The format requires the tensors to tile the data section exactly: no overlap, no gap, no trailing bytes.
void check_layout(const std::string& path, std::vector<const Entry*> entries, std::uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  std::uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : entries) {
    // An empty tensor occupies no bytes, so it can neither overlap nor fill.
    if (e->begin == e->end) continue;
    if (e->begin < covered) {
      fail(path, "tensor " + e->name + ": bytes " + range(e->begin, e->end) + " overlap tensor " +
                     previous->name + " at " + range(previous->begin, previous->end));
    }
    if (e->begin > covered) {
      fail(path, "bytes " + range(covered, e->begin) + " of the data section are not covered by any tensor");
    }
    covered = e->end;
    previous = e;
  }
  if (covered != data_size) {
    fail(path, "bytes " + range(covered, data_size) +
                   " at the end of the data section are not covered by any tensor");
  }
}

}  // namespace

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code size_error;
  const std::uintmax_t file_size = std::filesystem::file_size(path, size_error);
  if (!in || size_error) fail(path, "cannot be read");
  std::string start(8, '\0');
  in.read(start.data(), 8);
  start.resize(static_cast<std::size_t>(in.gcount()));
  const std::uint64_t length = header_length(path, start, file_size);
  std::string text(length, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(length))) fail(path, "the header could not be read");
  const json header = parse_header(path, text);
  const auto metadata = header.find(kMetadataKey);
  return metadata == header.end() ? std::map<std::string, std::string>{} : parse_metadata(path, *metadata);
}

SafetensorsFile read_safetensors(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const std::runtime_error& e) {
    throw SafetensorsError(e.what());
  }
  const std::uint64_t header_size = header_length(path, bytes, bytes.size());
  const json header = parse_header(path, std::string_view(bytes).substr(8, header_size));

  const std::uint64_t data_size = bytes.size() - 8 - header_size;
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == kMetadataKey) {
      file.metadata = parse_metadata(path, info);
    } else {
      entries.push_back(parse_entry(path, name, info, data_size));
    }
  }
  std::vector<const Entry*> layout;
  for (const Entry& e : entries) layout.push_back(&e);
  check_layout(path, layout, data_size);

  const char* data = bytes.data() + 8 + header_size;
  for (Entry& e : entries) {
    Tensor t = Tensor::empty(std::move(e.shape), e.dtype);
    std::memcpy(t.raw(), data + e.begin, e.end - e.begin);
    file.tensors.emplace(std::move(e.name), std::move(t));
  }
  return file;
}

void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // Insertion order: the Python writer puts __metadata__ first and the keys of each entry in this order.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == kMetadataKey) fail(path, "tensor " + name + ": the name is reserved for metadata");
    if (!t.defined()) fail(path, "tensor " + name + ": undefined");
    if (t.device() != Device::cpu) {
      fail(path, "tensor " + name + ": on the " + std::string(device_name(t.device())) +
                     " device, only host tensors can be written");
    }
    header[name] = {{"dtype", dtype_code(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    fail(path, std::string("cannot encode the header (names and metadata must be UTF-8): ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // as the Python writer pads, keeping the data 8-byte aligned

  std::string out;
  out.reserve(8 + text.size() + offset);
  const std::uint64_t header_size = text.size();
  out.append(reinterpret_cast<const char*>(&header_size), 8);
  out += text;
  for (const auto& [name, t] : tensors) out.append(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  write_file_atomically(path, out);
}

const Tensor& require_tensor_any(const SafetensorsFile& file, const std::string& path,
                                 const std::string& name, const std::vector<DType>& dtypes,
                                 const Shape& shape) {
  const std::string where = "tensor " + name + ": ";
  auto it = file.tensors.find(name);
  if (it == file.tensors.end()) {
    std::string names;
    for (const auto& [other, t] : file.tensors) names += (names.empty() ? "" : ", ") + other;
    fail(path, where + "missing " +
                   (names.empty() ? "(the file has no tensors)" : "(the file has: " + names + ")"));
  }
  const Tensor& t = it->second;
  if (std::find(dtypes.begin(), dtypes.end(), t.dtype()) == dtypes.end()) {
    std::string expected;
    for (std::size_t i = 0; i < dtypes.size(); ++i) {
      expected += (i == 0 ? "" : i + 1 == dtypes.size() ? " or " : ", ") + std::string(dtype_name(dtypes[i]));
    }
    fail(path, where + "dtype " + dtype_code(t.dtype()) + ", expected " + expected);
  }
  if (!shape.empty() && t.shape() != shape) {
    fail(path, where + "shape " + shape_string(t.shape()) + ", expected " + shape_string(shape));
  }
  return t;
}

}  // namespace trepro
