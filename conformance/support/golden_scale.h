// The golden manifest's "zero_gradient_rule", shared by the golden tests (golden_case.h) and
// `trepro check` (experiments/conformance_report/golden_check.h): gtest-free, so the CLI links it.
#pragma once

#include <functional>
#include <string>

namespace trepro {

// The tensor whose largest magnitude `name`'s atol is relative to: itself, except for a key-bias
// gradient (`...k_proj.bias`), identically zero in exact arithmetic: its key-weight gradient,
// else that gradient's sample (grad.P -> grad_sample.P). `present` says whether the expected file
// holds a tensor.
std::string golden_scale_tensor(const std::string& name, const std::function<bool(const std::string&)>& present);

}  // namespace trepro
