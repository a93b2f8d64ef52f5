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
    // As rope.cu: one thread per pair, placed by rope_pair.
    for (std::int64_t index = 0; index < batch * time * heads * width / 2; ++index) {
      const cuda::RopePair p = cuda::rope_pair(index, time, heads, width);
      const auto f = cuda::rope_rotate(xs[p.first], xs[p.second], cuda::rope_angle(offset + p.t, p.i, width, 1.0));
      const auto b = cuda::rope_rotate(xs[p.first], xs[p.second], cuda::rope_angle(offset + p.t, p.i, width, -1.0));
      forward[p.first] = f.first;
      forward[p.second] = f.second;
      backward[p.first] = b.first;
      backward[p.second] = b.second;
    }
    // Two products and a sum per output, plus the rounded cos and sin.
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, 2);
    EXPECT_TRUE(all_close("forward", *h.holder, h.result(x.shape(), forward), ref, y, tol));
    EXPECT_TRUE(all_close("backward", *h.holder, h.result(x.shape(), backward), ref, back, tol));
  }
}

TEST(EmbeddingMath, RopePairsCoverEveryElementOnceWithinItsHead) {
  for (std::int64_t width : {2, 6, 64}) {
    const std::int64_t batch = 2, time = 3, heads = 5, n = batch * time * heads * width;
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    for (std::int64_t index = 0; index < n / 2; ++index) {
      const cuda::RopePair p = cuda::rope_pair(index, time, heads, width);
      ASSERT_EQ(p.second - p.first, width / 2);
      ASSERT_EQ(p.first / width, p.second / width) << "a pair must stay in its head";
      ASSERT_EQ(p.first % width, p.i);
      ASSERT_EQ(p.first / (heads * width) % time, p.t);
      ++seen[p.first];
      ++seen[p.second];
    }
    for (std::int64_t e = 0; e < n; ++e) ASSERT_EQ(seen[e], 1) << "width " << width << " element " << e;
  }
}

}  // namespace
}  // namespace trepro::testing
