// One test body, every backend: a test derives from BackendTest, uses backend(), and is
// instantiated with TR_INSTANTIATE_FOR_ALL_BACKENDS(SuiteName). The double-precision reference
// (reference()) is the ground truth the others are compared with.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "registry/registry.h"

namespace trepro::testing {

std::vector<std::string> backend_names();
// Only the float64 backends: finite-difference checks need double precision.
std::vector<std::string> double_backend_names();

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  Backend& backend();
  Backend& reference();  // reference-f64

 private:
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backend> reference_;
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
