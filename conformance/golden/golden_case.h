// The golden cases of golden/MANIFEST.json (written by golden/generate.py with PyTorch) and the
// comparison every golden test uses: per tensor, elementwise
//   |actual - expected| <= atol * max|expected| + rtol * |expected|
// with atol, rtol from the case's manifest tolerance for the backend's dtype (atol is relative to
// the tensor's scale: see golden/gen/tolerance.py and the manifest's "comparison").
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "conformance/support/tolerances.h"
#include "core/backend.h"
#include "core/safetensors.h"

namespace trepro::golden {

// The golden folder (PROJECT_SOURCE_DIR/golden, a compile definition).
std::string golden_dir();
const nlohmann::json& manifest();

struct GoldenCase {
  std::string name;
  std::string kind;   // "op" | "layer" | "model" | "training"
  DType dtype;        // what PyTorch computed in
  nlohmann::json entry;  // the whole manifest entry

  const nlohmann::json& params() const { return entry.at("params"); }
  bool has_file(const std::string& role) const { return entry.at("files").contains(role); }
  std::string path(const std::string& role) const;  // absolute
  SafetensorsFile read(const std::string& role) const;
  // The tolerance for a backend of `backend_dtype`.
  testing::Tolerance tolerance(DType backend_dtype) const;
  // "attention_causal/float32"
  std::string label() const;
};

// Cases of `kind`; for ops, only those of `op` when given. Fails the calling test when there is
// none, so a renamed case cannot be skipped silently.
std::vector<GoldenCase> cases(const std::string& kind, const std::string& op = "");

// The tensor whose largest magnitude a tensor's atol is relative to: itself, except for the
// identically zero key-bias gradients (the manifest's "zero_gradient_rule").
std::string scale_tensor_name(const std::string& name, const SafetensorsFile& expected);

// Compares tensors of one backend with one case's expected file and keeps the worst
// error / allowed ratio, which report() prints (the figure the golden README quotes).
class Comparison {
 public:
  Comparison(const GoldenCase& golden, Backend& backend, const SafetensorsFile& expected);

  // `actual` may live on the backend's device or on the host; shapes must agree in element count.
  ::testing::AssertionResult check(const std::string& expected_name, const Tensor& actual);
  ::testing::AssertionResult check_scalar(const std::string& expected_name, double actual);
  // Same, with an explicit tolerance (absolute when `relative_to_scale` is false).
  ::testing::AssertionResult check_with(const std::string& expected_name, const Tensor& actual,
                                        testing::Tolerance tol, bool relative_to_scale);
  // Prints "golden <case> on <backend>: worst <ratio> of tolerance (<tensor>)".
  void report() const;

 private:
  const GoldenCase& golden_;
  Backend& backend_;
  const SafetensorsFile& expected_;
  testing::Tolerance tol_;
  double worst_ = 0.0;
  std::string worst_name_;
};

// Tensor `name` of a golden file on the backend (floats in its dtype, ids as int32).
Tensor upload(Backend& backend, const SafetensorsFile& file, const std::string& name);

}  // namespace trepro::golden
