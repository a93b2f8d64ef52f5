// norm_math.h, driven as norm_forward_rows / norm_backward_rows do (two passes over a row for
// the statistics, then the per-element formulas), against the reference's norm_forward /
// norm_backward, layer and RMS, with widths that leave a partial last warp stride.
#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/norm_math.h"

namespace trepro::testing {
namespace {

TEST(NormMath, RowsMatchReference) {
  for (NormKind kind : {NormKind::layer, NormKind::rms}) {
    for (std::int64_t d : {1, 17, 64, 100}) {
      SCOPED_TRACE(std::string(kind == NormKind::layer ? "layer" : "rms") + " d=" + std::to_string(d));
      HostMath h;
      Backend& ref = *h.reference;
      const std::int64_t n = 6;
      const double eps = 1e-5;
      const bool layer = kind == NormKind::layer;
      // An offset mean: the two-pass variance must not cancel.
      Tensor x = h.random({n, d}, 1, 2.0, 4.0), gamma = h.random({d}, 2, 0.5, 1.5), beta = h.random({d}, 3);
      Tensor dy = h.random({n, d}, 4);
      Tensor y = ref.empty({n, d}, DType::f64), mean = ref.empty({n}, DType::f64), rstd = ref.empty({n}, DType::f64);
      ref.norm_forward(kind, x, gamma, layer ? &beta : nullptr, eps, y, mean, rstd);
      Tensor dx = ref.empty({n, d}, DType::f64), dgamma = ref.zeros({d}, DType::f64), dbeta = ref.zeros({d}, DType::f64);
      ref.norm_backward(kind, x, gamma, mean, rstd, dy, dx, dgamma, layer ? &dbeta : nullptr);

      const std::vector<float> xs = floats(x), gs = floats(gamma), bs = floats(beta), dys = floats(dy);
      std::vector<float> ys(xs.size()), means(n), rstds(n), dxs(xs.size());
      for (std::int64_t r = 0; r < n; ++r) {
        const float* row = xs.data() + r * d;
        float sum = 0;
        for (std::int64_t c = 0; c < d; ++c) sum += row[c];
        const float m = cuda::norm_mean(kind, sum, d);
        float centered = 0;
        for (std::int64_t c = 0; c < d; ++c) centered += (row[c] - m) * (row[c] - m);
        const float s = cuda::norm_rstd(centered, d, static_cast<float>(eps));
        means[r] = m;
        rstds[r] = s;
        for (std::int64_t c = 0; c < d; ++c) ys[r * d + c] = cuda::norm_output(row[c], m, s, gs[c], layer ? bs[c] : 0.0f);
        float sum_g = 0, sum_g_xhat = 0;
        for (std::int64_t c = 0; c < d; ++c) {
          const float g = cuda::norm_scaled_gradient(dys[r * d + c], gs[c]);
          sum_g += g;
          sum_g_xhat += g * (row[c] - m) * s;
        }
        const float avg_g = layer ? sum_g / d : 0.0f, avg_g_xhat = sum_g_xhat / d;
        for (std::int64_t c = 0; c < d; ++c) {
          const float g = cuda::norm_scaled_gradient(dys[r * d + c], gs[c]);
          dxs[r * d + c] = cuda::norm_input_gradient(g, (row[c] - m) * s, avg_g, avg_g_xhat, s);
        }
      }
      const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, d);
      EXPECT_TRUE(all_close("y", *h.holder, h.result({n, d}, ys), ref, y, tol));
      EXPECT_TRUE(all_close("mean", *h.holder, h.result({n}, means), ref, mean, tol));
      EXPECT_TRUE(all_close("rstd", *h.holder, h.result({n}, rstds), ref, rstd, tol));
      EXPECT_TRUE(all_close("dx", *h.holder, h.result({n, d}, dxs), ref, dx, tol));
    }
  }
}

}  // namespace
}  // namespace trepro::testing
