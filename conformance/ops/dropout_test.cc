#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"
#include "core/philox.h"

namespace trepro::testing {
namespace {

const Shape kShapes[] = {{1}, {3}, {3, 17}, {64, 64}};
const PhiloxKey kKey{1234, 7, 42};

class DropoutTest : public BackendTest {
 protected:
  // The backend's values, exactly, on the float64 reference: only the op's own rounding differs.
  Tensor on_reference(const Tensor& t) { return reference().upload(backend().download(t)); }

  // Which elements dropout keeps, read off y = dropout(x) for an x with no zero.
  std::vector<bool> kept(Backend& on, const DropoutSpec& spec, const Shape& shape) {
    Tensor x = random_tensor(on, shape, 99, 0.5, 1.0), y = on.empty(shape, on.dtype());
    on.dropout_forward(x, spec, y);
    return nonzero(on, y);
  }
  static std::vector<bool> nonzero(Backend& on, const Tensor& t) {
    Tensor host = on.download(t);
    std::vector<bool> out;
    for (std::int64_t i = 0; i < host.numel(); ++i) out.push_back(host.at(i) != 0.0);
    return out;
  }
};

class DropoutGradientTest : public DropoutTest {};

TEST_P(DropoutTest, ZeroProbabilityIsTheIdentity) {
  Backend& b = backend();
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor x = random_tensor(b, shape, 1), y = b.empty(shape, b.dtype()), dx = b.empty(shape, b.dtype());
    b.dropout_forward(x, {0.0, kKey}, y);
    b.dropout_backward(x, {0.0, kKey}, dx);
    EXPECT_TRUE(all_close("y", b, y, b, x, {0.0, 0.0}));
    EXPECT_TRUE(all_close("dx", b, dx, b, x, {0.0, 0.0}));
  }
}

TEST_P(DropoutTest, HalfKeepsAboutHalfAndDoublesWhatItKeeps) {
  Backend& b = backend();
  const Shape shape{64, 64};
  Tensor x = random_tensor(b, shape, 2, 0.5, 1.0), y = b.empty(shape, b.dtype());
  b.dropout_forward(x, {0.5, kKey}, y);
  Tensor hx = b.download(x), hy = b.download(y);
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < hx.numel(); ++i) {
    if (hy.at(i) == 0.0) continue;
    ++count;
    ASSERT_EQ(hy.at(i), 2 * hx.at(i)) << "element " << i;
  }
  // Binomial(4096, 1/2): mean 2048, standard deviation 32; five deviations either side.
  EXPECT_NEAR(static_cast<double>(count), 2048.0, 160.0);
}

TEST_P(DropoutTest, KeepsWhatPhiloxKeepsAndScalesItByOneOverOneMinusP) {
  // y_i = x_i / (1 - p) = 1.25 x_i where dropout_keep(key, p, i), else 0.
  Backend& b = backend();
  const Shape shape{3, 17};
  const DropoutSpec spec{0.2, kKey};
  Tensor x = random_tensor(b, shape, 7, 0.5, 1.0), y = b.empty(shape, b.dtype());
  b.dropout_forward(x, spec, y);
  Tensor hx = b.download(x), expected = Tensor::empty(shape, DType::f64);
  for (std::int64_t i = 0; i < hx.numel(); ++i) {
    expected.set(i, dropout_keep(kKey, spec.p, static_cast<std::uint64_t>(i)) ? 1.25 * hx.at(i) : 0.0);
  }
  EXPECT_TRUE(all_close("y", b, y, reference(), reference().upload(expected),
                        tolerance(Check::op_vs_reference, b.dtype())));
}

TEST_P(DropoutTest, ForwardAndBackwardDrawTheSameMask) {
  Backend& b = backend();
  const Shape shape{64, 64};
  const DropoutSpec spec{0.3, kKey};
  Tensor dy = random_tensor(b, shape, 3, 0.5, 1.0), dx = b.empty(shape, b.dtype());
  b.dropout_backward(dy, spec, dx);
  EXPECT_EQ(nonzero(b, dx), kept(b, spec, shape));
}

TEST_P(DropoutTest, FloatAndDoubleDrawTheSameMask) {
  const Shape shape{64, 64};
  const DropoutSpec spec{0.1, kKey};
  EXPECT_EQ(kept(backend(), spec, shape), kept(reference(), spec, shape));
}

TEST_P(DropoutTest, AnotherSiteStreamOrSeedDrawsAnotherMask) {
  Backend& b = backend();
  const Shape shape{64, 64};
  std::vector<bool> base = kept(b, {0.5, kKey}, shape);
  const PhiloxKey others[] = {{kKey.seed, kKey.stream, kKey.site + 1},
                              {kKey.seed, kKey.stream + 1, kKey.site},
                              {kKey.seed + 1, kKey.stream, kKey.site}};
  for (const PhiloxKey& other : others) {
    std::vector<bool> mask = kept(b, {0.5, other}, shape);
    std::int64_t differ = 0;
    for (std::size_t i = 0; i < mask.size(); ++i) differ += mask[i] != base[i];
    // Independent masks differ in half the elements (2048 +- 32); a shared one in none.
    EXPECT_GT(differ, 1024) << "seed " << other.seed << " stream " << other.stream << " site " << other.site;
  }
}

TEST_P(DropoutTest, ForwardAndBackwardMatchReference) {
  Backend& b = backend();
  const DropoutSpec spec{0.1, kKey};  // 1 / 0.9 is inexact: the scale rounds
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape_string(shape));
    Tensor x = random_tensor(b, shape, 4), y = b.empty(shape, b.dtype()), dx = b.empty(shape, b.dtype());
    b.dropout_forward(x, spec, y);
    b.dropout_backward(x, spec, dx);
    Tensor y_ref = reference().empty(shape, DType::f64), dx_ref = reference().empty(shape, DType::f64);
    reference().dropout_forward(on_reference(x), spec, y_ref);
    reference().dropout_backward(on_reference(x), spec, dx_ref);
    const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype());
    EXPECT_TRUE(all_close("y", b, y, reference(), y_ref, tol));
    EXPECT_TRUE(all_close("dx", b, dx, reference(), dx_ref, tol));
  }
}

TEST_P(DropoutTest, RejectsAnOutputOfAnotherShape) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1), y = b.empty({12}, b.dtype());
  try {
    b.dropout_forward(x, {0.5, kKey}, y);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("dropout_forward: y has shape [12], expected [3, 4]"));
  }
}

TEST_P(DropoutTest, BackwardRejectsAGradientOfAnotherShape) {
  Backend& b = backend();
  Tensor dy = random_tensor(b, {3, 4}, 1), dx = b.empty({4, 3}, b.dtype());
  try {
    b.dropout_backward(dy, {0.5, kKey}, dx);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("dropout_backward: dx has shape [4, 3], expected [3, 4]"));
  }
}

TEST_P(DropoutTest, RejectsAProbabilityOfOne) {
  Backend& b = backend();
  Tensor x = random_tensor(b, {3, 4}, 1), y = b.empty({3, 4}, b.dtype());
  try {
    b.dropout_forward(x, {1.0, kKey}, y);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("dropout_forward: p must be in [0, 1)"));
  }
}

// L = <r, dropout(x)>: the mask is a function of the key alone, so L is linear in x.
TEST_P(DropoutGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  const Shape shape{3, 13};
  const DropoutSpec spec{0.3, kKey};
  Tensor x = random_tensor(b, shape, 5), r = random_tensor(b, shape, 6);
  Tensor y = b.empty(shape, b.dtype()), dx = b.empty(shape, b.dtype());
  b.dropout_backward(r, spec, dx);
  auto loss = [&] {
    b.dropout_forward(x, spec, y);
    return dot(b, r, y);
  };
  EXPECT_TRUE(check_gradient("dx", b, x, dx, loss, x.numel()));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(DropoutTest);
TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(DropoutGradientTest);

}  // namespace
}  // namespace trepro::testing
