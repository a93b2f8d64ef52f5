// The optimized CPU backend's thread chunks and column blocks against the float64 reference: with
// 3 threads, every op that splits its work (parallel_for chunks, blocks of 64 columns, dropout
// chunks of 4096 elements, sum_squares' reduction chunks) runs at a size where each piece has a
// successor and the last one is partial. The op suites in ops/ use sizes that stay on one
// thread, and determinism_test compares thread counts only with each other, so a chunk off by
// one or a block that forgets its offset would fail nowhere else. Attention tiles and GEMM
// blocks are crossed by ops/attention_test.cc and gemm_test.cc.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/support/tensor_testing.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"
#include "reference/reference_backend.h"

namespace trepro::cpu {
namespace {

// Random float32 values on `b`: the reference gets exactly the cpu backend's inputs, so a
// comparison measures the op's rounding and not the inputs'.
Tensor float_inputs(Backend& b, const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  reference::ReferenceBackend<float> host;
  return b.upload(host.download(testing::random_tensor(host, shape, seed, lo, hi)));
}

struct Output {
  std::string name;
  Tensor value;
  std::int64_t accumulation;  // the longest sum it depends on (tolerances.h)
};
using Op = std::function<std::vector<Output>(Backend&)>;

Tensor scalar(Backend& b, double value) { return b.upload(Tensor::from_values({1}, DType::f64, {value})); }

Tensor labels_with_padding(Backend& b, std::int64_t rows, std::int64_t vocab) {
  std::vector<double> labels;
  for (std::int64_t n = 0; n < rows; ++n) labels.push_back(n % 7 == 3 ? 0 : static_cast<double>((n * 37) % vocab));
  return testing::int_tensor(b, {rows}, labels);
}

const Op kOps[] = {
    [](Backend& b) {  // linear: dpre chunks, then db in 3 blocks of 64 columns (one partial)
      Tensor x = float_inputs(b, {2100, 8}, 1), w = float_inputs(b, {130, 8}, 2), bias = float_inputs(b, {130}, 3);
      Tensor y = b.empty({2100, 130}, b.dtype()), pre = b.empty({2100, 130}, b.dtype());
      b.linear_forward(x, w, &bias, Activation::relu, y, &pre);
      Tensor dy = float_inputs(b, {2100, 130}, 4), dx = b.empty({2100, 8}, b.dtype());
      Tensor dw = b.zeros({130, 8}, b.dtype()), db = b.zeros({130}, b.dtype());
      b.linear_backward(x, w, &pre, Activation::relu, dy, &dx, dw, &db);
      return std::vector<Output>{{"y", y, 8}, {"dx", dx, 130}, {"dw", dw, 2100}, {"db", db, 2100}};
    },
    [](Backend& b) {  // residual + dropout + layer norm: row chunks, dgamma/dbeta column blocks
      Tensor r = float_inputs(b, {500, 130}, 5), x = float_inputs(b, {500, 130}, 6);
      Tensor gamma = float_inputs(b, {130}, 7), beta = float_inputs(b, {130}, 8), dy = float_inputs(b, {500, 130}, 9);
      const DropoutSpec dropout{0.2, {4, 5, 6}};
      Tensor sum = b.empty({500, 130}, b.dtype()), y = b.empty({500, 130}, b.dtype());
      Tensor mean = b.empty({500}, b.dtype()), rstd = b.empty({500}, b.dtype());
      b.add_dropout_norm_forward(NormKind::layer, r, x, dropout, gamma, &beta, 1e-5, sum, y, mean, rstd);
      Tensor dres = b.empty({500, 130}, b.dtype()), dx = b.empty({500, 130}, b.dtype());
      Tensor dgamma = b.zeros({130}, b.dtype()), dbeta = b.zeros({130}, b.dtype());
      b.add_dropout_norm_backward(NormKind::layer, sum, gamma, mean, rstd, dropout, dy, dres, dx, dgamma, &dbeta);
      Tensor ny = b.empty({500, 130}, b.dtype()), ndx = b.empty({500, 130}, b.dtype());
      Tensor ngamma = b.zeros({130}, b.dtype());
      b.norm_forward(NormKind::rms, x, gamma, nullptr, 1e-5, ny, mean, rstd);
      b.norm_backward(NormKind::rms, x, gamma, mean, rstd, dy, ndx, ngamma, nullptr);
      return std::vector<Output>{{"y", y, 130},          {"dx", dx, 130},    {"dgamma", dgamma, 500},
                                 {"dbeta", dbeta, 500},  {"rms y", ny, 130}, {"rms dx", ndx, 130},
                                 {"rms dgamma", ngamma, 500}};
    },
    [](Backend& b) {  // embedding backward: 4 blocks of 64 columns, repeated ids
      Tensor ids = testing::random_ids(b, {2, 40}, 10, 11), dout = float_inputs(b, {2, 40, 200}, 11);
      Tensor dtable = b.zeros({11, 200}, b.dtype());
      b.embedding_backward(ids, dout, 3.0, Positional::sinusoidal, 0, dtable, nullptr);
      return std::vector<Output>{{"dtable", dtable, 80}};
    },
    [](Backend& b) {  // dropout and add_dropout: 3 chunks of 4096 elements, the last partial
      Tensor x = float_inputs(b, {3, 3001}, 12), r = float_inputs(b, {3, 3001}, 13);
      Tensor y = b.empty({3, 3001}, b.dtype()), z = b.empty({3, 3001}, b.dtype());
      b.dropout_forward(x, {0.3, {7, 8, 9}}, y);
      b.add_dropout_forward(r, x, {0.3, {7, 8, 9}}, z);
      return std::vector<Output>{{"dropout", y, 1}, {"add_dropout", z, 2}};
    },
    [](Backend& b) {  // cross-entropy and log-softmax: row chunks over 800 rows
      Tensor logits = float_inputs(b, {800, 70}, 14, -4.0, 4.0), labels = labels_with_padding(b, 800, 70);
      Tensor lse = b.empty({800}, b.dtype()), dlogits = b.empty({800, 70}, b.dtype()), y = b.empty({800, 70}, b.dtype());
      const double loss = b.cross_entropy_forward(logits, labels, 0, 0.1, SmoothingForm::uniform, lse, nullptr);
      b.cross_entropy_backward(logits, labels, lse, 0, 0.1, SmoothingForm::uniform, 1.0, dlogits);
      b.log_softmax_forward(logits, y);
      // The loss sums the row losses in double (cross_entropy.cc): only a row's float sums count.
      return std::vector<Output>{{"loss", scalar(b, loss), 70}, {"lse", lse, 70}, {"dlogits", dlogits, 70},
                                 {"log_softmax", y, 70}};
    },
    [](Backend& b) {  // elementwise maps of 200003 elements: 3 chunks of at least 65536
      const Shape shape{7, 28573};
      Tensor x = float_inputs(b, shape, 15, -3.0, 3.0), u = float_inputs(b, shape, 16), dy = float_inputs(b, shape, 17);
      Tensor y = b.empty(shape, b.dtype()), dx = b.empty(shape, b.dtype());
      Tensor s = b.empty(shape, b.dtype()), dg = b.empty(shape, b.dtype()), du = b.empty(shape, b.dtype());
      b.activation_forward(Activation::gelu, x, y);
      b.activation_backward(Activation::gelu, x, dy, dx);
      b.swiglu_forward(x, u, s);
      b.swiglu_backward(x, u, dy, dg, du);
      return std::vector<Output>{{"gelu", y, 1},    {"gelu dx", dx, 1}, {"swiglu", s, 1},
                                 {"swiglu dgate", dg, 1}, {"swiglu dup", du, 1},
                                 // Summed in double: only its last rounding is float-sized.
                                 {"sum_squares", scalar(b, b.sum_squares(x)), 1}};
    },
    [](Backend& b) {  // Adam over 100003 parameters: 3 chunks of at least 32768
      Tensor p = float_inputs(b, {100003}, 18), g = float_inputs(b, {100003}, 19);
      Tensor m = float_inputs(b, {100003}, 20), v = float_inputs(b, {100003}, 21, 0.0, 1.0);
      b.adam_update(p, g, m, v, 1e-3, 0.9, 0.98, 1e-9, 3);
      return std::vector<Output>{{"param", p, 4}, {"m", m, 2}, {"v", v, 2}};
    },
};

class CpuChunkBoundariesTest : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(CpuChunkBoundariesTest, EveryChunkMatchesTheReference) {
  auto cpu = make_cpu_backend(GetParam(), 3);
  reference::ReferenceBackend<double> ref;
  for (std::size_t op = 0; op < std::size(kOps); ++op) {
    SCOPED_TRACE("op " + std::to_string(op));
    const std::vector<Output> actual = kOps[op](*cpu), expected = kOps[op](ref);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      const testing::Tolerance tol =
          testing::tolerance(testing::Check::op_vs_reference, DType::f32, actual[i].accumulation);
      EXPECT_TRUE(testing::all_close(actual[i].name, *cpu, actual[i].value, ref, expected[i].value, tol));
    }
  }
}

// The comparison above can see the bug it is for: at its tolerances, a chunk that leaves out one
// row of 2100 changes dw and db, and one of 800 the loss, by more than the tolerance allows (a
// tolerance growing as K^2 u once let any single row go missing unseen).
TEST(CpuChunkBoundaries, ItsTolerancesSeeOneRowLeftOut) {
  reference::ReferenceBackend<double> ref;
  const auto f32 = [](std::int64_t k) { return testing::tolerance(testing::Check::op_vs_reference, DType::f32, k); };
  Tensor x = float_inputs(ref, {2100, 8}, 1), w = float_inputs(ref, {130, 8}, 2), bias = float_inputs(ref, {130}, 3);
  Tensor y = ref.empty({2100, 130}, ref.dtype()), pre = ref.empty({2100, 130}, ref.dtype());
  ref.linear_forward(x, w, &bias, Activation::relu, y, &pre);
  const auto weight_grads = [&](const Tensor& dy) {
    Tensor dw = ref.zeros({130, 8}, ref.dtype()), db = ref.zeros({130}, ref.dtype());
    ref.linear_backward(x, w, &pre, Activation::relu, dy, nullptr, dw, &db);
    return std::pair{dw, db};
  };
  const Tensor dy = float_inputs(ref, {2100, 130}, 4);
  Tensor row_left_out = ref.download(dy);
  for (std::int64_t j = 0; j < 130; ++j) row_left_out.set(1000 * 130 + j, 0.0);
  const auto [dw, db] = weight_grads(dy);
  const auto [dw_short, db_short] = weight_grads(ref.upload(row_left_out));
  EXPECT_FALSE(testing::all_close("dw", ref, dw_short, ref, dw, f32(2100)));
  EXPECT_FALSE(testing::all_close("db", ref, db_short, ref, db, f32(2100)));

  const Tensor logits = float_inputs(ref, {800, 70}, 14, -4.0, 4.0), labels = labels_with_padding(ref, 800, 70);
  Tensor shorter_labels = ref.download(labels);
  shorter_labels.set(400, 0.0);  // row 400 (label 400 * 37 % 70 = 30) becomes padding
  Tensor lse = ref.empty({800}, ref.dtype());
  const double loss = ref.cross_entropy_forward(logits, labels, 0, 0.1, SmoothingForm::uniform, lse, nullptr);
  const double loss_short =
      ref.cross_entropy_forward(logits, ref.upload(shorter_labels), 0, 0.1, SmoothingForm::uniform, lse, nullptr);
  EXPECT_FALSE(testing::all_close("loss", ref, scalar(ref, loss_short), ref, scalar(ref, loss), f32(70)));
}

std::string target_test_name(const ::testing::TestParamInfo<std::int64_t>& info) { return target_name(info.param); }

INSTANTIATE_TEST_SUITE_P(AllTargets, CpuChunkBoundariesTest, ::testing::ValuesIn(compiled_targets()),
                         target_test_name);

}  // namespace
}  // namespace trepro::cpu
