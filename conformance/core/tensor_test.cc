#include "core/tensor.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace trepro {
namespace {

TEST(Tensor, DefaultIsUndefined) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_THROW(t.data<float>(), std::logic_error);
}

TEST(Tensor, ZerosAreZeroForEveryDtype) {
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor t = Tensor::zeros({3, 5}, dtype);
    EXPECT_EQ(t.numel(), 15);
    EXPECT_EQ(t.nbytes(), 15 * dtype_size(dtype));
    for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.at(i), 0.0);
  }
}

TEST(Tensor, FromValuesAtAndSet) {
  Tensor f = Tensor::from_values({2, 2}, DType::f32, {1.5, -2.0, 0.25, 1e6});
  EXPECT_EQ(f.shape(), Shape({2, 2}));
  EXPECT_EQ(f.at(3), 1e6);
  f.set(1, 7.0);
  EXPECT_EQ(f.data<float>()[1], 7.0f);

  Tensor d = Tensor::from_values({3}, DType::f64, {0.1, 0.2, 0.3});
  EXPECT_EQ(d.at(1), 0.2);  // float64 keeps the exact double

  Tensor i = Tensor::from_values({3}, DType::i32, {-3, 0, 2147483647});
  EXPECT_EQ(i.data<std::int32_t>()[0], -3);
  EXPECT_EQ(i.at(2), 2147483647.0);

  Tensor l = Tensor::from_values({2}, DType::i64, {-9007199254740992.0, 42});
  EXPECT_EQ(l.data<std::int64_t>()[0], -9007199254740992LL);
  l.set(1, 43);
  EXPECT_EQ(l.at(1), 43.0);

  Tensor s = Tensor::from_values({}, DType::f32, {3.0});
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.at(0), 3.0);
}

// A wrapped element or byte count would size a buffer smaller than the tensor (a config with
// d_ff 2^62 once crashed in the parameters' initialization): both are errors naming the shape,
// and so is memory that cannot be had.
TEST(Tensor, SizesPastInt64OrMemoryAreErrorsNamingTheShape) {
  const std::int64_t huge = std::int64_t{1} << 62;
  EXPECT_EQ(shape_numel({huge, 1}), huge);
  try {
    shape_numel({huge, 4});
    FAIL() << "2^64 elements counted";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("[4611686018427387904, 4]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tensor::empty({huge}, DType::f64), std::length_error);  // 2^65 bytes
  try {
    Tensor::empty({std::int64_t{1} << 50}, DType::f32);  // 4 PiB
    FAIL() << "4 PiB allocated";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate a tensor of shape [1125899906842624]"), std::string::npos)
        << e.what();
  }
}

TEST(Tensor, FromValuesChecksTheCount) {
  EXPECT_THROW(Tensor::from_values({2, 2}, DType::f32, {1, 2, 3}), std::invalid_argument);
}

TEST(Tensor, AtAndSetCheckTheIndex) {
  Tensor t = Tensor::zeros({4}, DType::f32);
  EXPECT_THROW(t.at(4), std::out_of_range);
  EXPECT_THROW(t.at(-1), std::out_of_range);
  EXPECT_THROW(t.set(4, 1.0), std::out_of_range);
}

TEST(Tensor, DataChecksTheDtype) {
  Tensor t = Tensor::zeros({2}, DType::f32);
  EXPECT_NO_THROW(t.data<float>());
  EXPECT_THROW(t.data<double>(), std::logic_error);
  EXPECT_THROW(t.data<std::int32_t>(), std::logic_error);
  const Tensor& c = t;
  EXPECT_THROW(c.data<std::int64_t>(), std::logic_error);
}

TEST(Tensor, DimCountsFromTheEnd) {
  Tensor t = Tensor::zeros({2, 3, 4}, DType::f32);
  EXPECT_EQ(t.dim(0), 2);
  EXPECT_EQ(t.dim(-1), 4);
  EXPECT_EQ(t.dim(-3), 2);
  EXPECT_THROW(t.dim(3), std::out_of_range);
  EXPECT_THROW(t.dim(-4), std::out_of_range);
}

TEST(Tensor, ViewSharesStorage) {
  Tensor t = Tensor::from_values({2, 3}, DType::f32, {0, 1, 2, 3, 4, 5});
  Tensor v = t.view({3, 2});
  EXPECT_EQ(v.shape(), Shape({3, 2}));
  EXPECT_EQ(v.raw(), t.raw());
  v.set(5, 50.0);
  EXPECT_EQ(t.at(5), 50.0);
  EXPECT_THROW(t.view({4, 2}), std::invalid_argument);
}

TEST(Tensor, RowsShareStorage) {
  Tensor t = Tensor::from_values({4, 2}, DType::i64, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor r = t.rows(1, 3);
  EXPECT_EQ(r.shape(), Shape({2, 2}));
  EXPECT_EQ(r.at(0), 2.0);
  EXPECT_EQ(r.at(3), 5.0);
  r.set(0, 20.0);
  EXPECT_EQ(t.at(2), 20.0);
  // Rows of rows accumulate the offset.
  EXPECT_EQ(r.rows(1, 2).at(0), 4.0);
  EXPECT_EQ(t.rows(4, 4).numel(), 0);
}

TEST(Tensor, ViewsKeepTheStorageAlive) {
  Tensor r;
  {
    Tensor t = Tensor::from_values({3}, DType::f64, {1, 2, 3});
    r = t.rows(2, 3);
  }
  EXPECT_EQ(r.at(0), 3.0);
}

TEST(Tensor, RowsOutOfRangeThrow) {
  Tensor t = Tensor::zeros({4, 2}, DType::f32);
  EXPECT_THROW(t.rows(0, 5), std::out_of_range);
  EXPECT_THROW(t.rows(-1, 2), std::out_of_range);
  EXPECT_THROW(t.rows(3, 2), std::out_of_range);
  EXPECT_THROW(Tensor::zeros({}, DType::f32).rows(0, 1), std::out_of_range);
}

TEST(Tensor, CloneIsDeep) {
  Tensor t = Tensor::from_values({2}, DType::f32, {1, 2});
  Tensor c = t.clone();
  c.set(0, 10.0);
  EXPECT_EQ(t.at(0), 1.0);
  EXPECT_EQ(c.at(1), 2.0);
}

}  // namespace
}  // namespace trepro
