#include "core/safetensors.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/atomic_file.h"

namespace trepro {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Header length, spelled out byte by byte so that the expected files do not depend on the host.
std::string le64(std::uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xffu);
  return out;
}

std::string assemble(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

std::string entry(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return R"({"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}";
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Each test gets its own folder, so that tests can list it and run in parallel.
class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("safetensors_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_bytes(const std::string& bytes) {
    std::string path = file("bad.safetensors");
    write_file_atomically(path, bytes);
    return path;
  }

  std::set<std::string> folder_listing() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.insert(e.path().filename().string());
    }
    return names;
  }

  // The message of the SafetensorsError that reading `bytes` raises.
  std::string read_error(const std::string& bytes) { return read_error_at(write_bytes(bytes)); }
  static std::string read_error_at(const std::string& path) {
    try {
      read_safetensors(path);
    } catch (const SafetensorsError& e) {
      return e.what();
    }
    ADD_FAILURE() << "reading " << path << " did not throw";
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(SafetensorsTest, RoundTripsEveryDtypeAndScalar) {
  std::map<std::string, Tensor> tensors;
  tensors["f32"] = Tensor::from_values({2, 3}, DType::f32, {-1.5, 0.0, 3.25, 1e-30, -0.0, 65504.0});
  tensors["f64"] = Tensor::from_values({3}, DType::f64, {1e300, -2.0 / 3.0, 5e-324});
  tensors["i32"] = Tensor::from_values({2}, DType::i32, {-2147483648.0, 2147483647.0});
  tensors["i64"] = Tensor::zeros({2, 1}, DType::i64);
  tensors["i64"].data<std::int64_t>()[0] = std::numeric_limits<std::int64_t>::min();
  tensors["i64"].data<std::int64_t>()[1] = std::numeric_limits<std::int64_t>::max();
  tensors["scalar"] = Tensor::from_values({}, DType::f64, {42.5});
  tensors["empty"] = Tensor::zeros({2, 0, 3}, DType::f32);
  // A view with a storage offset: the writer must start at raw(), not at the storage.
  tensors["rows"] = Tensor::from_values({3, 2}, DType::i32, {1, 2, 3, 4, 5, 6}).rows(1, 3);

  const std::string path = file("all.safetensors");
  write_safetensors(path, tensors);
  SafetensorsFile back = read_safetensors(path);

  ASSERT_EQ(back.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(back.tensors.count(name));
    EXPECT_TRUE(same_bytes(back.tensors[name], t));
    EXPECT_EQ(back.tensors[name].device(), Device::cpu);
  }
  EXPECT_EQ(back.tensors["scalar"].rank(), 0);
  EXPECT_EQ(back.tensors["scalar"].at(0), 42.5);
  EXPECT_EQ(back.tensors["rows"].at(0), 3.0);
  EXPECT_TRUE(back.metadata.empty());
}

TEST_F(SafetensorsTest, RoundTripsMetadata) {
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"config", R"({"d_model": 512})"}, {"note", "ünïcödé\nline"}, {"empty", ""}};
  const std::string path = file("meta.safetensors");
  write_safetensors(path, {{"w", Tensor::zeros({1}, DType::f32)}}, metadata);
  SafetensorsFile back = read_safetensors(path);
  EXPECT_EQ(back.metadata, metadata);
  EXPECT_EQ(back.tensors.size(), 1u);
}

TEST_F(SafetensorsTest, ReadsTheBytesOfThePythonWriter) {
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  ASSERT_EQ(header.size() % 8, 0u);
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f little-endian
  SafetensorsFile f = read_safetensors(write_bytes(assemble(header, data)));
  ASSERT_EQ(f.tensors.size(), 1u);
  const Tensor& a = f.tensors.at("a");
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.shape(), Shape({2}));
  EXPECT_EQ(a.at(0), 1.0);
  EXPECT_EQ(a.at(1), 2.0);
}

TEST_F(SafetensorsTest, WritesTheBytesOfThePythonWriter) {
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::string expected = assemble(header, std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8));
  const std::string path = file("a.safetensors");
  write_safetensors(path, {{"a", Tensor::from_values({2}, DType::f32, {1.0, 2.0})}});
  EXPECT_EQ(read_file(path), expected);
}

TEST_F(SafetensorsTest, WritesSortedPackedAndPadded) {
  const std::string path = file("sorted.safetensors");
  write_safetensors(path, {{"b", Tensor::zeros({3}, DType::i32)}, {"a", Tensor::zeros({1}, DType::f64)}},
                    {{"k", "v"}});
  const std::string bytes = read_file(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.find(R"({"__metadata__":{"k":"v"},"a":)"), 0u) << header;
  EXPECT_THAT(header, HasSubstr(R"("data_offsets":[0,8])"));
  EXPECT_THAT(header, HasSubstr(R"("data_offsets":[8,20])"));
  EXPECT_EQ(bytes.size(), 8 + n + 20);
}

TEST_F(SafetensorsTest, MissingFile) {
  const std::string path = file("nothing.safetensors");
  EXPECT_THAT(read_error_at(path), AllOf(HasSubstr(path), HasSubstr("No such file")));
}

TEST_F(SafetensorsTest, FileShorterThanTheHeaderLength) {
  EXPECT_THAT(read_error(std::string("\x08\x00\x00", 3)),
              AllOf(HasSubstr(file("bad.safetensors") + ": "), HasSubstr("3 bytes, fewer than the 8-byte")));
}

TEST_F(SafetensorsTest, HeaderLengthLargerThanTheFile) {
  EXPECT_THAT(read_error(le64(1000) + "{}"),
              AllOf(HasSubstr(file("bad.safetensors") + ": "), HasSubstr("header length 1000"),
                    HasSubstr("larger than the 2 bytes after it")));
}

TEST_F(SafetensorsTest, InvalidJson) {
  EXPECT_THAT(read_error(assemble(R"({"a":)", "")),
              HasSubstr(file("bad.safetensors") + ": header: invalid JSON: "));
}

// 100,000 nested arrays overflowed the stack when the error message quoted the header.
TEST_F(SafetensorsTest, DeeplyNestedHeaderIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(read_error(assemble(deep, "")),
            file("bad.safetensors") + ": header: JSON nested deeper than 64 levels (at byte 64)");
}

// nlohmann keeps the last of two entries; the file would mean two things.
TEST_F(SafetensorsTest, TensorNamedTwice) {
  const std::string header = R"({"a":)" + entry("F32", "[1]", "[0,4]") + R"(,"a":)" + entry("F32", "[1]", "[4,8]") + "}";
  EXPECT_EQ(read_error(assemble(header, std::string(8, '\0'))),
            file("bad.safetensors") + ": header: a: the key appears twice");
}

TEST_F(SafetensorsTest, HeaderNotAnObject) {
  EXPECT_THAT(read_error(assemble("[1, 2]", "")),
              AllOf(HasSubstr(file("bad.safetensors") + ": "), HasSubstr("header is not a JSON object")));
}

TEST_F(SafetensorsTest, UnsupportedDtype) {
  EXPECT_THAT(read_error(assemble(R"({"x":)" + entry("BF16", "[1]", "[0,2]") + "}", "ab")),
              AllOf(HasSubstr(file("bad.safetensors") + ": tensor x: "),
                    HasSubstr("unsupported dtype \"BF16\""), HasSubstr("supported: F32, F64, I32, I64")));
}

TEST_F(SafetensorsTest, ShapeNotAListOfNonNegativeIntegers) {
  for (const std::string shape : {"3", "[-1]", "[1.5]", R"(["2"])", "null"}) {
    SCOPED_TRACE(shape);
    EXPECT_THAT(read_error(assemble(R"({"x":)" + entry("F32", shape, "[0,4]") + "}", "abcd")),
                AllOf(HasSubstr(file("bad.safetensors") + ": tensor x: "),
                      HasSubstr("shape must be a list of non-negative integers, got " + shape)));
  }
}

TEST_F(SafetensorsTest, DataOffsetsNotBeginEnd) {
  for (const std::string offsets : {"[4,0]", "[0]", "[0,4,4]", "[-1,3]", R"("0,4")"}) {
    SCOPED_TRACE(offsets);
    EXPECT_THAT(read_error(assemble(R"({"x":)" + entry("F32", "[1]", offsets) + "}", "abcd")),
                AllOf(HasSubstr(file("bad.safetensors") + ": tensor x: "),
                      HasSubstr("data_offsets must be [begin, end] with begin <= end, got " + offsets)));
  }
}

TEST_F(SafetensorsTest, EntryWithMissingOrUnexpectedKey) {
  EXPECT_THAT(read_error(assemble(R"({"x":{"dtype":"F32","shape":[1]}})", "abcd")),
              AllOf(HasSubstr(file("bad.safetensors") + ": tensor x: "),
                    HasSubstr("missing \"data_offsets\"")));
  EXPECT_THAT(read_error(assemble(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"y":1}})", "abcd")),
              AllOf(HasSubstr(file("bad.safetensors") + ": tensor x: "), HasSubstr("unexpected key \"y\"")));
}

TEST_F(SafetensorsTest, Truncated) {
  EXPECT_THAT(read_error(assemble(R"({"x":)" + entry("F32", "[4]", "[0,16]") + "}", "abcdefgh")),
              AllOf(HasSubstr(file("bad.safetensors") + ": "),
                    HasSubstr("truncated: tensor x needs bytes [0, 16) but the data section has 8 bytes")));
}

TEST_F(SafetensorsTest, ByteSizeNotShapeTimesDtypeSize) {
  EXPECT_THAT(read_error(assemble(R"({"x":)" + entry("F32", "[3]", "[0,8]") + "}", "abcdefgh")),
              AllOf(HasSubstr(file("bad.safetensors") + ": tensor x: "),
                    HasSubstr("data_offsets [0, 8) hold 8 bytes but shape [3] of F32 needs 12 bytes")));
}

TEST_F(SafetensorsTest, OverlappingTensors) {
  const std::string header =
      R"({"a":)" + entry("F32", "[2]", "[0,8]") + R"(,"b":)" + entry("F32", "[2]", "[4,12]") + "}";
  EXPECT_THAT(read_error(assemble(header, std::string(12, 'x'))),
              AllOf(HasSubstr(file("bad.safetensors") + ": tensor b: "),
                    HasSubstr("overlap tensor a at [0, 8)")));
}

TEST_F(SafetensorsTest, GapBetweenTensors) {
  const std::string header =
      R"({"a":)" + entry("F32", "[1]", "[0,4]") + R"(,"b":)" + entry("F32", "[1]", "[8,12]") + "}";
  EXPECT_THAT(read_error(assemble(header, std::string(12, 'x'))),
              AllOf(HasSubstr(file("bad.safetensors") + ": "),
                    HasSubstr("bytes [4, 8) of the data section are not covered by any tensor")));
}

TEST_F(SafetensorsTest, TrailingBytes) {
  EXPECT_THAT(read_error(assemble(R"({"a":)" + entry("F32", "[1]", "[0,4]") + "}", std::string(8, 'x'))),
              AllOf(HasSubstr(file("bad.safetensors") + ": "),
                    HasSubstr("bytes [4, 8) at the end of the data section are not covered by any tensor")));
}

TEST_F(SafetensorsTest, MetadataValuesMustBeStrings) {
  EXPECT_THAT(read_error(assemble(R"({"__metadata__":{"k":1}})", "")),
              AllOf(HasSubstr(file("bad.safetensors") + ": "),
                    HasSubstr("__metadata__ value of \"k\" is not a string")));
  EXPECT_THAT(read_error(assemble(R"({"__metadata__":[]})", "")),
              AllOf(HasSubstr(file("bad.safetensors") + ": "), HasSubstr("__metadata__ is not an object")));
}

TEST_F(SafetensorsTest, WritesHostTensorsOnly) {
  const std::string path = file("w.safetensors");
  Tensor host = Tensor::zeros({2}, DType::f32);
  // Labelled as device memory, never dereferenced: the writer must refuse before touching it.
  Tensor device = Tensor::from_storage(std::shared_ptr<std::byte>(host.raw(), [](std::byte*) {}), {2},
                                       DType::f32, Device::cuda);
  auto write_error = [&](const std::map<std::string, Tensor>& tensors) -> std::string {
    try {
      write_safetensors(path, tensors);
    } catch (const SafetensorsError& e) {
      return e.what();
    }
    ADD_FAILURE() << "writing did not throw";
    return "";
  };
  EXPECT_THAT(write_error({{"d", device}}), AllOf(HasSubstr(path + ": tensor d: "), HasSubstr("cuda")));
  EXPECT_THAT(write_error({{"u", Tensor()}}), HasSubstr(path + ": tensor u: undefined"));
  EXPECT_THAT(write_error({{"__metadata__", host}}), HasSubstr("reserved"));
  EXPECT_TRUE(folder_listing().empty());
}

TEST_F(SafetensorsTest, AtomicWriteLeavesNoTemporary) {
  const std::string path = file("out.bin");
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_file(path), "second");
  write_safetensors(file("t.safetensors"), {{"x", Tensor::zeros({4}, DType::f64)}});
  EXPECT_EQ(folder_listing(), (std::set<std::string>{"out.bin", "t.safetensors"}));
}

TEST_F(SafetensorsTest, FailedAtomicWriteRemovesTheTemporary) {
  // rename() cannot replace a non-empty folder, so the write fails after the temporary exists.
  const std::string path = file("occupied");
  std::filesystem::create_directories(dir_ / "occupied" / "child");
  try {
    write_file_atomically(path, "data");
    ADD_FAILURE() << "did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr(path + ": "), HasSubstr("rename")));
  }
  EXPECT_EQ(folder_listing(), (std::set<std::string>{"occupied"}));
}

TEST_F(SafetensorsTest, AtomicWriteIntoMissingFolderNamesIt) {
  const std::string folder = file("no_such_folder");
  try {
    write_safetensors(folder + "/x.safetensors", {{"x", Tensor::zeros({1}, DType::f32)}});
    ADD_FAILURE() << "did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("the folder " + folder + " does not exist"));
  }
  EXPECT_TRUE(folder_listing().empty());
}

class RequireTensorTest : public ::testing::Test {
 protected:
  SafetensorsFile file_{{{"a", Tensor::zeros({2, 3}, DType::f32)},
                         {"b", Tensor::zeros({1}, DType::i64)},
                         {"c", Tensor::zeros({}, DType::f64)}},
                        {}};
  const std::string path_ = "ckpt.safetensors";

  template <class F> std::string error(F&& lookup) {
    try {
      lookup();
    } catch (const SafetensorsError& e) {
      return e.what();
    }
    ADD_FAILURE() << "lookup did not throw";
    return "";
  }
};

TEST_F(RequireTensorTest, ReturnsAMatchingTensor) {
  EXPECT_EQ(&require_tensor_any(file_, path_, "a", {DType::f32}, {2, 3}), &file_.tensors.at("a"));
  EXPECT_EQ(&require_tensor_any(file_, path_, "a", {DType::f32}), &file_.tensors.at("a"));
  EXPECT_EQ(&require_tensor_any(file_, path_, "b", {DType::i32, DType::i64}), &file_.tensors.at("b"));
}

TEST_F(RequireTensorTest, MissingListsTheNamesPresent) {
  EXPECT_EQ(error([&] { require_tensor_any(file_, path_, "logits", {DType::f32}); }),
            "ckpt.safetensors: tensor logits: missing (the file has: a, b, c)");
  SafetensorsFile empty;
  EXPECT_EQ(error([&] { require_tensor_any(empty, path_, "logits", {DType::f32}); }),
            "ckpt.safetensors: tensor logits: missing (the file has no tensors)");
}

TEST_F(RequireTensorTest, WrongDtype) {
  EXPECT_EQ(error([&] { require_tensor_any(file_, path_, "a", {DType::i32, DType::i64}); }),
            "ckpt.safetensors: tensor a: dtype F32, expected int32 or int64");
  EXPECT_EQ(error([&] { require_tensor_any(file_, path_, "b", {DType::f64}); }),
            "ckpt.safetensors: tensor b: dtype I64, expected float64");
}

TEST_F(RequireTensorTest, WrongShape) {
  EXPECT_EQ(error([&] { require_tensor_any(file_, path_, "a", {DType::f32}, {3, 2}); }),
            "ckpt.safetensors: tensor a: shape [2, 3], expected [3, 2]");
}

}  // namespace
}  // namespace trepro
