#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

struct Dims {
  std::int64_t n, d;  // residual, x [n, d]
};
const Dims kDims[] = {{1, 1}, {3, 17}, {17, 3}, {64, 64}};
const NormKind kKinds[] = {NormKind::layer, NormKind::rms};
const PhiloxKey kKey{99, 3, 5};
constexpr double kEps = 1e-5;

std::string describe(NormKind kind, const Dims& d, double p) {
  return std::string(kind == NormKind::layer ? "layer" : "rms") + " n=" + std::to_string(d.n) +
         " d=" + std::to_string(d.d) + " p=" + std::to_string(p);
}

class AddDropoutTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }
  Tensor copy(const Tensor& t) { return backend().upload(backend().download(t)); }

  // The inputs of one residual junction, made on the backend.
  struct Inputs {
    Tensor residual, x, gamma, beta;
  };
  Inputs inputs(const Dims& d, std::uint64_t seed) {
    Backend& b = backend();
    return {random_tensor(b, {d.n, d.d}, seed), random_tensor(b, {d.n, d.d}, seed + 1),
            random_tensor(b, {d.d}, seed + 2, 0.5, 1.5), random_tensor(b, {d.d}, seed + 3)};
  }
  // The outputs of add_dropout_norm_forward, allocated on a backend.
  struct Outputs {
    Tensor sum, y, mean, rstd;
  };
  Outputs forward(Backend& on, NormKind kind, const Tensor& residual, const Tensor& x,
                  const DropoutSpec& spec, const Tensor& gamma, const Tensor* beta) {
    const Shape& shape = x.shape();
    Outputs o{on.empty(shape, on.dtype()), on.empty(shape, on.dtype()), on.empty({shape[0]}, on.dtype()),
              on.empty({shape[0]}, on.dtype())};
    on.add_dropout_norm_forward(kind, residual, x, spec, gamma, beta, kEps, o.sum, o.y, o.mean, o.rstd);
    return o;
  }
};

class AddDropoutGradientTest : public AddDropoutTest {};

TEST_P(AddDropoutTest, AddDropoutForwardMatchesReference) {
  Backend& b = backend();
  for (double p : {0.0, 0.1}) {
    for (const Dims& d : kDims) {
      SCOPED_TRACE("n=" + std::to_string(d.n) + " d=" + std::to_string(d.d) + " p=" + std::to_string(p));
      Inputs in = inputs(d, 1);
      Tensor out = b.empty({d.n, d.d}, b.dtype()), out_ref = reference().empty({d.n, d.d}, DType::f64);
      b.add_dropout_forward(in.residual, in.x, {p, kKey}, out);
      reference().add_dropout_forward(on_reference(in.residual), on_reference(in.x), {p, kKey}, out_ref);
      EXPECT_TRUE(
          all_close("out", b, out, reference(), out_ref, tolerance(Check::op_vs_reference, b.dtype())));
    }
  }
}

TEST_P(AddDropoutTest, AddDropoutForwardIsResidualPlusDropout) {
  Backend& b = backend();
  const Dims d{17, 3};
  const DropoutSpec spec{0.5, kKey};
  Inputs in = inputs(d, 5);
  Tensor out = b.empty({d.n, d.d}, b.dtype()), composed = b.empty({d.n, d.d}, b.dtype());
  b.add_dropout_forward(in.residual, in.x, spec, out);
  b.dropout_forward(in.x, spec, composed);
  b.add_inplace(composed, in.residual);
  EXPECT_TRUE(all_close("out", b, out, b, composed, tolerance(Check::invariant, b.dtype())));
}

TEST_P(AddDropoutTest, AddDropoutNormForwardMatchesReference) {
  Backend& b = backend();
  for (NormKind kind : kKinds) {
    for (const Dims& d : kDims) {
      const DropoutSpec spec{0.1, kKey};
      SCOPED_TRACE(describe(kind, d, spec.p));
      const bool layer = kind == NormKind::layer;
      Inputs in = inputs(d, 10);
      Outputs out = forward(b, kind, in.residual, in.x, spec, in.gamma, layer ? &in.beta : nullptr);
      Tensor beta_ref = on_reference(in.beta);
      Outputs ref = forward(reference(), kind, on_reference(in.residual), on_reference(in.x), spec,
                            on_reference(in.gamma), layer ? &beta_ref : nullptr);
      const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), d.d);
      EXPECT_TRUE(
          all_close("sum", b, out.sum, reference(), ref.sum, tolerance(Check::op_vs_reference, b.dtype())));
      EXPECT_TRUE(all_close("y", b, out.y, reference(), ref.y, tol));
      EXPECT_TRUE(all_close("mean", b, out.mean, reference(), ref.mean, tol));
      EXPECT_TRUE(all_close("rstd", b, out.rstd, reference(), ref.rstd, tol));
    }
  }
}

TEST_P(AddDropoutTest, AddDropoutNormForwardIsAddDropoutThenNorm) {
  Backend& b = backend();
  const Dims d{5, 64};
  const DropoutSpec spec{0.5, kKey};
  Inputs in = inputs(d, 15);
  Outputs fused = forward(b, NormKind::layer, in.residual, in.x, spec, in.gamma, &in.beta);
  Tensor sum = b.empty({d.n, d.d}, b.dtype()), y = b.empty({d.n, d.d}, b.dtype());
  Tensor mean = b.empty({d.n}, b.dtype()), rstd = b.empty({d.n}, b.dtype());
  b.add_dropout_forward(in.residual, in.x, spec, sum);
  b.norm_forward(NormKind::layer, sum, in.gamma, &in.beta, kEps, y, mean, rstd);
  EXPECT_TRUE(all_close("sum", b, fused.sum, b, sum, tolerance(Check::invariant, b.dtype())));
  EXPECT_TRUE(all_close("y", b, fused.y, b, y, tolerance(Check::invariant, b.dtype(), d.d)));
}

TEST_P(AddDropoutTest, AddDropoutNormBackwardMatchesReference) {
  Backend& b = backend();
  Backend& r = reference();
  for (NormKind kind : kKinds) {
    for (const Dims& d : kDims) {
      const DropoutSpec spec{0.1, kKey};
      SCOPED_TRACE(describe(kind, d, spec.p));
      const bool layer = kind == NormKind::layer;
      Inputs in = inputs(d, 20);
      Tensor dy = random_tensor(b, {d.n, d.d}, 24);
      // sum, mean and rstd are inputs of backward: the reference gets the backend's.
      Outputs saved = forward(b, kind, in.residual, in.x, spec, in.gamma, layer ? &in.beta : nullptr);
      Tensor dres = b.empty({d.n, d.d}, b.dtype()), dx = b.empty({d.n, d.d}, b.dtype());
      Tensor dgamma = b.zeros({d.d}, b.dtype()), dbeta = b.zeros({d.d}, b.dtype());
      b.add_dropout_norm_backward(kind, saved.sum, in.gamma, saved.mean, saved.rstd, spec, dy, dres, dx,
                                  dgamma, layer ? &dbeta : nullptr);

      Tensor dres_ref = r.empty({d.n, d.d}, DType::f64), dx_ref = r.empty({d.n, d.d}, DType::f64);
      Tensor dgamma_ref = r.zeros({d.d}, DType::f64), dbeta_ref = r.zeros({d.d}, DType::f64);
      r.add_dropout_norm_backward(kind, on_reference(saved.sum), on_reference(in.gamma),
                                  on_reference(saved.mean), on_reference(saved.rstd), spec, on_reference(dy),
                                  dres_ref, dx_ref, dgamma_ref, layer ? &dbeta_ref : nullptr);
      const Tolerance per_row = tolerance(Check::op_vs_reference, b.dtype(), d.d);
      const Tolerance per_column = tolerance(Check::op_vs_reference, b.dtype(), d.n);
      EXPECT_TRUE(all_close("dresidual", b, dres, r, dres_ref, per_row));
      EXPECT_TRUE(all_close("dx", b, dx, r, dx_ref, per_row));
      EXPECT_TRUE(all_close("dgamma", b, dgamma, r, dgamma_ref, per_column));
      if (layer) {
        EXPECT_TRUE(all_close("dbeta", b, dbeta, r, dbeta_ref, per_column));
      }
    }
  }
}

TEST_P(AddDropoutTest, AddDropoutNormBackwardAccumulatesParameterGradients) {
  Backend& b = backend();
  const Dims d{17, 3};
  const DropoutSpec spec{0.5, kKey};
  Inputs in = inputs(d, 25);
  Tensor dy = random_tensor(b, {d.n, d.d}, 29);
  Outputs saved = forward(b, NormKind::layer, in.residual, in.x, spec, in.gamma, &in.beta);
  Tensor dres = b.empty({d.n, d.d}, b.dtype()), dx = b.empty({d.n, d.d}, b.dtype());
  Tensor dgamma = b.zeros({d.d}, b.dtype()), dbeta = b.zeros({d.d}, b.dtype());
  auto backward = [&] {
    b.add_dropout_norm_backward(NormKind::layer, saved.sum, in.gamma, saved.mean, saved.rstd, spec, dy, dres,
                                dx, dgamma, &dbeta);
  };
  backward();
  Tensor dgamma_twice = copy(dgamma), dbeta_twice = copy(dbeta);
  b.scale_inplace(dgamma_twice, 2.0);
  b.scale_inplace(dbeta_twice, 2.0);
  backward();
  EXPECT_TRUE(all_close("dgamma", b, dgamma, b, dgamma_twice, tolerance(Check::invariant, b.dtype(), d.n)));
  EXPECT_TRUE(all_close("dbeta", b, dbeta, b, dbeta_twice, tolerance(Check::invariant, b.dtype(), d.n)));
}

TEST_P(AddDropoutTest, AddDropoutForwardRejectsAnXOfAnotherShape) {
  Backend& b = backend();
  Tensor residual = random_tensor(b, {3, 4}, 1), x = random_tensor(b, {3, 5}, 2),
         out = b.empty({3, 4}, b.dtype());
  try {
    b.add_dropout_forward(residual, x, {0.1, kKey}, out);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("add_dropout_forward: x has shape [3, 5], expected [3, 4]"));
  }
}

TEST_P(AddDropoutTest, AddDropoutNormForwardRejectsAGammaOfTheWrongWidth) {
  Backend& b = backend();
  Inputs in = inputs({3, 4}, 1);
  Tensor gamma = random_tensor(b, {5}, 9);
  try {
    forward(b, NormKind::layer, in.residual, in.x, {0.1, kKey}, gamma, &in.beta);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("add_dropout_norm_forward: gamma has shape [5], expected [4]"));
  }
}

TEST_P(AddDropoutTest, AddDropoutNormBackwardRejectsADxOfAnotherShapeBeforeWritingAnything) {
  Backend& b = backend();
  const Dims d{3, 4};
  Inputs in = inputs(d, 1);
  Outputs saved = forward(b, NormKind::layer, in.residual, in.x, {0.1, kKey}, in.gamma, &in.beta);
  Tensor dy = random_tensor(b, {d.n, d.d}, 9), dres = b.empty({d.n, d.d}, b.dtype()),
         dx = b.empty({d.d, d.n}, b.dtype());
  Tensor dgamma = b.zeros({d.d}, b.dtype()), dbeta = b.zeros({d.d}, b.dtype());
  try {
    b.add_dropout_norm_backward(NormKind::layer, saved.sum, in.gamma, saved.mean, saved.rstd, {0.1, kKey}, dy,
                                dres, dx, dgamma, &dbeta);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("add_dropout_norm_backward: dx has shape [4, 3], expected [3, 4]"));
  }
  EXPECT_EQ(b.sum_squares(dgamma), 0.0) << "a rejected call accumulated into dgamma";
}

// L = <r, residual + dropout(x)>: dresidual = r, dx = dropout_backward(r).
TEST_P(AddDropoutGradientTest, AddDropoutMatchesFiniteDifferences) {
  Backend& b = backend();
  const Dims d{3, 7};
  const DropoutSpec spec{0.3, kKey};
  Inputs in = inputs(d, 30);
  Tensor r = random_tensor(b, {d.n, d.d}, 34), out = b.empty({d.n, d.d}, b.dtype());
  Tensor dx = b.empty({d.n, d.d}, b.dtype());
  b.dropout_backward(r, spec, dx);
  auto loss = [&] {
    b.add_dropout_forward(in.residual, in.x, spec, out);
    return dot(b, r, out);
  };
  EXPECT_TRUE(check_gradient("dresidual", b, in.residual, r, loss, in.residual.numel()));
  EXPECT_TRUE(check_gradient("dx", b, in.x, dx, loss, in.x.numel()));
}

// L = <r, norm(residual + dropout(x))>, differentiated with respect to every input and parameter.
TEST_P(AddDropoutGradientTest, AddDropoutNormMatchesFiniteDifferences) {
  Backend& b = backend();
  const Dims d{3, 7};
  const DropoutSpec spec{0.3, kKey};
  for (NormKind kind : kKinds) {
    SCOPED_TRACE(describe(kind, d, spec.p));
    const bool layer = kind == NormKind::layer;
    Inputs in = inputs(d, 35);
    const Tensor* beta = layer ? &in.beta : nullptr;
    Tensor r = random_tensor(b, {d.n, d.d}, 39);
    auto loss = [&] { return dot(b, r, forward(b, kind, in.residual, in.x, spec, in.gamma, beta).y); };
    Outputs saved = forward(b, kind, in.residual, in.x, spec, in.gamma, beta);
    Tensor dres = b.empty({d.n, d.d}, b.dtype()), dx = b.empty({d.n, d.d}, b.dtype());
    Tensor dgamma = b.zeros({d.d}, b.dtype()), dbeta = b.zeros({d.d}, b.dtype());
    b.add_dropout_norm_backward(kind, saved.sum, in.gamma, saved.mean, saved.rstd, spec, r, dres, dx, dgamma,
                                layer ? &dbeta : nullptr);
    EXPECT_TRUE(check_gradient("dresidual", b, in.residual, dres, loss, dres.numel()));
    EXPECT_TRUE(check_gradient("dx", b, in.x, dx, loss, dx.numel()));
    EXPECT_TRUE(check_gradient("dgamma", b, in.gamma, dgamma, loss, dgamma.numel()));
    if (layer) {
      EXPECT_TRUE(check_gradient("dbeta", b, in.beta, dbeta, loss, dbeta.numel()));
    }
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(AddDropoutTest);
TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(AddDropoutGradientTest);

}  // namespace
}  // namespace trepro::testing
