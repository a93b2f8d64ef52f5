// gemm_layout.h: the three column-major cuBLAS calls of the linear layer, executed here by a
// plain column-major GEMM with exactly cuBLAS's argument semantics, give the reference's
// linear_forward / linear_backward (dw accumulated with beta = 1), for odd and empty sizes.
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/gemm_layout.h"

namespace trepro::testing {
namespace {

// C = op(A) op(B) + beta C, column-major, as cublasSgemm with alpha = 1 (float accumulation).
void column_major_gemm(const cuda::GemmCall& g, const float* a, const float* b, float beta, float* c) {
  for (int col = 0; col < g.n; ++col) {
    for (int row = 0; row < g.m; ++row) {
      float sum = 0;
      for (int p = 0; p < g.k; ++p) {
        const float av = g.transpose_a ? a[p + row * g.lda] : a[row + p * g.lda];
        const float bv = g.transpose_b ? b[col + p * g.ldb] : b[p + col * g.ldb];
        sum += av * bv;
      }
      float& out = c[row + col * g.ldc];
      out = sum + (beta == 0.0f ? 0.0f : beta * out);
    }
  }
}

struct Dims {
  std::int64_t n, k, m;
};

TEST(GemmLayout, LinearCallsMatchReference) {
  for (const Dims& d : {Dims{1, 1, 1}, Dims{3, 5, 7}, Dims{17, 4, 9}, Dims{8, 33, 2}}) {
    SCOPED_TRACE("n=" + std::to_string(d.n) + " k=" + std::to_string(d.k) + " m=" + std::to_string(d.m));
    HostMath h;
    Backend& ref = *h.reference;
    Tensor x = h.random({d.n, d.k}, 1), w = h.random({d.m, d.k}, 2), dy = h.random({d.n, d.m}, 3);
    Tensor dw0 = h.random({d.m, d.k}, 4);  // dw is accumulated into
    Tensor y = ref.empty({d.n, d.m}, DType::f64), dx = ref.empty({d.n, d.k}, DType::f64);
    Tensor dw = ref.upload(ref.download(dw0));
    ref.linear_forward(x, w, nullptr, Activation::none, y, nullptr);
    ref.linear_backward(x, w, nullptr, Activation::none, dy, &dx, dw, nullptr);

    const std::vector<float> xs = floats(x), ws = floats(w), dys = floats(dy);
    std::vector<float> ys(static_cast<std::size_t>(d.n * d.m)), dxs(static_cast<std::size_t>(d.n * d.k));
    std::vector<float> dws = floats(dw0);
    column_major_gemm(cuda::linear_forward_gemm("linear_forward", d.n, d.k, d.m), ws.data(), xs.data(), 0.0f, ys.data());
    column_major_gemm(cuda::linear_input_gradient_gemm("linear_backward", d.n, d.k, d.m), ws.data(), dys.data(), 0.0f,
                      dxs.data());
    column_major_gemm(cuda::linear_weight_gradient_gemm("linear_backward", d.n, d.k, d.m), xs.data(), dys.data(), 1.0f,
                      dws.data());
    EXPECT_TRUE(all_close("y", *h.holder, h.result(y.shape(), ys), ref, y, tolerance(Check::op_vs_reference, DType::f32, d.k)));
    EXPECT_TRUE(all_close("dx", *h.holder, h.result(dx.shape(), dxs), ref, dx, tolerance(Check::op_vs_reference, DType::f32, d.m)));
    EXPECT_TRUE(all_close("dw", *h.holder, h.result(dw.shape(), dws), ref, dw,
                          tolerance(Check::op_vs_reference, DType::f32, d.n + 1)));
  }
}

TEST(GemmLayout, EmptyMatricesKeepValidLeadingDimensions) {
  const cuda::GemmCall g = cuda::linear_forward_gemm("linear_forward", 0, 0, 0);
  EXPECT_EQ(g.m, 0);
  EXPECT_GE(g.lda, 1);  // cuBLAS rejects ld = 0 even for empty matrices
  EXPECT_GE(g.ldb, 1);
  EXPECT_GE(g.ldc, 1);
}

TEST(GemmLayout, DimensionsBeyondIntAreRefusedNamingTheOp) {
  EXPECT_THAT([] { cuda::linear_forward_gemm("linear_forward", std::int64_t{1} << 31, 4, 4); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("linear_forward: N = 2147483648")));
}

}  // namespace
}  // namespace trepro::testing
