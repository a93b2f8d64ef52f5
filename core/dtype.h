// Element types and devices a Tensor can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trepro {

enum class DType { f32, f64, i32, i64 };
enum class Device { cpu, cuda };

std::size_t dtype_size(DType dtype);
// "float32", "float64", "int32", "int64": the names the CLI and reports use.
std::string_view dtype_name(DType dtype);
// Parses a dtype_name(); throws std::invalid_argument naming the accepted values.
DType parse_dtype(std::string_view name);
std::string_view device_name(Device device);

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }

}  // namespace trepro
