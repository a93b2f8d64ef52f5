#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace trepro {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
  }
  throw std::logic_error("unknown dtype");
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
  }
  throw std::logic_error("unknown dtype");
}

DType parse_dtype(std::string_view name) {
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    if (dtype_name(d) == name) return d;
  }
  throw std::invalid_argument("unknown dtype \"" + std::string(name) +
                              "\": expected float32, float64, int32 or int64");
}

std::string_view device_name(Device device) { return device == Device::cpu ? "cpu" : "cuda"; }

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("negative dimension in shape " + shape_string(shape));
    // A wrapped product would size a buffer smaller than the tensor that is then written.
    if (__builtin_mul_overflow(n, d, &n)) {
      throw std::length_error("shape " + shape_string(shape) + " has more elements than an int64 counts");
    }
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

Tensor Tensor::empty(Shape shape, DType dtype) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  const auto elements = static_cast<std::size_t>(t.numel());
  if (elements > (std::numeric_limits<std::size_t>::max() - kHostAlignment) / dtype_size(dtype)) {
    throw std::length_error("a tensor of shape " + shape_string(t.shape_) + " has more bytes than memory addresses");
  }
  std::size_t bytes = (t.nbytes() + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  if (bytes == 0) bytes = kHostAlignment;  // a defined tensor always has storage
  void* p = std::aligned_alloc(kHostAlignment, bytes);
  if (!p) {
    throw std::runtime_error("cannot allocate a tensor of shape " + shape_string(t.shape_) + " (" +
                             std::to_string(bytes) + " bytes of host memory)");
  }
  t.storage_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  return t;
}

Tensor Tensor::zeros(Shape shape, DType dtype) {
  Tensor t = empty(std::move(shape), dtype);
  std::memset(t.raw(), 0, t.nbytes());
  return t;
}

Tensor Tensor::from_storage(std::shared_ptr<std::byte> storage, Shape shape, DType dtype,
                            Device device) {
  Tensor t;
  t.storage_ = std::move(storage);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.device_ = device;
  return t;
}

Tensor Tensor::from_values(Shape shape, DType dtype, const std::vector<double>& values) {
  Tensor t = empty(std::move(shape), dtype);
  if (static_cast<std::int64_t>(values.size()) != t.numel()) {
    throw std::invalid_argument("from_values: " + std::to_string(values.size()) +
                                " values for shape " + shape_string(t.shape()));
  }
  for (std::size_t i = 0; i < values.size(); ++i) t.set(static_cast<std::int64_t>(i), values[i]);
  return t;
}

std::int64_t Tensor::dim(int i) const {
  int r = rank();
  int j = i < 0 ? i + r : i;
  if (j < 0 || j >= r) {
    throw std::out_of_range("dim " + std::to_string(i) + " of a tensor of shape " + shape_string(shape_));
  }
  return shape_[static_cast<std::size_t>(j)];
}

void Tensor::check_access(DType requested) const {
  if (!defined()) throw std::logic_error("access to an undefined tensor");
  if (requested != dtype_) {
    throw std::logic_error("tensor of dtype " + std::string(dtype_name(dtype_)) + " accessed as " +
                           std::string(dtype_name(requested)));
  }
}

Tensor Tensor::view(Shape shape) const {
  if (shape_numel(shape) != numel()) {
    throw std::invalid_argument("view: cannot view shape " + shape_string(shape_) + " as " + shape_string(shape));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::rows(std::int64_t begin, std::int64_t end) const {
  if (rank() == 0 || begin < 0 || end < begin || end > shape_[0]) {
    throw std::out_of_range("rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                            ") of a tensor of shape " + shape_string(shape_));
  }
  Tensor t = *this;
  std::int64_t row_elems = shape_[0] == 0 ? 0 : numel() / shape_[0];
  t.offset_ += static_cast<std::size_t>(begin * row_elems) * dtype_size(dtype_);
  t.shape_[0] = end - begin;
  return t;
}

Tensor Tensor::clone() const {
  if (device_ != Device::cpu) throw std::logic_error("clone of a device tensor: use its backend");
  Tensor t = empty(shape_, dtype_);
  std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

double Tensor::at(std::int64_t i) const {
  if (device_ != Device::cpu) throw std::logic_error("at() on a device tensor");
  if (i < 0 || i >= numel()) throw std::out_of_range("element " + std::to_string(i) + " of " + shape_string(shape_));
  switch (dtype_) {
    case DType::f32: return data<float>()[i];
    case DType::f64: return data<double>()[i];
    case DType::i32: return data<std::int32_t>()[i];
    case DType::i64: return static_cast<double>(data<std::int64_t>()[i]);
  }
  throw std::logic_error("unknown dtype");
}

void Tensor::set(std::int64_t i, double value) {
  if (device_ != Device::cpu) throw std::logic_error("set() on a device tensor");
  if (i < 0 || i >= numel()) throw std::out_of_range("element " + std::to_string(i) + " of " + shape_string(shape_));
  switch (dtype_) {
    case DType::f32: data<float>()[i] = static_cast<float>(value); return;
    case DType::f64: data<double>()[i] = value; return;
    case DType::i32: data<std::int32_t>()[i] = static_cast<std::int32_t>(value); return;
    case DType::i64: data<std::int64_t>()[i] = static_cast<std::int64_t>(value); return;
  }
}

}  // namespace trepro
