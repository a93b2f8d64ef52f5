// safetensors files of another writer: python_numpy.safetensors was written by the Python
// `safetensors` package, whose layout differs from ours (tensors ordered by dtype size, then by
// name; an F32 scalar of shape []), and our writer must give trepro.safetensors, which the
// package reads (interop/safetensors_check.py checks both files against the package itself).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "core/safetensors.h"

namespace trepro {
namespace {

const std::filesystem::path kInterop = std::filesystem::path(TREPRO_SOURCE_DIR) / "conformance/core/interop";

// The tensors and metadata of interop/safetensors_check.py.
std::map<std::string, Tensor> expected_tensors() {
  return {{"a.weight", Tensor::from_values({2, 3}, DType::f32, {0, 0.25, 0.5, 0.75, 1, 1.25})},
          {"b.ids", Tensor::from_values({3}, DType::i32, {7, -3, 11})},
          {"c.double", Tensor::from_values({2}, DType::f64, {0.1, -2.5})},
          {"d.long", Tensor::from_values({2, 1}, DType::i64, {1099511627776.0, -5})},
          {"e.scalar", Tensor::from_values({}, DType::f32, {1.5})}};
}
const std::map<std::string, std::string> kMetadata = {{"format", "np"}, {"note", "python"}};

std::string bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void expect_tensors(const std::map<std::string, Tensor>& actual) {
  const std::map<std::string, Tensor> expected = expected_tensors();
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [name, tensor] : expected) {
    ASSERT_TRUE(actual.count(name)) << name;
    const Tensor& got = actual.at(name);
    EXPECT_EQ(got.dtype(), tensor.dtype()) << name;
    EXPECT_EQ(got.shape(), tensor.shape()) << name;
    ASSERT_EQ(got.nbytes(), tensor.nbytes()) << name;
    EXPECT_EQ(std::memcmp(got.raw(), tensor.raw(), tensor.nbytes()), 0) << name << ": other values";
  }
}

TEST(SafetensorsInterop, ReadsAFileOfThePythonPackage) {
  const SafetensorsFile file = read_safetensors((kInterop / "python_numpy.safetensors").string());
  expect_tensors(file.tensors);
  EXPECT_EQ(file.metadata, kMetadata);
}

TEST(SafetensorsInterop, WritesTheFileThePythonPackageReads) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "safetensors_interop.safetensors";
  write_safetensors(path.string(), expected_tensors(), kMetadata);
  EXPECT_EQ(bytes_of(path), bytes_of(kInterop / "trepro.safetensors"));
  expect_tensors(read_safetensors(path.string()).tensors);
}

}  // namespace
}  // namespace trepro
