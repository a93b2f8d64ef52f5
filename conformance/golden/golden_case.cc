#include "conformance/golden/golden_case.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "conformance/support/golden_scale.h"
#include "core/json_input.h"

namespace trepro::golden {

std::string golden_dir() { return TREPRO_GOLDEN_DIR; }

const nlohmann::json& manifest() {
  static const nlohmann::json parsed = read_json_file(golden_dir() + "/MANIFEST.json");
  return parsed;
}

std::string GoldenCase::path(const std::string& role) const {
  return golden_dir() + "/data/" + entry.at("files").at(role).at("path").get<std::string>();
}

SafetensorsFile GoldenCase::read(const std::string& role) const { return read_safetensors(path(role)); }

testing::Tolerance GoldenCase::tolerance(DType backend_dtype) const {
  const nlohmann::json& t = entry.at("tolerance").at(std::string(dtype_name(backend_dtype)));
  return {t.at("atol").get<double>(), t.at("rtol").get<double>()};
}

std::string GoldenCase::label() const { return name + "/" + std::string(dtype_name(dtype)); }

std::vector<GoldenCase> cases(const std::string& kind, const std::string& op) {
  std::vector<GoldenCase> out;
  for (const nlohmann::json& entry : manifest().at("cases")) {
    if (entry.at("kind") != kind) continue;
    if (!op.empty() && entry.at("params").value("op", "") != op) continue;
    out.push_back({entry.at("name"), kind, parse_dtype(entry.at("dtype").get<std::string>()), entry});
  }
  EXPECT_FALSE(out.empty()) << "MANIFEST.json has no " << kind << " case" << (op.empty() ? "" : " for op " + op);
  return out;
}

std::string scale_tensor_name(const std::string& name, const SafetensorsFile& expected) {
  return golden_scale_tensor(name, [&](const std::string& tensor) { return expected.tensors.count(tensor) > 0; });
}

Comparison::Comparison(const GoldenCase& golden, Backend& backend, const SafetensorsFile& expected)
    : golden_(golden), backend_(backend), expected_(expected), tol_(golden.tolerance(backend.dtype())) {}

::testing::AssertionResult Comparison::check(const std::string& expected_name, const Tensor& actual) {
  return check_with(expected_name, actual, tol_, true);
}

::testing::AssertionResult Comparison::check_scalar(const std::string& expected_name, double actual) {
  return check(expected_name, Tensor::from_values({}, DType::f64, {actual}));
}

::testing::AssertionResult Comparison::check_with(const std::string& expected_name, const Tensor& actual,
                                                  testing::Tolerance tol, bool relative_to_scale) {
  auto found = expected_.tensors.find(expected_name);
  if (found == expected_.tensors.end()) {
    return ::testing::AssertionFailure() << golden_.label() << ": no expected tensor " << expected_name;
  }
  const Tensor& e = found->second;
  const Tensor a = actual.device() == Device::cpu ? actual : backend_.download(actual);
  if (a.numel() != e.numel()) {
    return ::testing::AssertionFailure() << golden_.label() << ": " << expected_name << " has shape "
                                         << shape_string(a.shape()) << ", expected " << shape_string(e.shape());
  }
  double scale = 0.0;
  if (relative_to_scale) {
    const Tensor& s = expected_.tensors.at(scale_tensor_name(expected_name, expected_));
    for (std::int64_t i = 0; i < s.numel(); ++i) scale = std::max(scale, std::abs(s.at(i)));
  }
  const double atol = relative_to_scale ? tol.atol * scale : tol.atol;
  double worst = 0.0;
  std::int64_t worst_index = 0;
  for (std::int64_t i = 0; i < e.numel(); ++i) {
    const double allowed = atol + tol.rtol * std::abs(e.at(i));
    const double diff = std::abs(a.at(i) - e.at(i));
    const double ratio = std::isnan(diff) ? INFINITY : diff / std::max(allowed, 1e-300);
    if (ratio > worst) {
      worst = ratio;
      worst_index = i;
    }
  }
  if (worst > worst_) {
    worst_ = worst;
    worst_name_ = expected_name;
  }
  if (worst <= 1.0) return ::testing::AssertionSuccess();
  std::ostringstream msg;
  msg.precision(17);
  msg << golden_.label() << " on " << backend_.name() << ": " << expected_name << "[" << worst_index << "] is "
      << a.at(worst_index) << ", expected " << e.at(worst_index) << ": off by " << worst
      << " x the tolerance (atol " << atol << ", rtol " << tol.rtol << ")";
  return ::testing::AssertionFailure() << msg.str();
}

void Comparison::report() const {
  std::cout << "golden " << golden_.label() << " on " << backend_.name() << ": worst " << worst_
            << " of tolerance (" << worst_name_ << "; atol " << tol_.atol << " x scale, rtol " << tol_.rtol << ")\n";
}

Tensor upload(Backend& backend, const SafetensorsFile& file, const std::string& name) {
  auto found = file.tensors.find(name);
  if (found == file.tensors.end()) throw std::runtime_error("golden file has no tensor " + name);
  return backend.upload(found->second);
}

}  // namespace trepro::golden
