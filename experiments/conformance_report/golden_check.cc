#include "experiments/conformance_report/golden_check.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/safetensors.h"
#include "conformance/support/golden_scale.h"
#include "core/sha256.h"

namespace trepro::conform {
namespace {

// A golden file, checked against its manifest sha256 before use.
SafetensorsFile read_golden(const std::string& golden_dir, const nlohmann::json& entry, const std::string& role) {
  const nlohmann::json& file = entry.at("files").at(role);
  const std::string path = golden_dir + "/data/" + file.at("path").get<std::string>();
  if (sha256_file_hex(path) != file.at("sha256").get<std::string>()) {
    throw std::invalid_argument(path + ": sha256 differs from MANIFEST.json (edited, or a Git LFS pointer?)");
  }
  return read_safetensors(path);
}

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (std::int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.at(i)));
  return m;
}


// The parameter a gradient entry is about: grad.P, grad_sample.P, grad_norm.P -> P.
std::string parameter_of(const std::string& tensor) { return tensor.substr(tensor.find('.') + 1); }

struct Judged {
  double ratio;  // inf: not finite, or another shape
  std::string detail;
};

// |actual - expected| <= atol * scale + rtol * |expected|, elementwise; the ratio is the worst
// error / allowed.
Judged manifest_rule(const std::vector<double>& actual, const Tensor& expected, double atol, double rtol, double scale) {
  if (static_cast<std::int64_t>(actual.size()) != expected.numel()) {
    return {std::numeric_limits<double>::infinity(),
            std::to_string(actual.size()) + " elements, expected shape " + shape_string(expected.shape())};
  }
  double worst = 0.0;
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    const double a = actual[static_cast<std::size_t>(i)], e = expected.at(i);
    if (!std::isfinite(a)) return {std::numeric_limits<double>::infinity(), "element " + std::to_string(i) + " is not finite"};
    const double ratio = std::abs(a - e) / std::max(atol * scale + rtol * std::abs(e), 1e-300);
    if (ratio > worst) {
      worst = ratio;
      at = i;
    }
  }
  std::ostringstream detail;
  detail.precision(17);
  detail << "worst element " << at << ": " << actual[static_cast<std::size_t>(at)] << ", expected " << expected.at(at);
  return {worst, detail.str()};
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = t.at(i);
  return v;
}

class CaseCheck {
 public:
  CaseCheck(const nlohmann::json& entry, std::map<std::string, Tensor> expected)
      : entry_(entry), expected_(std::move(expected)), label_(entry.at("name").get<std::string>() + "/" +
                                                              entry.at("dtype").get<std::string>()) {
    for (const char* n : {"logits", "loss"}) {
      if (expected_.count(n)) names_.push_back(n);
    }
    for (const auto& [name, tensor] : expected_) {
      if (name.rfind("grad.", 0) == 0 || name.rfind("grad_sample.", 0) == 0 || name.rfind("grad_norm.", 0) == 0) {
        names_.push_back(name);
      }
    }
  }

  nlohmann::json result(const std::string& tensor, const std::string& verdict) const {
    return {{"id", label_ + "/" + tensor},
            {"case", entry_.at("name")},
            {"golden_dtype", entry_.at("dtype")},
            {"kind", entry_.at("kind")},
            {"tensor", tensor},
            {"direction", tensor.rfind("grad", 0) == 0 ? "backward" : "forward"},
            {"precision", nullptr},
            {"verdict", verdict},
            {"ratio", nullptr},
            {"tolerance", nullptr}};
  }

  void all_not_provided(const std::string& reason, nlohmann::json& out) const {
    for (const std::string& n : names_) {
      nlohmann::json r = result(n, "not_provided");
      r["reason"] = reason;
      out.push_back(r);
    }
  }

  void judge(const SafetensorsFile& file, const std::string& path, const std::string& forced_precision,
             nlohmann::json& out) const {
    std::string precision = forced_precision;
    if (precision.empty()) {
      const auto logits = file.tensors.find("logits");
      precision = logits != file.tensors.end() && logits->second.dtype() == DType::f32 ? "float32" : "float64";
      if (logits == file.tensors.end()) precision = entry_.at("dtype");
    }
    const nlohmann::json& tol = entry_.at("tolerance").at(precision);
    const double atol = tol.at("atol"), rtol = tol.at("rtol");
    for (const std::string& tensor : names_) {
      const bool gradient = tensor.rfind("grad", 0) == 0;
      const std::string source = gradient ? "grad." + parameter_of(tensor) : tensor;
      const auto found = file.tensors.find(source);
      if (found == file.tensors.end()) {
        nlohmann::json r = result(tensor, "not_provided");
        r["reason"] = path + " has no " + source;
        out.push_back(r);
        continue;
      }
      std::vector<double> actual = values(found->second);
      if (tensor.rfind("grad_sample.", 0) == 0) {
        const Tensor& index = expected_.at("grad_index." + parameter_of(tensor));
        std::vector<double> sample;
        for (std::int64_t i = 0; i < index.numel(); ++i) {
          const auto at = static_cast<std::size_t>(index.at(i));
          sample.push_back(at < actual.size() ? actual[at] : std::numeric_limits<double>::quiet_NaN());
        }
        actual = sample;
      } else if (tensor.rfind("grad_norm.", 0) == 0) {
        double sum = 0.0;
        for (double a : actual) sum += a * a;
        actual = {std::sqrt(sum)};
      }
      const Tensor& expected = expected_.at(tensor);
      const double scale = max_abs(expected_.at(
          golden_scale_tensor(tensor, [&](const std::string& name) { return expected_.count(name) > 0; })));
      const Judged j = manifest_rule(actual, expected, atol, rtol, scale);
      nlohmann::json r = result(tensor, j.ratio <= 1.0 ? "pass" : "fail");
      r["precision"] = precision;
      r["ratio"] = std::isfinite(j.ratio) ? nlohmann::json(j.ratio) : nlohmann::json();
      r["tolerance"] = {{"rule", "manifest"}, {"atol", atol}, {"rtol", rtol}, {"scale", scale}};
      r["detail"] = j.detail;
      out.push_back(r);
    }
    // A gradient of a parameter the case does not have: a naming mistake must not pass unseen.
    for (const auto& [name, tensor] : file.tensors) {
      if (name.rfind("grad.", 0) != 0) continue;
      const std::string param = parameter_of(name);
      const bool known = std::any_of(names_.begin(), names_.end(), [&](const std::string& n) {
        return n.rfind("grad", 0) == 0 && parameter_of(n) == param;
      });
      if (known) continue;
      nlohmann::json r = result(name, "fail");
      r["precision"] = precision;
      r["detail"] = param + " is no parameter of this case's golden model (docs/conformance.md, parameter names)";
      out.push_back(r);
    }
  }

 private:
  const nlohmann::json& entry_;
  std::map<std::string, Tensor> expected_;
  std::string label_;
  std::vector<std::string> names_;
};

}  // namespace

std::string manifest_tolerance_version(const nlohmann::json& manifest) {
  nlohmann::json table = {{"cases", nlohmann::json::object()}, {"zero_gradient_rule", manifest.value("zero_gradient_rule", "")}};
  for (const nlohmann::json& entry : manifest.at("cases")) {
    table["cases"][entry.at("name").get<std::string>() + "/" + entry.at("dtype").get<std::string>()] = entry.at("tolerance");
  }
  return "sha256:" + sha256_hex(table.dump());
}

nlohmann::json check_outputs(const CheckOptions& options) {
  const nlohmann::json manifest = nlohmann::json::parse(read_file(options.golden_dir + "/MANIFEST.json"));
  if (!options.precision.empty() && options.precision != "float64" && options.precision != "float32") {
    throw std::invalid_argument("--precision " + options.precision + ": float64 or float32 (bfloat16 and float16 "
                                "outputs need the FlashAttention rule's baseline: the Python verdict, python/)");
  }
  nlohmann::json results = nlohmann::json::array();
  for (const nlohmann::json& entry : manifest.at("cases")) {
    if (entry.at("kind") != "model") continue;
    const std::string label = entry.at("name").get<std::string>() + "/" + entry.at("dtype").get<std::string>();
    if (!options.cases.empty() && std::none_of(options.cases.begin(), options.cases.end(), [&](const std::string& p) {
          return fnmatch(p.c_str(), label.c_str(), 0) == 0;
        })) {
      continue;
    }
    const CaseCheck check(entry, read_golden(options.golden_dir, entry, "expected").tensors);
    const std::string path = (std::filesystem::path(options.outputs_dir) /
                              (entry.at("name").get<std::string>() + "." + entry.at("dtype").get<std::string>() + ".safetensors"))
                                 .string();
    if (!std::filesystem::exists(path)) {
      check.all_not_provided("no file " + path, results);
      continue;
    }
    try {
      check.judge(read_safetensors(path), path, options.precision, results);
    } catch (const SafetensorsError& e) {
      throw std::invalid_argument(std::string(e.what()) + " (trepro check reads float64 and float32 outputs; "
                                  "for bfloat16 or float16 ones use the Python verdict, python/)");
    }
  }
  return results;
}

}  // namespace trepro::conform
