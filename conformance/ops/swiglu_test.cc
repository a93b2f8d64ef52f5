#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

const Shape kShapes[] = {{1, 1}, {3, 17}, {17, 3}, {64, 64}};

class SwigluTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }
  Tensor host(const Shape& shape, const std::vector<double>& values) {
    return backend().upload(Tensor::from_values(shape, DType::f64, values));
  }
};

class SwigluGradientTest : public SwigluTest {};

TEST_P(SwigluTest, ForwardMatchesReference) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor gate = random_tensor(b, shape, 1, -4.0, 4.0), up = random_tensor(b, shape, 2);
    Tensor y = b.empty(shape, b.dtype()), y_ref = reference().empty(shape, DType::f64);
    b.swiglu_forward(gate, up, y);
    reference().swiglu_forward(on_reference(gate), on_reference(up), y_ref);
    EXPECT_TRUE(all_close("y", b, y, reference(), y_ref, tolerance(Check::op_vs_reference, b.dtype())));
  }
}

TEST_P(SwigluTest, BackwardMatchesReference) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor gate = random_tensor(b, shape, 3, -4.0, 4.0), up = random_tensor(b, shape, 4);
    Tensor dy = random_tensor(b, shape, 5);
    Tensor dgate = b.empty(shape, b.dtype()), dup = b.empty(shape, b.dtype());
    b.swiglu_backward(gate, up, dy, dgate, dup);
    Tensor dgate_ref = reference().empty(shape, DType::f64), dup_ref = reference().empty(shape, DType::f64);
    reference().swiglu_backward(on_reference(gate), on_reference(up), on_reference(dy), dgate_ref, dup_ref);
    const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype());
    EXPECT_TRUE(all_close("dgate", b, dgate, reference(), dgate_ref, tol));
    EXPECT_TRUE(all_close("dup", b, dup, reference(), dup_ref, tol));
  }
}

TEST_P(SwigluTest, KnownValues) {
  // silu(0) = 0, so a zero gate closes the unit whatever up is; silu(1) = sigmoid(1) = 0.7310585786300049;
  // silu'(0) = 1/2, so dgate = dy up / 2 at a zero gate; silu(-1) = -sigmoid(-1) = -0.2689414213699951.
  Backend& b = backend();
  Tensor gate = host({1, 4}, {0, 0, 1, -1}), up = host({1, 4}, {0.75, -2, 1, 1});
  Tensor y = b.empty({1, 4}, b.dtype());
  b.swiglu_forward(gate, up, y);
  const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype());
  EXPECT_TRUE(all_close("y", b, y, b, host({1, 4}, {0, 0, 0.7310585786300049, -0.2689414213699951}), tol));

  Tensor dgate = b.empty({1, 4}, b.dtype()), dup = b.empty({1, 4}, b.dtype());
  b.swiglu_backward(gate, up, host({1, 4}, {1, 1, 1, 1}), dgate, dup);
  // silu'(1) = s (1 + (1 - s)) with s = sigmoid(1); silu'(-1) = s' (1 - (1 - s')) = s'^2, s' = sigmoid(-1).
  const double s = 0.7310585786300049, s_neg = 0.2689414213699951;
  EXPECT_TRUE(all_close("dgate", b, dgate, b, host({1, 4}, {0.375, -1, s * (2 - s), s_neg * s_neg}), tol));
  EXPECT_TRUE(all_close("dup", b, dup, b, host({1, 4}, {0, 0, s, -s_neg}), tol));
}

TEST_P(SwigluTest, RejectsAnUpOfAnotherShape) {
  Backend& b = backend();
  Tensor gate = random_tensor(b, {3, 4}, 1), up = random_tensor(b, {4, 3}, 2), y = b.empty({3, 4}, b.dtype());
  try {
    b.swiglu_forward(gate, up, y);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("swiglu_forward: up has shape [4, 3], expected [3, 4]"));
  }
}

// L = <r, silu(gate) up>, differentiated with respect to gate and to up.
TEST_P(SwigluGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  const Shape shape{3, 13};
  Tensor gate = random_tensor(b, shape, 6, -4.0, 4.0), up = random_tensor(b, shape, 7),
         r = random_tensor(b, shape, 8);
  Tensor y = b.empty(shape, b.dtype()), dgate = b.empty(shape, b.dtype()), dup = b.empty(shape, b.dtype());
  b.swiglu_backward(gate, up, r, dgate, dup);
  auto loss = [&] {
    b.swiglu_forward(gate, up, y);
    return dot(b, r, y);
  };
  EXPECT_TRUE(check_gradient("dgate", b, gate, dgate, loss, gate.numel()));
  EXPECT_TRUE(check_gradient("dup", b, up, dup, loss, up.numel()));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(SwigluTest);
TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(SwigluGradientTest);

}  // namespace
}  // namespace trepro::testing
