// activation_math.h (the activation, SwiGLU and linear-epilogue kernels' arithmetic) against the
// reference's activation and swiglu ops.
#include <string>

#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/activation_math.h"

namespace trepro::testing {
namespace {

using cuda::activation_derivative;
using cuda::activation_value;

constexpr std::int64_t kCount = 2048;

std::string name_of(Activation act) {
  return act == Activation::relu ? "relu" : act == Activation::gelu ? "gelu" : "gelu_tanh";
}

TEST(ActivationMath, ValueAndDerivativeMatchReference) {
  HostMath h;
  Backend& ref = *h.reference;
  // [-4, 4] spans the saturated tails and the curved middle; 0 itself is in the relu test below.
  Tensor x = h.random({kCount}, 1, -4.0, 4.0), dy = h.random({kCount}, 2);
  const std::vector<float> xs = floats(x), dys = floats(dy);
  for (Activation act : {Activation::relu, Activation::gelu, Activation::gelu_tanh}) {
    SCOPED_TRACE(name_of(act));
    Tensor y = ref.empty({kCount}, DType::f64), dx = ref.empty({kCount}, DType::f64);
    ref.activation_forward(act, x, y);
    ref.activation_backward(act, x, dy, dx);
    std::vector<float> values(kCount), gradients(kCount);
    for (std::int64_t i = 0; i < kCount; ++i) {
      values[i] = activation_value(act, xs[i]);
      gradients[i] = activation_derivative(act, xs[i]) * dys[i];
    }
    // The value is one transcendental and a few products: accumulation length 1. The derivative
    // is a sum of two O(1) terms (Phi + x phi, and its tanh analogue) that cancel where the
    // derivative crosses 0 (x ~ -0.75): accumulation length 2.
    EXPECT_TRUE(all_close("forward", *h.holder, h.result({kCount}, values), ref, y,
                          tolerance(Check::op_vs_reference, DType::f32, 1)));
    EXPECT_TRUE(all_close("backward", *h.holder, h.result({kCount}, gradients), ref, dx,
                          tolerance(Check::op_vs_reference, DType::f32, 2)));
  }
}

TEST(ActivationMath, ReluAtZeroAndNoneAreExact) {
  EXPECT_EQ(activation_value(Activation::relu, 0.0f), 0.0f);
  EXPECT_EQ(activation_derivative(Activation::relu, 0.0f), 0.0f);  // relu'(0) = 0, as PyTorch
  EXPECT_EQ(activation_value(Activation::relu, -2.5f), 0.0f);
  EXPECT_EQ(activation_value(Activation::none, -2.5f), -2.5f);
  EXPECT_EQ(activation_derivative(Activation::none, -2.5f), 1.0f);
}

TEST(ActivationMath, SiluMatchesReferenceSwiglu) {
  HostMath h;
  Backend& ref = *h.reference;
  const Shape shape{32, 64};
  Tensor gate = h.random(shape, 3, -4.0, 4.0), up = h.random(shape, 4), dy = h.random(shape, 5);
  Tensor y = ref.empty(shape, DType::f64), dgate = ref.empty(shape, DType::f64), dup = ref.empty(shape, DType::f64);
  ref.swiglu_forward(gate, up, y);
  ref.swiglu_backward(gate, up, dy, dgate, dup);
  const std::vector<float> g = floats(gate), u = floats(up), d = floats(dy);
  std::vector<float> ys(g.size()), dgates(g.size()), dups(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    const cuda::SiluValue<float> s = cuda::silu(g[i]);
    ys[i] = s.silu * u[i];
    dgates[i] = d[i] * u[i] * s.derivative;
    dups[i] = d[i] * s.silu;
  }
  const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, 1);
  EXPECT_TRUE(all_close("y", *h.holder, h.result(shape, ys), ref, y, tol));
  EXPECT_TRUE(all_close("dgate", *h.holder, h.result(shape, dgates), ref, dgate, tol));
  EXPECT_TRUE(all_close("dup", *h.holder, h.result(shape, dups), ref, dup, tol));
}

}  // namespace
}  // namespace trepro::testing
