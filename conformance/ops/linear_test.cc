#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

struct Dims {
  std::int64_t n, k, m;  // x [n, k], w [m, k], y [n, m]
};
// {9, 21, 35}: whole 16-column strips of w with a depth that is not a multiple of 8 (the AVX2
// packing transposes 8 x 8 blocks and copies the rest), and a partial strip.
const Dims kDims[] = {{1, 1, 1}, {3, 17, 5}, {5, 3, 17}, {17, 64, 3}, {64, 64, 64}, {9, 21, 35}};
const Activation kActivations[] = {Activation::none, Activation::relu, Activation::gelu,
                                   Activation::gelu_tanh};

std::string describe(const Dims& d, Activation act, bool bias) {
  const char* names[] = {"none", "relu", "gelu", "gelu_tanh"};
  return "n=" + std::to_string(d.n) + " k=" + std::to_string(d.k) + " m=" + std::to_string(d.m) + " " +
         names[static_cast<int>(act)] + (bias ? " with bias" : " without bias");
}

class LinearTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }
  // A copy on the backend, for "before and after" comparisons.
  Tensor copy(const Tensor& t) { return backend().upload(backend().download(t)); }
};

class LinearGradientTest : public LinearTest {};

TEST_P(LinearTest, ForwardMatchesReference) {
  Backend& b = backend();
  for (const Dims& d : kDims) {
    for (Activation act : kActivations) {
      for (bool with_bias : {true, false}) {
        SCOPED_TRACE(describe(d, act, with_bias));
        Tensor x = random_tensor(b, {d.n, d.k}, 1), w = random_tensor(b, {d.m, d.k}, 2);
        Tensor bias = random_tensor(b, {d.m}, 3);
        Tensor y = b.empty({d.n, d.m}, b.dtype()), pre = b.empty({d.n, d.m}, b.dtype());
        b.linear_forward(x, w, with_bias ? &bias : nullptr, act, y, &pre);

        Tensor bias_ref = on_reference(bias);
        Tensor y_ref = reference().empty({d.n, d.m}, DType::f64),
               pre_ref = reference().empty({d.n, d.m}, DType::f64);
        reference().linear_forward(on_reference(x), on_reference(w), with_bias ? &bias_ref : nullptr, act,
                                   y_ref, &pre_ref);
        const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), d.k);
        EXPECT_TRUE(all_close("y", b, y, reference(), y_ref, tol));
        if (act != Activation::none) {
          EXPECT_TRUE(all_close("pre", b, pre, reference(), pre_ref, tol));
        }
      }
    }
  }
}

TEST_P(LinearTest, BackwardMatchesReference) {
  Backend& b = backend();
  for (const Dims& d : kDims) {
    for (Activation act : kActivations) {
      SCOPED_TRACE(describe(d, act, true));
      Tensor x = random_tensor(b, {d.n, d.k}, 4), w = random_tensor(b, {d.m, d.k}, 5);
      // pre is an input of backward: the reference gets the backend's, so relu takes the same branches.
      Tensor pre = random_tensor(b, {d.n, d.m}, 6, -3.0, 3.0), dy = random_tensor(b, {d.n, d.m}, 7);
      Tensor dx = b.empty({d.n, d.k}, b.dtype()), dw = b.zeros({d.m, d.k}, b.dtype()),
             db = b.zeros({d.m}, b.dtype());
      b.linear_backward(x, w, &pre, act, dy, &dx, dw, &db);

      Backend& r = reference();
      Tensor pre_ref = on_reference(pre);
      Tensor dx_ref = r.empty({d.n, d.k}, DType::f64), dw_ref = r.zeros({d.m, d.k}, DType::f64);
      Tensor db_ref = r.zeros({d.m}, DType::f64);
      r.linear_backward(on_reference(x), on_reference(w), &pre_ref, act, on_reference(dy), &dx_ref, dw_ref,
                        &db_ref);
      EXPECT_TRUE(all_close("dx", b, dx, r, dx_ref, tolerance(Check::op_vs_reference, b.dtype(), d.m)));
      EXPECT_TRUE(all_close("dw", b, dw, r, dw_ref, tolerance(Check::op_vs_reference, b.dtype(), d.n)));
      EXPECT_TRUE(all_close("db", b, db, r, db_ref, tolerance(Check::op_vs_reference, b.dtype(), d.n)));
    }
  }
}

TEST_P(LinearTest, KnownAnswerWithRelu) {
  // pre = x w^T + b = [1*3 + 2*4 + 0.5, -1*5 - 2*6 - 1] = [11.5, -18]; relu kills the second.
  Backend& b = backend();
  auto host = [&](Shape shape, std::vector<double> values) {
    return b.upload(Tensor::from_values(std::move(shape), DType::f64, values));
  };
  Tensor x = host({1, 2}, {1, 2}), w = host({2, 2}, {3, 4, -5, -6}), bias = host({2}, {0.5, -1});
  Tensor y = b.empty({1, 2}, b.dtype()), pre = b.empty({1, 2}, b.dtype());
  b.linear_forward(x, w, &bias, Activation::relu, y, &pre);
  const Tolerance exact{0.0, 0.0};  // small integers and halves: every operation is exact
  EXPECT_TRUE(all_close("pre", b, pre, b, host({1, 2}, {11.5, -18}), exact));
  EXPECT_TRUE(all_close("y", b, y, b, host({1, 2}, {11.5, 0}), exact));

  // dpre = [1, 0]: dx = dpre w = [3, 4], dw = dpre^T x = [[1, 2], [0, 0]], db = dpre.
  Tensor dx = b.empty({1, 2}, b.dtype()), dw = b.zeros({2, 2}, b.dtype()), db = b.zeros({2}, b.dtype());
  b.linear_backward(x, w, &pre, Activation::relu, host({1, 2}, {1, 1}), &dx, dw, &db);
  EXPECT_TRUE(all_close("dx", b, dx, b, host({1, 2}, {3, 4}), exact));
  EXPECT_TRUE(all_close("dw", b, dw, b, host({2, 2}, {1, 2, 0, 0}), exact));
  EXPECT_TRUE(all_close("db", b, db, b, host({2}, {1, 0}), exact));
}

TEST_P(LinearTest, BackwardAccumulatesParameterGradientsAndOverwritesDx) {
  Backend& b = backend();
  const Dims d{17, 64, 3};
  Tensor x = random_tensor(b, {d.n, d.k}, 8), w = random_tensor(b, {d.m, d.k}, 9);
  Tensor pre = random_tensor(b, {d.n, d.m}, 10), dy = random_tensor(b, {d.n, d.m}, 11);
  Tensor dx = b.empty({d.n, d.k}, b.dtype()), dw = b.zeros({d.m, d.k}, b.dtype()),
         db = b.zeros({d.m}, b.dtype());
  b.fill(dx, std::numeric_limits<double>::quiet_NaN());
  b.linear_backward(x, w, &pre, Activation::gelu, dy, &dx, dw, &db);
  Tensor dx_once = copy(dx), dw_twice = copy(dw), db_twice = copy(db);
  b.scale_inplace(dw_twice, 2.0);
  b.scale_inplace(db_twice, 2.0);

  b.linear_backward(x, w, &pre, Activation::gelu, dy, &dx, dw, &db);
  EXPECT_TRUE(all_close("dx", b, dx, b, dx_once, tolerance(Check::invariant, b.dtype(), d.m)));
  EXPECT_TRUE(all_close("dw", b, dw, b, dw_twice, tolerance(Check::invariant, b.dtype(), d.n)));
  EXPECT_TRUE(all_close("db", b, db, b, db_twice, tolerance(Check::invariant, b.dtype(), d.n)));
}

TEST_P(LinearTest, NullDxAndDbAreSkipped) {
  Backend& b = backend();
  const Dims d{5, 3, 17};
  Tensor x = random_tensor(b, {d.n, d.k}, 12), w = random_tensor(b, {d.m, d.k}, 13),
         dy = random_tensor(b, {d.n, d.m}, 14);
  Tensor dx = b.empty({d.n, d.k}, b.dtype()), dw = b.zeros({d.m, d.k}, b.dtype()),
         db = b.zeros({d.m}, b.dtype());
  b.linear_backward(x, w, nullptr, Activation::none, dy, &dx, dw, &db);
  Tensor dw_alone = b.zeros({d.m, d.k}, b.dtype());
  b.linear_backward(x, w, nullptr, Activation::none, dy, nullptr, dw_alone, nullptr);
  EXPECT_TRUE(all_close("dw", b, dw_alone, b, dw, tolerance(Check::invariant, b.dtype(), d.n)));
}

TEST_P(LinearTest, RejectsAWeightOfTheWrongWidth) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1), w = random_tensor(b, {5, 3}, 2), y = b.empty({3, 5}, b.dtype());
  try {
    b.linear_forward(x, w, nullptr, Activation::none, y, nullptr);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("linear_forward: w has shape [5, 3], expected [5, 4]"));
  }
}

TEST_P(LinearTest, RejectsAMissingPreActivation) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1), w = random_tensor(b, {5, 4}, 2), y = b.empty({3, 5}, b.dtype());
  try {
    b.linear_forward(x, w, nullptr, Activation::gelu, y, nullptr);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("linear_forward: pre is required"));
  }
}

TEST_P(LinearTest, BackwardRejectsAWeightGradientOfTheWrongShape) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1), w = random_tensor(b, {5, 4}, 2), dy = random_tensor(b, {3, 5}, 3);
  Tensor dw = b.zeros({4, 5}, b.dtype());
  try {
    b.linear_backward(x, w, nullptr, Activation::none, dy, nullptr, dw, nullptr);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("linear_backward: dw has shape [4, 5], expected [5, 4]"));
  }
}

// L = <r, y> with y = act(x w^T + b): every gradient against central differences.
TEST_P(LinearGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  const Dims d{3, 7, 5};
  for (Activation act : kActivations) {
    SCOPED_TRACE(describe(d, act, true));
    Tensor x = random_tensor(b, {d.n, d.k}, 15), w = random_tensor(b, {d.m, d.k}, 16);
    Tensor bias = random_tensor(b, {d.m}, 17), r = random_tensor(b, {d.n, d.m}, 18);
    Tensor y = b.empty({d.n, d.m}, b.dtype()), pre = b.empty({d.n, d.m}, b.dtype());
    auto loss = [&] {
      b.linear_forward(x, w, &bias, act, y, &pre);
      return dot(b, r, y);
    };
    loss();
    if (act == Activation::relu) {
      Tensor hp = b.download(pre);
      double nearest = std::numeric_limits<double>::infinity();
      for (std::int64_t i = 0; i < hp.numel(); ++i) nearest = std::min(nearest, std::abs(hp.at(i)));
      ASSERT_GT(nearest, 1e-3) << "a pre-activation sits on relu's kink, where differences are meaningless";
    }
    Tensor dx = b.empty({d.n, d.k}, b.dtype()), dw = b.zeros({d.m, d.k}, b.dtype()),
           db = b.zeros({d.m}, b.dtype());
    b.linear_backward(x, w, &pre, act, r, &dx, dw, &db);
    EXPECT_TRUE(check_gradient("dx", b, x, dx, loss, x.numel()));
    EXPECT_TRUE(check_gradient("dw", b, w, dw, loss, w.numel()));
    EXPECT_TRUE(check_gradient("db", b, bias, db, loss, bias.numel()));
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(LinearTest);
TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(LinearGradientTest);

}  // namespace
}  // namespace trepro::testing
