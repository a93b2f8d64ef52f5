// A dense, row-major, contiguous tensor: shape, dtype, device and shared storage.
//
// A Tensor either owns its storage (Tensor::empty / zeros) or is a view into another tensor's
// storage (view / rows): views share ownership, so a view never dangles. There are no strides:
// every op in this project works on contiguous data, which keeps all backends simple.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace trepro {

using Shape = std::vector<std::int64_t>;

// The alignment of host tensor storage: a cache line, and the widest vector of any SIMD target
// (AVX-512).
inline constexpr std::size_t kHostAlignment = 64;

std::int64_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);  // "[2, 3, 4]"

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false

  // Uninitialized host memory, kHostAlignment-aligned.
  static Tensor empty(Shape shape, DType dtype);
  static Tensor zeros(Shape shape, DType dtype);
  // Wraps memory owned elsewhere (for example a device allocation); `storage` keeps it alive.
  static Tensor from_storage(std::shared_ptr<std::byte> storage, Shape shape, DType dtype,
                             Device device);
  // Host tensor holding a copy of `values` converted to `dtype` (floating or integer).
  static Tensor from_values(Shape shape, DType dtype, const std::vector<double>& values);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // dim(-1) is the last dimension.
  std::int64_t dim(int i) const;
  std::int64_t numel() const { return shape_numel(shape_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }

  // Typed access; throws std::logic_error when T does not match dtype().
  template <class T> T* data();
  template <class T> const T* data() const;
  std::byte* raw() { return storage_.get() + offset_; }
  const std::byte* raw() const { return storage_.get() + offset_; }

  // Same storage, another shape with the same element count.
  Tensor view(Shape shape) const;
  // Rows [begin, end) along the first dimension, sharing storage.
  Tensor rows(std::int64_t begin, std::int64_t end) const;
  // A deep copy on the host (device tensors are copied by their backend).
  Tensor clone() const;

  // Element i (flat index) converted to double, for tests and I/O; host only.
  double at(std::int64_t i) const;
  void set(std::int64_t i, double value);

 private:
  std::shared_ptr<std::byte> storage_;
  std::size_t offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::f32;
  Device device_ = Device::cpu;

  void check_access(DType requested) const;
};

template <class T> T* Tensor::data() {
  check_access(dtype_of<T>());
  return reinterpret_cast<T*>(raw());
}
template <class T> const T* Tensor::data() const {
  check_access(dtype_of<T>());
  return reinterpret_cast<const T*>(raw());
}

}  // namespace trepro
