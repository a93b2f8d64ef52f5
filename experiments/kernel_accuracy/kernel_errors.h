// Error statistics of a backend's tensor against the float64 reference's, for
// `trepro compare-kernels` (accuracy_report.h): max abs, max rel, mean and max ulp, the ulp
// being the spacing of float32 at the reference value (so "1 ulp" is one float32 rounding).
// Relative and ulp errors are taken at max(|reference|, 1e-3 max |reference| of the tensor): an
// element that is a near-total cancellation of O(max) terms (a gradient of ~0, a probability of
// 1e-9) cannot be more accurate than those terms, and measuring it in its own ulps would only
// report the cancellation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "conformance/support/tolerances.h"
#include "core/backend.h"

namespace trepro::kernel_accuracy {

struct ErrorStats {
  double max_abs = 0.0;
  double max_rel = 0.0;  // over reference values != 0
  double sum_ulp = 0.0;
  double max_ulp = 0.0;
  std::int64_t count = 0;
  // With a tolerance (the conformance suite's, tolerances.h): the largest |got - expected| /
  // (atol + rtol |expected|); at most 1 is what the op tests accept.
  std::optional<testing::Tolerance> tolerance;
  double max_ratio = 0.0;

  // `floor`: the smallest magnitude relative errors and ulps are taken at.
  void add(double got, double expected, double floor);
  // Merges another tensor's statistics (for the model's gradients over every parameter).
  void merge(const ErrorStats& other);
  nlohmann::json to_json() const;
};

// Compares host copies element by element (any floating dtypes, same shape), at the floor
// 1e-3 max |expected| (or the given floor).
ErrorStats compare(const Tensor& got, const Tensor& expected);
ErrorStats compare(const Tensor& got, const Tensor& expected, double floor);
// With `tolerance`: max_ratio too.
ErrorStats compare(const Tensor& got, const Tensor& expected, testing::Tolerance tolerance);
double max_magnitude(const Tensor& t);

// The same tensors on the backend under test and on the reference: inputs are drawn once, rounded
// to the backend's dtype, and given to the reference exactly, so only the op's arithmetic differs.
class TwinTensors {
 public:
  TwinTensors(Backend& backend, Backend& reference) : backend_(backend), reference_(reference) {}
  void random(const std::string& name, const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
  void empty(const std::string& name, const Shape& shape);
  void zeros(const std::string& name, const Shape& shape);
  void host(const std::string& name, const Tensor& host_tensor);  // ids, labels, masks
  std::map<std::string, Tensor>& side(bool reference) { return reference ? on_reference_ : on_backend_; }

 private:
  Backend& backend_;
  Backend& reference_;
  std::map<std::string, Tensor> on_backend_, on_reference_;
};

// An output of a case: the op x direction that writes it and the longest sum it depends on, the
// accumulation length of its tolerance (tolerances.h), as the op's conformance test takes it.
struct CaseOutput {
  std::string name;
  OpDirection op;
  std::int64_t accumulation;
};

// One op at one shape: inputs, then `run` on each side, then the named outputs compared.
struct KernelCase {
  std::string op;
  std::string shape;
  std::function<void(TwinTensors&)> inputs;
  std::function<void(Backend&, std::map<std::string, Tensor>&)> run;
  std::vector<CaseOutput> outputs;
};

// Every op of the Backend interface over a grid of Transformer shapes.
std::vector<KernelCase> kernel_cases();

}  // namespace trepro::kernel_accuracy
