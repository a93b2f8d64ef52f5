#include <cmath>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

const Activation kActivations[] = {Activation::none, Activation::relu, Activation::gelu,
                                   Activation::gelu_tanh};
const Shape kShapes[] = {{1}, {3}, {17}, {64, 64}};

std::string name(Activation act) {
  switch (act) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
  }
  return "?";
}

class ActivationTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }

  // act(x) for host values, as doubles.
  std::vector<double> forward(Activation act, const std::vector<double>& xs) {
    Backend& b = backend();
    Shape shape{static_cast<std::int64_t>(xs.size())};
    Tensor x = b.upload(Tensor::from_values(shape, DType::f64, xs)), y = b.empty(shape, b.dtype());
    b.activation_forward(act, x, y);
    return to_vector(y);
  }
  // act'(x) for host values (dy = 1), as doubles.
  std::vector<double> derivative(Activation act, const std::vector<double>& xs) {
    Backend& b = backend();
    Shape shape{static_cast<std::int64_t>(xs.size())};
    Tensor x = b.upload(Tensor::from_values(shape, DType::f64, xs)), dy = b.empty(shape, b.dtype());
    Tensor dx = b.empty(shape, b.dtype());
    b.fill(dy, 1.0);
    b.activation_backward(act, x, dy, dx);
    return to_vector(dx);
  }

 private:
  std::vector<double> to_vector(const Tensor& t) {
    Tensor host = backend().download(t);
    std::vector<double> out;
    for (std::int64_t i = 0; i < host.numel(); ++i) out.push_back(host.at(i));
    return out;
  }
};

// Finite differences need float64 and smooth points; relu inputs stay at |x| >= 0.1, off the kink.
class ActivationGradientTest : public ActivationTest {};

TEST_P(ActivationTest, ForwardMatchesReference) {
  Backend& b = backend();
  for (Activation act : kActivations) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE(name(act) + " " + shape_string(shape));
      Tensor x = random_tensor(b, shape, 1, -3.0, 3.0), y = b.empty(shape, b.dtype());
      Tensor x_ref = on_reference(x), y_ref = reference().empty(shape, DType::f64);
      b.activation_forward(act, x, y);
      reference().activation_forward(act, x_ref, y_ref);
      EXPECT_TRUE(all_close("y", b, y, reference(), y_ref, tolerance(Check::op_vs_reference, b.dtype())));
    }
  }
}

TEST_P(ActivationTest, BackwardMatchesReference) {
  Backend& b = backend();
  for (Activation act : kActivations) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE(name(act) + " " + shape_string(shape));
      Tensor x = random_tensor(b, shape, 2, -3.0, 3.0), dy = random_tensor(b, shape, 3);
      Tensor dx = b.empty(shape, b.dtype()), dx_ref = reference().empty(shape, DType::f64);
      b.activation_backward(act, x, dy, dx);
      reference().activation_backward(act, on_reference(x), on_reference(dy), dx_ref);
      EXPECT_TRUE(all_close("dx", b, dx, reference(), dx_ref, tolerance(Check::op_vs_reference, b.dtype())));
    }
  }
}

TEST_P(ActivationTest, KnownValues) {
  const Tolerance tol = tolerance(Check::op_vs_reference, backend().dtype());
  auto expect_values = [&](const std::string& what, const std::vector<double>& actual,
                           const std::vector<double>& expected) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], tol.atol + tol.rtol * std::abs(expected[i]))
          << what << " [" << i << "]";
    }
  };
  // Phi(1) = 0.8413447460685429, phi(1) = 0.24197072451914337.
  expect_values("none", forward(Activation::none, {-1.5, 0.0, 2.0}), {-1.5, 0.0, 2.0});
  expect_values("relu", forward(Activation::relu, {-1.0, 0.0, 2.0}), {0.0, 0.0, 2.0});
  expect_values("gelu", forward(Activation::gelu, {-1.0, 0.0, 1.0}),
                {-0.15865525393145705, 0.0, 0.8413447460685429});
  expect_values("gelu_tanh", forward(Activation::gelu_tanh, {0.0, 1.0}), {0.0, 0.8411919906082768});
  expect_values("none'", derivative(Activation::none, {-1.5, 0.0, 2.0}), {1.0, 1.0, 1.0});
  expect_values("relu'", derivative(Activation::relu, {-1.0, 0.0, 2.0}), {0.0, 0.0, 1.0});
  expect_values("gelu'", derivative(Activation::gelu, {0.0, 1.0}),
                {0.5, 0.8413447460685429 + 0.24197072451914337});
  expect_values("gelu_tanh'", derivative(Activation::gelu_tanh, {0.0}), {0.5});
}

TEST_P(ActivationTest, RejectsAnOutputOfAnotherShape) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1), y = b.empty({3, 5}, b.dtype());
  try {
    b.activation_forward(Activation::gelu, x, y);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("activation_forward: y has shape [3, 5], expected [3, 4]"));
  }
}

TEST_P(ActivationGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  const Shape shape{3, 13};
  for (Activation act : kActivations) {
    SCOPED_TRACE(name(act));
    Tensor host = b.download(random_tensor(b, shape, 4, 0.1, 2.0));
    for (std::int64_t i = 1; i < host.numel(); i += 2) host.set(i, -host.at(i));
    Tensor x = b.upload(host);
    Tensor r = random_tensor(b, shape, 5), y = b.empty(shape, b.dtype()), dx = b.empty(shape, b.dtype());
    b.activation_backward(act, x, r, dx);
    auto loss = [&] {
      b.activation_forward(act, x, y);
      return dot(b, r, y);
    };
    EXPECT_TRUE(check_gradient("dx", b, x, dx, loss, x.numel()));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ActivationTest);
TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(ActivationGradientTest);

}  // namespace
}  // namespace trepro::testing
