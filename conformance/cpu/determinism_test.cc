// The optimized CPU backend gives the same bits whatever its thread count (one pool, static
// partitions, reductions in a fixed order), on every compiled target; and its dropout masks are
// the reference's (the same Philox draw per element), so dropout itself matches reference-f32
// bit for bit.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/support/tensor_testing.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"
#include "reference/reference_backend.h"

namespace trepro::cpu {
namespace {

using Outputs = std::vector<std::vector<float>>;

std::vector<float> values(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

// Runs `ops` on a fresh backend of the target with `threads` and returns what it produced.
using Ops = std::function<Outputs(Backend&)>;

// Every multi-threaded op at sizes large enough to be split.
const Ops kOps[] = {
    [](Backend& b) {  // linear with an activation, forward and backward
      Tensor x = testing::random_tensor(b, {300, 96}, 1), w = testing::random_tensor(b, {130, 96}, 2);
      Tensor bias = testing::random_tensor(b, {130}, 3), dy = testing::random_tensor(b, {300, 130}, 4);
      Tensor y = b.empty({300, 130}, b.dtype()), pre = b.empty({300, 130}, b.dtype());
      Tensor dx = b.empty({300, 96}, b.dtype()), dw = b.zeros({130, 96}, b.dtype()), db = b.zeros({130}, b.dtype());
      b.linear_forward(x, w, &bias, Activation::gelu, y, &pre);
      b.linear_backward(x, w, &pre, Activation::gelu, dy, &dx, dw, &db);
      return Outputs{values(y), values(dx), values(dw), values(db)};
    },
    [](Backend& b) {  // attention with padding, causal mask and dropout, forward and backward
      Tensor q = testing::random_tensor(b, {2, 150, 64}, 1), k = testing::random_tensor(b, {2, 150, 64}, 2);
      Tensor v = testing::random_tensor(b, {2, 150, 64}, 3), dout = testing::random_tensor(b, {2, 150, 64}, 4);
      Tensor padding = Tensor::zeros({2, 150}, DType::i32);
      for (std::int64_t j = 140; j < 150; ++j) padding.set(150 + j, 1);
      padding = b.upload(padding);
      const DropoutSpec dropout{0.2, {5, 6, 7}};
      Tensor out = b.empty({2, 150, 64}, b.dtype()), lse = b.empty({2, 4, 150}, b.dtype());
      Tensor dq = b.empty(q.shape(), b.dtype()), dk = b.empty(k.shape(), b.dtype()), dv = b.empty(v.shape(), b.dtype());
      b.attention_forward(q, k, v, 4, &padding, true, 0.25, dropout, out, lse);
      b.attention_backward(q, k, v, 4, &padding, true, 0.25, dropout, out, lse, dout, dq, dk, dv);
      return Outputs{values(out), values(lse), values(dq), values(dk), values(dv)};
    },
    [](Backend& b) {  // decoding's one query per row over two key tiles; fewer rows than threads split the heads
      Outputs outputs;
      for (std::int64_t rows : {1, 3}) {
        Tensor q = testing::random_tensor(b, {rows, 1, 64}, 1), k = testing::random_tensor(b, {rows, 90, 64}, 2);
        Tensor v = testing::random_tensor(b, {rows, 90, 64}, 3);
        Tensor padding = Tensor::zeros({rows, 90}, DType::i32);
        for (std::int64_t j = 85; j < 90; ++j) padding.set(j, 1);
        padding = b.upload(padding);
        Tensor out = b.empty({rows, 1, 64}, b.dtype()), lse = b.empty({rows, 8, 1}, b.dtype());
        b.attention_forward(q, k, v, 8, &padding, true, 0.25, DropoutSpec{0.2, {5, 6, 7}}, out, lse);
        outputs.push_back(values(out));
        outputs.push_back(values(lse));
      }
      return outputs;
    },
    [](Backend& b) {  // fused residual + dropout + layer norm, forward and backward
      Tensor r = testing::random_tensor(b, {700, 72}, 1), x = testing::random_tensor(b, {700, 72}, 2);
      Tensor gamma = testing::random_tensor(b, {72}, 3), beta = testing::random_tensor(b, {72}, 4);
      Tensor dy = testing::random_tensor(b, {700, 72}, 5);
      const DropoutSpec dropout{0.1, {1, 2, 3}};
      Tensor sum = b.empty({700, 72}, b.dtype()), y = b.empty({700, 72}, b.dtype());
      Tensor mean = b.empty({700}, b.dtype()), rstd = b.empty({700}, b.dtype());
      Tensor dres = b.empty({700, 72}, b.dtype()), dx = b.empty({700, 72}, b.dtype());
      Tensor dgamma = b.zeros({72}, b.dtype()), dbeta = b.zeros({72}, b.dtype());
      b.add_dropout_norm_forward(NormKind::layer, r, x, dropout, gamma, &beta, 1e-5, sum, y, mean, rstd);
      b.add_dropout_norm_backward(NormKind::layer, sum, gamma, mean, rstd, dropout, dy, dres, dx, dgamma, &dbeta);
      return Outputs{values(y), values(dx), values(dgamma), values(dbeta)};
    },
    [](Backend& b) {  // cross-entropy over a wide vocabulary, embedding backward, sum of squares
      Tensor logits = testing::random_tensor(b, {40, 3000}, 1, -4.0, 4.0), lse = b.empty({40}, b.dtype());
      Tensor labels = Tensor::empty({40}, DType::i32);
      for (std::int64_t n = 0; n < 40; ++n) labels.set(n, static_cast<double>((n * 37) % 3000));
      labels = b.upload(labels);
      const double loss = b.cross_entropy_forward(logits, labels, 0, 0.1, SmoothingForm::uniform, lse, nullptr);
      Tensor dlogits = b.empty({40, 3000}, b.dtype());
      b.cross_entropy_backward(logits, labels, lse, 0, 0.1, SmoothingForm::uniform, 1.0, dlogits);
      Tensor ids = Tensor::empty({8, 50}, DType::i32);
      for (std::int64_t n = 0; n < 400; ++n) ids.set(n, static_cast<double>((n * 7) % 11));
      ids = b.upload(ids);
      Tensor dout = testing::random_tensor(b, {8, 50, 200}, 2), dtable = b.zeros({11, 200}, b.dtype());
      b.embedding_backward(ids, dout, 3.0, Positional::sinusoidal, 0, dtable, nullptr);
      return Outputs{{static_cast<float>(loss), static_cast<float>(b.sum_squares(dlogits))}, values(dlogits),
                     values(dtable)};
    },
};

class CpuDeterminismTest : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(CpuDeterminismTest, SameBitsForAnyThreadCount) {
  for (std::size_t op = 0; op < std::size(kOps); ++op) {
    SCOPED_TRACE("op " + std::to_string(op));
    const Outputs one = kOps[op](*make_cpu_backend(GetParam(), 1));
    for (int threads : {2, 3}) {
      const Outputs many = kOps[op](*make_cpu_backend(GetParam(), threads));
      ASSERT_EQ(many.size(), one.size());
      for (std::size_t i = 0; i < one.size(); ++i) EXPECT_EQ(many[i], one[i]) << "output " << i << ", " << threads << " threads";
    }
  }
}

TEST_P(CpuDeterminismTest, DropoutIsTheReferencesBitForBit) {
  auto cpu = make_cpu_backend(GetParam(), 2);
  reference::ReferenceBackend<float> ref;
  const DropoutSpec dropout{0.3, {11, 12, 13}};
  Tensor x_host = ref.download(testing::random_tensor(ref, {1000, 77}, 1));
  Tensor r_host = ref.download(testing::random_tensor(ref, {1000, 77}, 2));
  Tensor x = cpu->upload(x_host), r = cpu->upload(r_host), xr = ref.upload(x_host), rr = ref.upload(r_host);
  Tensor y = cpu->empty(x.shape(), DType::f32), yr = ref.empty(x.shape(), DType::f32);
  cpu->dropout_forward(x, dropout, y);
  ref.dropout_forward(xr, dropout, yr);
  EXPECT_EQ(values(y), values(yr));
  cpu->add_dropout_forward(r, x, dropout, y);
  ref.add_dropout_forward(rr, xr, dropout, yr);
  EXPECT_EQ(values(y), values(yr));
}

std::string target_test_name(const ::testing::TestParamInfo<std::int64_t>& info) { return target_name(info.param); }

INSTANTIATE_TEST_SUITE_P(AllTargets, CpuDeterminismTest, ::testing::ValuesIn(compiled_targets()), target_test_name);

}  // namespace
}  // namespace trepro::cpu
