#include "conformance/support/backend_fixture.h"

#include <algorithm>
#include <cstdlib>

#include "conformance/support/provided_ops_guard.h"

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
  if (!backend_) {
    backend_ = make_backend(GetParam());
    const std::vector<OpDirection> ops = every_op_direction();
    const bool partial = !std::all_of(ops.begin(), ops.end(), [&](OpDirection op) { return backend_->provides(op); });
    const char* record = std::getenv("TREPRO_RECORD_OPS");
    record_ops_ = record && std::string(record) == "1";
    if (partial || record_ops_) {
      guard_ = std::make_unique<ProvidedOpsGuard>(*backend_, [this](OpDirection op, bool provided) { called(op, provided); });
    }
    if (partial) {
      holding_ = std::make_unique<::testing::ScopedFakeTestPartResultReporter>(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &held_);
    }
  }
  return guard_ ? *guard_ : *backend_;
}

void BackendTest::called(OpDirection op, bool provided) {
  if (record_ops_ && std::find(ops_called_.begin(), ops_called_.end(), op) == ops_called_.end()) {
    ops_called_.push_back(op);
    std::string list;
    for (OpDirection o : ops_called_) list += (list.empty() ? "" : ",") + describe(o);
    RecordProperty("ops", list);
  }
  if (!provided && !refused_) {
    refused_ = op;
    held_before_refusal_ = held_.size();
  }
}

void BackendTest::TearDown() {
  if (!holding_) return;
  holding_.reset();  // the test's results go to gtest again
  const int reported = refused_ ? held_before_refusal_ : held_.size();
  bool failed = false;
  for (int i = 0; i < reported; ++i) {
    const ::testing::TestPartResult& r = held_.GetTestPartResult(i);
    failed = failed || r.failed();
    ::testing::internal::AssertHelper(r.type(), r.file_name(), r.line_number(), r.message()) = ::testing::Message();
  }
  if (refused_ && !failed) {
    RecordProperty("not_provided", describe(*refused_));
    GTEST_SKIP() << kNotProvided << describe(*refused_) << " by " << backend_->name();
  }
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
