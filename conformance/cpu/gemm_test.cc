// The packed GEMM under linear, on every compiled target, against a float64 product: edge tiles
// (sizes that are not multiples of the register tile or the cache blocks), the three stride
// layouts linear uses, accumulation across depth blocks, the fused epilogue (bias, activation,
// pre), and bit-identical results for any thread count.
#include "optimized/cpu/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/support/tolerances.h"
#include "core/philox.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::cpu {
namespace {

std::vector<float> random_values(std::int64_t n, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(2 * philox_uniform({seed, 0, 0}, i) - 1);
  return v;
}

struct Shape3 {
  std::int64_t m, n, k;
};
// 1x1x1; smaller than one tile; not multiples of the 6-row tile or any vector width; more depth
// than one 256-deep block; split over the two threads by columns and by rows; exactly one tile;
// and, small enough to stay on one thread, more rows than two 144-row blocks and more columns
// than one 2048-wide panel (split over threads, neither would reach a second block).
const Shape3 kShapes[] = {{1, 1, 1},      {5, 3, 7},     {13, 37, 300},  {97, 515, 33},
                          {200, 70, 513}, {6, 32, 256},  {301, 20, 40},  {5, 2100, 20}};

// The three layouts of linear: x w^T (B transposed), dpre w (both plain), dpre^T x (A transposed).
enum class Layout { b_transposed, plain, a_transposed };

struct Operands {
  std::vector<float> a, b;
  StridedMatrix sa, sb;
};

Operands operands(const Shape3& s, Layout layout) {
  Operands o{random_values(s.m * s.k, 1), random_values(s.k * s.n, 2), {}, {}};
  // A [m, k]: stored [m, k] (row stride k) or, transposed, as [k, m] (column stride m).
  o.sa = layout == Layout::a_transposed ? StridedMatrix{o.a.data(), 1, s.m} : StridedMatrix{o.a.data(), s.k, 1};
  // B [k, n]: stored [k, n] or, transposed, as [n, k].
  o.sb = layout == Layout::b_transposed ? StridedMatrix{o.b.data(), 1, s.k} : StridedMatrix{o.b.data(), s.n, 1};
  return o;
}

double element(const StridedMatrix& x, std::int64_t i, std::int64_t j) {
  return x.data[i * x.row_stride + j * x.col_stride];
}

class GemmTest : public ::testing::TestWithParam<std::int64_t> {
 protected:
  std::vector<float> run(int threads, const Shape3& s, const Operands& o, const std::vector<float>& c0, bool accumulate,
                         const GemmEpilogue& epilogue, const PackedWeight* packed = nullptr) {
    ThreadPool pool(threads);
    Workspace workspace(threads);
    const CpuContext ctx{GetParam(), pool, workspace, nullptr};  // the GEMM allocates no tensors
    std::vector<float> c = c0;
    gemm(ctx, s.m, s.n, s.k, o.sa, o.sb, c.data(), s.n, accumulate, epilogue, packed);
    return c;
  }
};

TEST_P(GemmTest, MatchesFloat64ForEveryLayoutAndEdge) {
  for (const Shape3& s : kShapes) {
    for (Layout layout : {Layout::b_transposed, Layout::plain, Layout::a_transposed}) {
      for (bool accumulate : {false, true}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " layout " +
                     std::to_string(static_cast<int>(layout)) + (accumulate ? " accumulate" : ""));
        const Operands o = operands(s, layout);
        const std::vector<float> c0 = random_values(s.m * s.n, 3);
        const std::vector<float> c = run(2, s, o, c0, accumulate, {});
        const testing::Tolerance tol = testing::tolerance(testing::Check::op_vs_reference, DType::f32, s.k + 1);
        for (std::int64_t i = 0; i < s.m; ++i) {
          for (std::int64_t j = 0; j < s.n; ++j) {
            double expected = accumulate ? c0[static_cast<std::size_t>(i * s.n + j)] : 0.0;
            for (std::int64_t p = 0; p < s.k; ++p) expected += element(o.sa, i, p) * element(o.sb, p, j);
            const double got = c[static_cast<std::size_t>(i * s.n + j)];
            ASSERT_LE(std::abs(got - expected), tol.atol + tol.rtol * std::abs(expected)) << i << ", " << j;
          }
        }
      }
    }
  }
}

TEST_P(GemmTest, EpilogueAddsBiasSavesPreAndActivates) {
  const Shape3 s{13, 37, 300};
  const Operands o = operands(s, Layout::b_transposed);
  const std::vector<float> bias = random_values(s.n, 4);
  std::vector<float> pre(static_cast<std::size_t>(s.m * s.n), -7.0f);
  const std::vector<float> c = run(2, s, o, std::vector<float>(pre.size()), false, {bias.data(), Activation::relu, pre.data()});
  const testing::Tolerance tol = testing::tolerance(testing::Check::op_vs_reference, DType::f32, s.k + 1);
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double expected = bias[static_cast<std::size_t>(j)];
      for (std::int64_t p = 0; p < s.k; ++p) expected += element(o.sa, i, p) * element(o.sb, p, j);
      const std::size_t at = static_cast<std::size_t>(i * s.n + j);
      ASSERT_LE(std::abs(pre[at] - expected), tol.atol + tol.rtol * std::abs(expected)) << i << ", " << j;
      // relu of the saved pre-activation, exactly.
      ASSERT_EQ(c[at], pre[at] < 0 ? 0.0f : pre[at]) << i << ", " << j;
    }
  }
}

TEST_P(GemmTest, BitsDoNotDependOnTheThreadCount) {
  for (const Shape3& s : kShapes) {
    const Operands o = operands(s, Layout::b_transposed);
    const std::vector<float> c0(static_cast<std::size_t>(s.m * s.n));
    const std::vector<float> one = run(1, s, o, c0, false, {});
    for (int threads : {2, 3, 5}) EXPECT_EQ(run(threads, s, o, c0, false, {}), one) << threads << " threads";
  }
}

// 1 .. 8 rows (decoding's batch x beam, which skip packing B: optimized/cpu/gemm_few_rows-inl.h)
// give the bits of the same rows of a 20-row product (packed): two depth blocks and a depth
// tail, a column tail, the epilogue (bias, gelu, pre) and accumulation, split over threads.
TEST_P(GemmTest, FewRowsGiveTheBitsOfTheSameRowsOfALargerProduct) {
  const Shape3 large{20, 1003, 517};
  const Operands o = operands(large, Layout::b_transposed);
  const std::vector<float> bias = random_values(large.n, 4);
  const std::vector<float> c0 = random_values(large.m * large.n, 3);
  for (bool accumulate : {false, true}) {
    std::vector<float> pre(c0.size());
    const GemmEpilogue epilogue{bias.data(), Activation::gelu, pre.data()};
    const std::vector<float> c = run(2, large, o, c0, accumulate, accumulate ? GemmEpilogue{} : epilogue);
    const std::vector<float> full_pre = pre;
    for (std::int64_t rows = 1; rows <= 8; ++rows) {
      SCOPED_TRACE(std::to_string(rows) + " rows" + (accumulate ? ", accumulate" : ""));
      const Shape3 s{rows, large.n, large.k};
      const auto count = static_cast<std::ptrdiff_t>(rows * large.n);
      const std::vector<float> first_c0(c0.begin(), c0.begin() + count);
      std::fill(pre.begin(), pre.end(), -7.0f);
      const std::vector<float> few = run(2, s, o, first_c0, accumulate, accumulate ? GemmEpilogue{} : epilogue);
      EXPECT_EQ(few, std::vector<float>(c.begin(), c.begin() + count));
      if (!accumulate) {
        EXPECT_EQ(std::vector<float>(pre.begin(), pre.begin() + count),
                  std::vector<float>(full_pre.begin(), full_pre.begin() + count));
      }
    }
  }
}

// A weight packed once (PackedWeight, what decoding keeps) gives the bits of packing B at every
// call, on both paths: 1 .. 8 rows (few rows: read from the strips instead of transposed) and
// more (the packed path, its panels taken from the strips): depth blocks with a tail, columns
// that are not a multiple of the strip width or of 8, the epilogue, accumulation, 1 and 2 threads.
TEST_P(GemmTest, APackedWeightGivesTheBitsOfPackingAtEveryCall) {
  for (const Shape3& large : {Shape3{20, 1003, 517}, Shape3{13, 37, 300}, Shape3{200, 70, 513}, Shape3{5, 2100, 20}}) {
    const Operands o = operands(large, Layout::b_transposed);
    // o.b holds w [n, k] row-major: B = w^T.
    const PackedWeight packed = pack_weight(GetParam(), o.b.data(), large.n, large.k);
    const std::vector<float> bias = random_values(large.n, 4);
    const std::vector<float> c0 = random_values(large.m * large.n, 3);
    // Every row count of the few-rows path (each takes its own number of column runs per depth).
    for (std::int64_t rows : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5},
                              std::int64_t{6}, std::int64_t{7}, std::int64_t{8}, large.m}) {
      for (bool accumulate : {false, true}) {
        for (int threads : {1, 2}) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(large.n) + "x" + std::to_string(large.k) +
                       (accumulate ? ", accumulate, " : ", ") + std::to_string(threads) + " threads");
          const Shape3 s{std::min(rows, large.m), large.n, large.k};
          const std::vector<float> first_c0(c0.begin(), c0.begin() + static_cast<std::ptrdiff_t>(s.m * s.n));
          std::vector<float> pre(first_c0.size(), -7.0f), packed_pre(first_c0.size(), -7.0f);
          const GemmEpilogue epilogue{bias.data(), Activation::gelu, pre.data()};
          const GemmEpilogue packed_epilogue{bias.data(), Activation::gelu, packed_pre.data()};
          const std::vector<float> c = run(threads, s, o, first_c0, accumulate, accumulate ? GemmEpilogue{} : epilogue);
          EXPECT_EQ(run(threads, s, o, first_c0, accumulate, accumulate ? GemmEpilogue{} : packed_epilogue, &packed), c);
          EXPECT_EQ(packed_pre, pre);
        }
      }
    }
  }
}

TEST_P(GemmTest, APackedWeightOfAnotherShapeIsRefused) {
  const Shape3 s{4, 37, 300};
  const Operands o = operands(s, Layout::b_transposed);
  const PackedWeight other = pack_weight(GetParam(), o.b.data(), s.n - 1, s.k);
  try {
    run(1, s, o, std::vector<float>(static_cast<std::size_t>(s.m * s.n)), false, {}, &other);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("36 x 300"), std::string::npos) << e.what();
  }
}

std::string target_test_name(const ::testing::TestParamInfo<std::int64_t>& info) { return target_name(info.param); }

INSTANTIATE_TEST_SUITE_P(AllTargets, GemmTest, ::testing::ValuesIn(compiled_targets()), target_test_name);

}  // namespace
}  // namespace trepro::cpu
