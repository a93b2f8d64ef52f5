// Running RapidCheck properties inside a parameterized gtest test (one backend per test), and the
// comparisons the properties share.
#pragma once

#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "conformance/support/tensor_testing.h"

namespace trepro::testing {

// Checks `property` as part of the current test, with at most `max_success` cases: the suite
// must stay under a minute in Release and usable under ASan. RC_PARAMS still rules: an explicit
// max_success there replaces the per-property count, and seed=... reproduces a failure (the
// seed is random otherwise, and printed with every failure).
template <class Property>
void check_property(int max_success, Property&& property) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (params.maxSuccess == rc::detail::TestParams().maxSuccess) params.maxSuccess = max_success;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(std::forward<Property>(property)), metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    ADD_FAILURE() << message.str();
  }
}

// Fails the current RapidCheck case with gtest's message (the worst element and its values).
inline void rc_require(const ::testing::AssertionResult& result) {
  if (!result) RC_FAIL(result.message());
}

// Normalization divides by the row's spread (std for LayerNorm, root mean square for RMSNorm),
// so its rounding error grows as 1 / spread; the tolerance table assumes O(1), well-conditioned
// inputs. Norm properties keep rows whose spread is at least this.
constexpr double kMinNormSpread = 0.3;
// Whether every row of the host matrix x [N, d] has a spread >= kMinNormSpread.
bool rows_well_spread(const Tensor& x, NormKind kind);

// `x` (on `from`) copied to `to` with the values `from` holds: a float32 backend's rounded inputs
// widen exactly to float64, so compared backends see identical inputs.
inline Tensor same_values_on(Backend& to, Backend& from, const Tensor& x) {
  return to.upload(from.download(x));
}

}  // namespace trepro::testing
