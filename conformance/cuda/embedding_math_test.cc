// embedding_math.h: sinusoidal positions (embedding.cu) and the RoPE rotation (rope.cu) against
// the reference's embedding_forward (with a zero table, so that out = pos) and rope_forward /
// rope_backward, at offsets as in incremental decoding.
#include <gtest/gtest.h>

#include "conformance/cuda/math_testing.h"
#include "conformance/support/tensor_testing.h"
#include "optimized/cuda/embedding_math.h"

namespace trepro::testing {
namespace {

TEST(EmbeddingMath, SinusoidalPositionsMatchReference) {
  HostMath h;
  Backend& ref = *h.reference;
  const std::int64_t batch = 2, time = 7, d = 10, vocab = 3;
  for (std::int64_t offset : {0, 5, 400}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    Tensor ids = int_tensor(ref, {batch, time}, std::vector<double>(batch * time, 1.0));
    Tensor table = ref.zeros({vocab, d}, DType::f64), out = ref.empty({batch, time, d}, DType::f64);
    ref.embedding_forward(ids, table, 1.0, Positional::sinusoidal, nullptr, offset, out);
    std::vector<float> mine;
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t t = 0; t < time; ++t) {
        for (std::int64_t c = 0; c < d; ++c) mine.push_back(static_cast<float>(cuda::sinusoidal_position(offset + t, c, d)));
      }
    }
    // Computed in double and rounded once: one rounding.
    EXPECT_TRUE(all_close("pos", *h.holder, h.result(out.shape(), mine), ref, out,
                          tolerance(Check::op_vs_reference, DType::f32, 1)));
  }
}

TEST(EmbeddingMath, RopeRotationMatchesReference) {
  HostMath h;
  Backend& ref = *h.reference;
  const std::int64_t batch = 2, time = 5, heads = 3, width = 6;  // head width 6: pairs (i, i + 3)
  for (std::int64_t offset : {0, 9}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    Tensor x = h.random({batch, time, heads * width}, 1);
    Tensor y = ref.empty(x.shape(), DType::f64), back = ref.empty(x.shape(), DType::f64);
    ref.rope_forward(x, static_cast<int>(heads), offset, y);
    ref.rope_backward(x, static_cast<int>(heads), offset, back);
    const std::vector<float> xs = floats(x);
    std::vector<float> forward(xs.size()), backward(xs.size());
    const std::int64_t half = width / 2;
    for (std::int64_t row = 0; row < batch * time; ++row) {
      for (std::int64_t hh = 0; hh < heads; ++hh) {
        for (std::int64_t i = 0; i < half; ++i) {
          const std::int64_t first = (row * heads + hh) * width + i, second = first + half;
          const std::int64_t position = offset + row % time;
          const auto f = cuda::rope_rotate(xs[first], xs[second], cuda::rope_angle(position, i, width, 1.0));
          const auto b = cuda::rope_rotate(xs[first], xs[second], cuda::rope_angle(position, i, width, -1.0));
          forward[first] = f.first;
          forward[second] = f.second;
          backward[first] = b.first;
          backward[second] = b.second;
        }
      }
    }
    // Two products and a sum per output, plus the rounded cos and sin.
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, 2);
    EXPECT_TRUE(all_close("forward", *h.holder, h.result(x.shape(), forward), ref, y, tol));
    EXPECT_TRUE(all_close("backward", *h.holder, h.result(x.shape(), backward), ref, back, tol));
  }
}

}  // namespace
}  // namespace trepro::testing
