// The report of `trepro compare-kernels`: how accurate the fast kernels are. For every op and
// shape of kernel_cases.cc, and for a whole model (logits, loss, every gradient), the error of the
// backend against reference-f64 on the same inputs (rounded once to the backend's dtype): max abs,
// max rel, mean and max ulp of float32 (kernel_errors.h). Beside them, rows of precision
// "bf16-emulated": the linear op and the model on the host emulation of the cuda backend's bf16
// mode (bf16_emulation.h), i.e. what train.precision "bf16" costs, measured without a GPU.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace trepro::kernel_accuracy {

// `precision` names the precision already set on `backend` (float32 or bf16), for the rows.
nlohmann::json accuracy_report(Backend& backend, const std::string& precision);
// The report as one Markdown table.
std::string accuracy_markdown(const nlohmann::json& report);

}  // namespace trepro::kernel_accuracy
