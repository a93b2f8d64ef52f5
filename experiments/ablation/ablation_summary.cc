#include "experiments/ablation/ablation_summary.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/atomic_file.h"
#include "experiments/run_info.h"

namespace trepro {

namespace {

using nlohmann::json;

// Steps averaged for the final training loss: enough to smooth batch-to-batch noise.
constexpr std::size_t kFinalLossWindow = 50;

json variant_entry(const AblationVariant& variant, const std::string& out_dir) {
  const std::filesystem::path report_path = std::filesystem::path(out_dir) / variant.name / "report.json";
  json entry = {{"name", variant.name},
                {"set", variant.set},
                {"config_hash", config_hash(variant.config)},
                {"report", (std::filesystem::path(variant.name) / "report.json").string()}};
  if (!std::filesystem::exists(report_path)) {
    entry["status"] = "not_run";
    return entry;
  }
  const json report = json::parse(read_file(report_path.string()));
  entry["status"] = report.at("status");
  const json& steps = report.at("steps");
  entry["steps"] = steps.empty() ? json(0) : steps.back().at("step");
  if (!steps.empty()) entry["final_training_loss"] = final_training_loss(steps, kFinalLossWindow);
  const json& best = report.at("best");
  if (best.at("step").get<std::int64_t>() > 0) {
    const double loss = best.at("validation_loss").get<double>();
    entry["best_step"] = best.at("step");
    entry["best_validation_loss"] = loss;
    entry["best_validation_perplexity"] = std::exp(loss);
  }
  for (const char* key : {"perplexity", "bleu", "bleu_signature", "bleu_tok_lc"}) {
    if (report.at("test").contains(key)) entry[std::string("test_") + key] = report["test"][key];
  }
  entry["target_tokens_per_second"] = report.at("timings").at("target_tokens_per_second");
  entry["train_seconds"] = report.at("timings").at("train_seconds");
  return entry;
}

}  // namespace

double final_training_loss(const json& steps, std::size_t window) {
  const std::size_t count = std::min(window, steps.size());
  if (count == 0) return 0.0;
  double sum = 0.0;
  for (std::size_t i = steps.size() - count; i < steps.size(); ++i) sum += steps[i].at("loss").get<double>();
  return sum / static_cast<double>(count);
}

json ablation_summary(const AblationSpec& spec, const std::string& spec_path, const std::string& out_dir) {
  json variants = json::array();
  for (const AblationVariant& variant : spec.variants) variants.push_back(variant_entry(variant, out_dir));
  return {{"schema_version", 1},
          {"kind", "ablation"},
          {"created", utc_now()},
          {"git_commit", git_commit()},
          {"name", spec.name},
          {"description", spec.description},
          {"spec", spec_path},
          {"base", spec.base_path},
          {"overrides", spec.overrides},
          {"final_training_loss_window", kFinalLossWindow},
          {"variants", std::move(variants)}};
}

}  // namespace trepro
