// One test body, every backend: a test derives from BackendTest, uses backend(), and is
// instantiated with TR_INSTANTIATE_FOR_ALL_BACKENDS(SuiteName). The double-precision reference
// (reference()) is the ground truth the others are compared with.
//
// A test that calls an op the backend does not provide (Backend::provides) is reported as
// skipped with the message kNotProvided + "<op> <direction> by <backend>" and the gtest property
// "not_provided" ("<op> <direction>"), never as passed, and as failed only when a check failed
// before that call. With TREPRO_RECORD_OPS=1 in the
// environment (trepro conform sets it), each test records the op x directions it called on the
// backend under test, in order, as the gtest property "ops" ("norm forward,norm backward").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "registry/registry.h"

namespace trepro::testing {

std::vector<std::string> backend_names();
// Only the float64 backends: finite-difference checks need double precision.
std::vector<std::string> double_backend_names();

// The fixed start of a "not provided" skip's message: what reports and scripts grep for.
inline constexpr const char* kNotProvided = "trepro: not provided: ";

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  Backend& backend();
  Backend& reference();  // reference-f64
  void TearDown() override;

 private:
  void called(OpDirection op, bool provided);

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backend> guard_;  // wraps backend_ when it does not provide every op or ops are recorded
  std::unique_ptr<Backend> reference_;
  bool record_ops_ = false;
  std::vector<OpDirection> ops_called_;
  // While guard_ refuses ops, the test's results are held back until TearDown: the failures that
  // follow a refused op are its consequences, not findings.
  ::testing::TestPartResultArray held_;
  std::unique_ptr<::testing::ScopedFakeTestPartResultReporter> holding_;
  std::optional<OpDirection> refused_;
  int held_before_refusal_ = 0;
};

// gtest test-name suffix: "reference_f64" for "reference-f64".
std::string backend_test_name(const ::testing::TestParamInfo<std::string>& info);

}  // namespace trepro::testing

#define TR_INSTANTIATE_FOR_ALL_BACKENDS(suite)                                                    \
  INSTANTIATE_TEST_SUITE_P(AllBackends, suite, ::testing::ValuesIn(::trepro::testing::backend_names()), \
                           ::trepro::testing::backend_test_name)
#define TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(suite)                                                        \
  INSTANTIATE_TEST_SUITE_P(DoubleBackends, suite,                                                        \
                           ::testing::ValuesIn(::trepro::testing::double_backend_names()),               \
                           ::trepro::testing::backend_test_name)
