#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

class ElementwiseTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }
};

const Shape kShapes[] = {{1}, {3}, {17}, {3, 17}, {64, 5}};

TEST_P(ElementwiseTest, FillSetsEveryElement) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 17}, 1);
  b.fill(x, 0.25);
  Tensor hx = b.download(x);
  for (std::int64_t i = 0; i < hx.numel(); ++i) ASSERT_EQ(hx.at(i), 0.25) << "element " << i;
}

TEST_P(ElementwiseTest, AddInplaceMatchesReference) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor acc = random_tensor(b, shape, 2), x = random_tensor(b, shape, 3);
    Tensor acc_ref = on_reference(acc), x_ref = on_reference(x);
    b.add_inplace(acc, x);
    reference().add_inplace(acc_ref, x_ref);
    EXPECT_TRUE(all_close("acc", b, acc, reference(), acc_ref, tolerance(Check::op_vs_reference, b.dtype())));
  }
}

TEST_P(ElementwiseTest, ScaleInplaceMatchesReference) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor x = random_tensor(b, shape, 4);
    Tensor x_ref = on_reference(x);
    b.scale_inplace(x, -0.3);
    reference().scale_inplace(x_ref, -0.3);
    EXPECT_TRUE(all_close("x", b, x, reference(), x_ref, tolerance(Check::op_vs_reference, b.dtype())));
  }
}

TEST_P(ElementwiseTest, SumSquaresMatchesReferenceAtDoublePrecision) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor x = random_tensor(b, shape, 5);
    const double expected = reference().sum_squares(on_reference(x));
    // Every backend accumulates in double, so the float64 bound applies even to float tensors.
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f64, shape_numel(shape));
    EXPECT_NEAR(b.sum_squares(x), expected, tol.atol + tol.rtol * expected);
  }
}

TEST_P(ElementwiseTest, SumSquaresKeepsWhatAFloatSumWouldLose) {
  // 1 + 2^-26 is not a float; any float accumulator returns 1 or 1 + 2^-23.
  Backend& b = backend();
  Tensor x = b.upload(Tensor::from_values({2}, DType::f64, {1.0, 0x1p-13}));
  EXPECT_EQ(b.sum_squares(x), 1.0 + 0x1p-26);
}

TEST_P(ElementwiseTest, AllFiniteDetectsNanAndInfinityAnywhere) {
  Backend& b = backend();
  EXPECT_TRUE(b.all_finite(random_tensor(b, {3, 17}, 6)));
  for (double bad :
       {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    for (std::int64_t at : {0, 25, 50}) {
      Tensor host = b.download(random_tensor(b, {3, 17}, 6));
      host.set(at, bad);
      EXPECT_FALSE(b.all_finite(b.upload(host))) << bad << " at element " << at;
    }
  }
}

TEST_P(ElementwiseTest, AddInplaceRejectsAMismatchedShape) {
  Backend& b = backend();
  Tensor acc = b.zeros({3, 4}, b.dtype());
  Tensor x = b.zeros({4, 3}, b.dtype());
  try {
    b.add_inplace(acc, x);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("add_inplace: x has shape [4, 3], expected [3, 4]"));
  }
}

TEST_P(ElementwiseTest, FillRejectsAnIntegerTensor) {
  Backend& b = backend();
  Tensor ids = int_tensor(b, {2}, {1, 2});
  try {
    b.fill(ids, 1.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("fill: x has dtype int32"));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ElementwiseTest);

}  // namespace
}  // namespace trepro::testing
