#include "experiments/kernel_accuracy/kernel_errors.h"

#include <algorithm>
#include <cmath>

#include "core/random_tensor.h"

namespace trepro::kernel_accuracy {

void ErrorStats::add(double got, double expected, double floor) {
  const double diff = std::abs(got - expected);
  // float32 spacing at the magnitude: 2^(e - 23) for normal numbers, 2^-149 below them.
  const double magnitude = std::max(std::abs(expected), floor);
  const double ulp = magnitude >= 0x1p-126 ? std::ldexp(1.0, std::ilogb(magnitude) - 23) : 0x1p-149;
  max_abs = std::max(max_abs, diff);
  if (magnitude > 0.0) max_rel = std::max(max_rel, diff / magnitude);
  sum_ulp += diff / ulp;
  max_ulp = std::max(max_ulp, diff / ulp);
  if (tolerance) {
    // As the op tests' all_close: a NaN fails (an infinite ratio), an exact match is 0.
    const double allowed = tolerance->atol + tolerance->rtol * std::abs(expected);
    const double ratio = diff == 0.0 ? 0.0 : diff / allowed;
    max_ratio = std::max(max_ratio, std::isnan(ratio) ? HUGE_VAL : ratio);
  }
  ++count;
}

nlohmann::json ErrorStats::to_json() const {
  nlohmann::json out = {{"max_abs", max_abs},
                        {"max_rel", max_rel},
                        {"mean_ulp", count > 0 ? sum_ulp / static_cast<double>(count) : 0.0},
                        {"max_ulp", max_ulp},
                        {"elements", count}};
  if (tolerance) {
    out["tolerance"] = {{"atol", tolerance->atol}, {"rtol", tolerance->rtol}};
    out["ratio"] = std::isfinite(max_ratio) ? nlohmann::json(max_ratio) : nlohmann::json();
    out["verdict"] = max_ratio <= 1.0 ? "pass" : "fail";
  }
  return out;
}

void ErrorStats::merge(const ErrorStats& other) {
  max_abs = std::max(max_abs, other.max_abs);
  max_rel = std::max(max_rel, other.max_rel);
  max_ulp = std::max(max_ulp, other.max_ulp);
  sum_ulp += other.sum_ulp;
  count += other.count;
}

double max_magnitude(const Tensor& t) {
  double largest = 0.0;
  for (std::int64_t i = 0; i < t.numel(); ++i) largest = std::max(largest, std::abs(t.at(i)));
  return largest;
}

ErrorStats compare(const Tensor& got, const Tensor& expected) { return compare(got, expected, 1e-3 * max_magnitude(expected)); }

ErrorStats compare(const Tensor& got, const Tensor& expected, double floor) {
  ErrorStats stats;
  for (std::int64_t i = 0; i < expected.numel(); ++i) stats.add(got.at(i), expected.at(i), floor);
  return stats;
}

ErrorStats compare(const Tensor& got, const Tensor& expected, testing::Tolerance tolerance) {
  ErrorStats stats;
  stats.tolerance = tolerance;
  const double floor = 1e-3 * max_magnitude(expected);
  for (std::int64_t i = 0; i < expected.numel(); ++i) stats.add(got.at(i), expected.at(i), floor);
  return stats;
}

void TwinTensors::random(const std::string& name, const Shape& shape, std::uint64_t seed, double lo, double hi) {
  on_backend_[name] = random_tensor(backend_, shape, seed, lo, hi);
  on_reference_[name] = reference_.upload(backend_.download(on_backend_[name]));
}

void TwinTensors::empty(const std::string& name, const Shape& shape) {
  on_backend_[name] = backend_.empty(shape, backend_.dtype());
  on_reference_[name] = reference_.empty(shape, reference_.dtype());
}

void TwinTensors::zeros(const std::string& name, const Shape& shape) {
  on_backend_[name] = backend_.zeros(shape, backend_.dtype());
  on_reference_[name] = reference_.zeros(shape, reference_.dtype());
}

void TwinTensors::host(const std::string& name, const Tensor& host_tensor) {
  on_backend_[name] = backend_.upload(host_tensor);
  on_reference_[name] = reference_.upload(host_tensor);
}

}  // namespace trepro::kernel_accuracy
