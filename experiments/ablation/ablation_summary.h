// The summary report of an ablation (DIR/summary.json, validated against
// reports/ablation_schema.json): per variant its overrides and the headline numbers of its run
// report DIR/<variant>/report.json (final training loss, best validation loss and perplexity,
// test perplexity and BLEU when decoding has added it, throughput), so variants compare in
// one table; the curves stay in the run reports.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "experiments/ablation/ablation_spec.h"

namespace trepro {

// Reads the variants' reports under `out_dir` (a variant not run yet is listed with status
// "not_run") and returns the summary.
nlohmann::json ablation_summary(const AblationSpec& spec, const std::string& spec_path, const std::string& out_dir);

// Mean training loss of the last `window` steps of a run report's "steps" (all of them when
// fewer): the end of a noisy curve in one number.
double final_training_loss(const nlohmann::json& steps, std::size_t window);

}  // namespace trepro
