#include "conformance/support/tensor_testing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "core/philox.h"

namespace trepro::testing {

Tensor random_ids(Backend& backend, const Shape& shape, std::uint64_t seed, std::int64_t upper) {
  Tensor host = Tensor::empty(shape, DType::i32);
  PhiloxKey key{seed, 0, 0x1d5};
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    auto id = static_cast<std::int64_t>(philox_uniform(key, static_cast<std::uint64_t>(i)) * static_cast<double>(upper));
    host.set(i, static_cast<double>(std::min(id, upper - 1)));
  }
  return backend.upload(host);
}

Tensor int_tensor(Backend& backend, const Shape& shape, const std::vector<double>& values) {
  return backend.upload(Tensor::from_values(shape, DType::i32, values));
}

namespace {

// A host tensor as it is; a device tensor downloaded by its backend (the cuda backend refuses to
// download what is already on the host, as a test comparing against a downloaded copy would ask).
Tensor on_host(Backend& backend, const Tensor& t) {
  return t.device() == Device::cpu ? t : backend.download(t);
}

// A comparison of tensors whose shapes differ fails before any element is read.
std::optional<::testing::AssertionResult> shape_mismatch(const std::string& what, const Tensor& actual,
                                                         const Tensor& expected) {
  if (actual.shape() == expected.shape()) return std::nullopt;
  return ::testing::AssertionFailure() << what << ": shape " << shape_string(actual.shape()) << ", expected "
                                       << shape_string(expected.shape());
}

// Keeps, as the current test's gtest properties, the largest ratio of error to allowed error of
// its all_close checks and that check's tolerance: what trepro conform reports per op.
void record_worst_ratio(double ratio, const std::string& what, Tolerance tol) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!test) return;
  const ::testing::TestResult* result = test->result();
  for (int i = 0; i < result->test_property_count(); ++i) {
    const ::testing::TestProperty& p = result->GetTestProperty(i);
    if (std::string(p.key()) == "worst_ratio" && !(ratio > std::stod(p.value()))) return;
  }
  std::ostringstream text;
  text.precision(17);
  text << ratio;
  ::testing::Test::RecordProperty("worst_ratio", text.str());
  text.str("");
  text << tol.atol;
  ::testing::Test::RecordProperty("worst_atol", text.str());
  text.str("");
  text << tol.rtol;
  ::testing::Test::RecordProperty("worst_rtol", text.str());
  ::testing::Test::RecordProperty("worst_check", what);
}

}  // namespace

double dot(Backend& backend, const Tensor& a, const Tensor& b) {
  Tensor ha = on_host(backend, a);
  Tensor hb = on_host(backend, b);
  if (ha.numel() != hb.numel()) throw std::invalid_argument("dot: sizes differ");
  double sum = 0.0;
  for (std::int64_t i = 0; i < ha.numel(); ++i) sum += ha.at(i) * hb.at(i);
  return sum;
}

::testing::AssertionResult all_close(const std::string& what, Backend& actual_backend, const Tensor& actual,
                                     Backend& expected_backend, const Tensor& expected, Tolerance tol) {
  Tensor a = on_host(actual_backend, actual);
  Tensor e = on_host(expected_backend, expected);
  if (auto mismatch = shape_mismatch(what, a, e)) return *mismatch;
  std::int64_t worst = -1;
  double worst_excess = 0.0, worst_ratio = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    double diff = std::abs(a.at(i) - e.at(i));
    double allowed = tol.atol + tol.rtol * std::abs(e.at(i));
    // A non-finite expected value (the lse of a query with no key is -inf) must be matched
    // exactly: inf - inf is NaN, and atol + rtol * inf would accept any finite value.
    bool bad = std::isfinite(e.at(i)) ? !(diff <= allowed) : !(a.at(i) == e.at(i));  // NaN fails
    if (bad && (worst < 0 || !(diff - allowed <= worst_excess))) {
      worst = i;
      worst_excess = diff - allowed;
    }
    // Error over allowed error; an exact match is 0 whatever the tolerance, a NaN or a wrong
    // non-finite value is infinite.
    double ratio = diff == 0.0 ? 0.0 : diff / allowed;
    if (!std::isfinite(e.at(i))) ratio = a.at(i) == e.at(i) ? 0.0 : std::numeric_limits<double>::infinity();
    if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
    worst_ratio = std::max(worst_ratio, ratio);
  }
  record_worst_ratio(worst_ratio, what, tol);
  if (worst < 0) return ::testing::AssertionSuccess();
  std::ostringstream msg;
  msg.precision(17);
  msg << what << ": element " << worst << " is " << a.at(worst) << ", expected " << e.at(worst)
      << " (|diff| " << std::abs(a.at(worst) - e.at(worst)) << " > atol " << tol.atol << " + rtol " << tol.rtol
      << " * |expected|)";
  return ::testing::AssertionFailure() << msg.str();
}

::testing::AssertionResult norm_close(const std::string& what, Backend& actual_backend, const Tensor& actual,
                                      Backend& expected_backend, const Tensor& expected, double bound) {
  Tensor a = on_host(actual_backend, actual);
  Tensor e = on_host(expected_backend, expected);
  if (auto mismatch = shape_mismatch(what, a, e)) return *mismatch;
  double diff = 0.0, norm = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff += (a.at(i) - e.at(i)) * (a.at(i) - e.at(i));
    norm += e.at(i) * e.at(i);
  }
  diff = std::sqrt(diff);
  norm = std::sqrt(norm);
  if (diff <= bound * norm) return ::testing::AssertionSuccess();  // NaN fails
  return ::testing::AssertionFailure() << what << ": ||actual - expected|| " << diff << " > " << bound
                                       << " ||expected|| = " << bound * norm;
}

::testing::AssertionResult check_gradient(const std::string& what, Backend& backend, Tensor& input,
                                          const Tensor& analytic, const std::function<double()>& loss,
                                          std::int64_t max_elements) {
  if (backend.dtype() != DType::f64 || input.device() != Device::cpu) {
    return ::testing::AssertionFailure() << what << ": finite differences need a float64 host backend";
  }
  if (input.shape() != analytic.shape()) {
    return ::testing::AssertionFailure() << what << ": gradient shape " << shape_string(analytic.shape())
                                         << " differs from input shape " << shape_string(input.shape());
  }
  const Tolerance tol = tolerance(Check::fd_gradient, DType::f64);
  const std::int64_t n = input.numel();
  const std::int64_t count = std::min(n, max_elements);
  double* x = input.data<double>();
  for (std::int64_t c = 0; c < count; ++c) {
    const std::int64_t i = count == n ? c : c * n / count;
    const double saved = x[i];
    const double h = kFiniteDifferenceStep * std::max(1.0, std::abs(saved));
    x[i] = saved + h;
    const double plus = loss();
    x[i] = saved - h;
    const double minus = loss();
    x[i] = saved;
    const double numeric = (plus - minus) / (2 * h);
    const double exact = analytic.at(i);
    if (!(std::abs(numeric - exact) <= tol.atol + tol.rtol * std::abs(numeric))) {
      std::ostringstream msg;
      msg.precision(12);
      msg << what << ": d/d[" << i << "] analytic " << exact << ", finite difference " << numeric;
      return ::testing::AssertionFailure() << msg.str();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace trepro::testing
