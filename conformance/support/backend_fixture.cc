#include "conformance/support/backend_fixture.h"

namespace trepro::testing {

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const BackendInfo& info : available_backends()) names.push_back(info.name);
  return names;
}

std::vector<std::string> double_backend_names() {
  std::vector<std::string> names;
  for (const BackendInfo& info : available_backends()) {
    if (info.dtype == DType::f64) names.push_back(info.name);
  }
  return names;
}

Backend& BackendTest::backend() {
  if (!backend_) backend_ = make_backend(GetParam());
  return *backend_;
}

Backend& BackendTest::reference() {
  if (!reference_) reference_ = make_reference_backend(DType::f64);
  return *reference_;
}

std::string backend_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace trepro::testing
